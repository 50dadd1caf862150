/*
 * view_expr.c -- -e expressions checked before any work.
 *
 * htslib 1.16's hts_filter_init only copies the text: the expression is parsed
 * at each evaluation, and a failure there drops the read, so `-e 'mapq>'`
 * gives no records and exit 0. Its regular expressions compile at the first
 * evaluation; one that does not compile is still counted as compiled, and the
 * next record runs regexec on it: `-e 'qname=~"["'` crashes (samtools too).
 * So here every string literal after =~ or !~ is compiled first, and the
 * expression is evaluated once on probe records: a syntax error fails on all
 * of them, while a valid expression passes on the one whose tags have the
 * types the expression uses them with (each tag it names absent, a string or
 * a number). Main thread, at option parsing.
 */
#include <htslib/hts_expr.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>

#include "view.h"

/* Tags named as [XX] that get each type in turn: 3^6 = 729 probes at most. */
#define PROBE_TAGS 6

/* The string literal at s (at its opening quote), unescaped as htslib reads it, into k. */
static const char *literal(const char *s, kstring_t *k)
{
    ks_clear(k);
    for (s++; *s && *s != '"'; s++) {
        if (*s == '\\' && s[1]) {
            s++;
            char c = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
            if (c == *s && *s != '"' && *s != '\\' && kputc('\\', k) < 0)
                return NULL;
            if (kputc(c, k) < 0)
                return NULL;
        } else if (kputc(*s, k) < 0) {
            return NULL;
        }
    }
    return *s == '"' ? s + 1 : NULL;
}

/* Every literal regex (after =~ or !~) compiles. 0, or -1 after a usage message. */
static int check_regexes(const char *expr)
{
    kstring_t k = KS_INITIALIZE;
    int rc = 0;
    for (const char *p = expr; *p && rc == 0; p++) {
        if (*p == '"') { /* skip other literals: "=~" inside one is text */
            const char *e = literal(p, &k);
            if (!e)
                break; /* unterminated: the parse check says so */
            p = e - 1;
            continue;
        }
        if ((*p != '=' && *p != '!') || p[1] != '~')
            continue;
        const char *q = p + 2;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '"' || !literal(q, &k))
            continue; /* not a literal: compiled from the record's values, at run time */
        regex_t re;
        int ec = regcomp(&re, k.s ? k.s : "", REG_EXTENDED | REG_NOSUB);
        if (ec != 0) {
            char why[256];
            regerror(ec, &re, why, sizeof(why));
            fprintf(stderr,
                    "seqshard view: -e '%s': the regular expression \"%s\" does not "
                    "compile (%s); fix it (POSIX extended syntax)\n",
                    expr, k.s, why);
            rc = -1;
        } else {
            regfree(&re);
        }
    }
    free(k.s);
    return rc;
}

/* The distinct [XX] tags the expression names; -1 when more than max. */
static int named_tags(const char *expr, char tags[][2], int max)
{
    int n = 0;
    for (const char *p = strchr(expr, '['); p; p = strchr(p + 1, '[')) {
        if (!p[1] || !p[2] || p[3] != ']')
            continue;
        int seen = 0;
        for (int i = 0; i < n && !seen; i++)
            seen = tags[i][0] == p[1] && tags[i][1] == p[2];
        if (seen)
            continue;
        if (n == max)
            return -1;
        tags[n][0] = p[1], tags[n][1] = p[2];
        n++;
    }
    return n;
}

/* A mapped read on contig 0 with tag i absent, a string or a number as (code / 3^i) % 3. */
static int probe_record(bam1_t *b, char tags[][2], int n, int code)
{
    uint32_t cigar = 1 << BAM_CIGAR_SHIFT | BAM_CMATCH;
    if (bam_set1(b, 1, "r", BAM_FPAIRED, 0, 0, 60, 1, &cigar, 0, 10, 0, 1, "A", "I", 16) < 0)
        return -1;
    for (int i = 0; i < n; i++, code /= 3) {
        int32_t zero = 0;
        int r = code % 3 == 1   ? bam_aux_append(b, tags[i], 'Z', 1, (const uint8_t *)"")
                : code % 3 == 2 ? bam_aux_append(b, tags[i], 'i', 4, (const uint8_t *)&zero)
                                : 0;
        if (r < 0)
            return -1;
    }
    return 0;
}

/*
 * Whether the expression evaluates without an error on some probe record: 1,
 * 0 never, -1 out of memory. A fresh filter each time, so a regex that failed
 * in one probe is never run again.
 */
static int evaluates(const char *expr, char tags[][2], int n)
{
    sam_hdr_t *h = sam_hdr_parse(22, "@SQ\tSN:c\tLN:1000000\n");
    bam1_t *b = bam_init1();
    int probes = 1, ok = h && b ? 0 : -1;
    for (int i = 0; i < n; i++)
        probes *= 3;
    for (int code = 0; ok == 0 && code < probes; code++) {
        hts_filter_t *f = hts_filter_init(expr);
        if (!f || probe_record(b, tags, n, code) < 0)
            ok = -1;
        else if (sam_passes_filter(h, b, f) >= 0)
            ok = 1;
        hts_filter_free(f);
    }
    bam_destroy1(b);
    sam_hdr_destroy(h);
    return ok;
}

int vw_expr_check(const char *expr)
{
    if (check_regexes(expr) < 0)
        return -1;
    char tags[PROBE_TAGS][2];
    int n = named_tags(expr, tags, PROBE_TAGS);
    if (n < 0)
        return 0; /* too many tags to try every type: left to the evaluation, as samtools */
    /* htslib prints its parse complaints on stderr: the probes must not add lines there */
    int saved = ss_quiet_begin();
    int ok = evaluates(expr, tags, n);
    ss_quiet_end(saved);
    if (ok < 0) {
        fprintf(stderr, "seqshard view: out of memory checking -e '%s'\n", expr);
        return -1;
    }
    if (ok == 0) {
        fprintf(stderr,
                "seqshard view: -e '%s': not a valid filter expression (it does not "
                "parse, or compares or computes values of the wrong type); see "
                "FILTER EXPRESSIONS in samtools view's manual\n",
                expr);
        return -1;
    }
    return 0;
}

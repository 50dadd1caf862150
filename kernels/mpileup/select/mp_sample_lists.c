/*
 * mp_sample_lists.c -- bcftools mpileup's -s/-S (samples to keep or, after
 * '^', to drop, each optionally renamed by a second word) and -G (read groups
 * to keep or drop: "RG", "RG FILE" or "* FILE", optionally with a new sample
 * name), read as bam_sample.c 1.16 reads them: empty lines skipped, words split
 * at unescaped white space, a backslash escaping the next character, white
 * space skipped before every word but the first, and an empty list (an empty
 * file, blank lines only) the same as no option. A later -s/-S line for the
 * same sample renames it again; a -G line giving a read group a second,
 * different sample is refused.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_select.h"

/*
 * Set key -> val. When key is there: replace its value (replace) or keep it.
 * 1 when it was there with another value, 0, -1 OOM.
 */
static int map_set(mp_namemap_t *m, const char *key, const char *val, int replace)
{
    int i;
    if (khash_str2int_get(m->idx, key, &i) == 0) {
        int other = strcmp(m->vals[i], val) != 0;
        if (other && replace) {
            char *copy = strdup(val);
            if (!copy)
                return -1;
            free(m->vals[i]);
            m->vals[i] = copy;
        }
        return other;
    }
    char **v = realloc(m->vals, (size_t)(m->n + 1) * sizeof(*v));
    if (!v)
        return -1;
    m->vals = v;
    char *k = strdup(key);
    if (!k || !(v[m->n] = strdup(val)) || khash_str2int_set(m->idx, k, m->n) < 0) {
        free(k);
        return -1;
    }
    m->n++;
    return 0;
}

const char *mp_namemap_get(const mp_namemap_t *m, const char *key)
{
    int i;
    if (!m->idx || khash_str2int_get(m->idx, key, &i) != 0)
        return NULL;
    return m->vals[i];
}

void mp_namemap_free(mp_namemap_t *m)
{
    if (m->idx)
        khash_str2int_destroy_free(m->idx);
    for (int i = 0; i < m->n; i++)
        free(m->vals[i]);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/*
 * The next word of *p into w, white space before it skipped when skip_ws. As
 * in bam_sample.c, w->l is reset but not its text: a word of no characters
 * leaves w->s holding the last word written into w (NULL if none ever was),
 * and the callers use that text where bcftools does.
 */
static void next_word(const char **p, kstring_t *w, int skip_ws)
{
    const char *s = *p;
    int escaped = 0;
    w->l = 0;
    while (skip_ws && *s && isspace((unsigned char)*s))
        s++;
    for (; *s; s++) {
        if (*s == '\\' && !escaped) {
            escaped = 1;
            continue;
        }
        if (isspace((unsigned char)*s) && !escaped)
            break;
        kputc(*s, w);
        escaped = 0;
    }
    *p = s;
}

/* Up to n words of row into f[0..n-1]: a word is read only when text is left after the last. */
static void row_words(const char *row, kstring_t *f, int n)
{
    const char *p = row;
    for (int k = 0; k < n; k++)
        f[k].l = 0;
    next_word(&p, &f[0], 0);
    for (int k = 1; k < n && *p; k++)
        next_word(&p, &f[k], 1);
}

/*
 * A row whose first word is empty (it starts with white space) before any row
 * had one: bcftools 1.16 crashes on it (later such rows reuse the last first
 * word, as read above). -2, said.
 */
static int no_first_word(const char *opt, const char *arg, int row)
{
    ss_error("%s %s: entry %d is empty or starts with white space and no earlier entry names a %s, "
             "which bcftools 1.16 crashes on; remove the white space before the name",
             opt, arg, row + 1, strcmp(opt, "-G") ? "sample" : "read group");
    return -2;
}

/* The lines of file (is_file) or the words of a comma list, as hts_readlist gives them. */
static char **read_list(const char *list, int is_file, int *n, const char *opt)
{
    char **rows = hts_readlist(list, is_file, n);
    if (!rows)
        ss_error("%s %s: cannot read it%s", opt, list,
                 is_file ? "; check the file exists and is readable" : "");
    return rows;
}

static void free_rows(char **rows, int n)
{
    for (int i = 0; i < n; i++)
        free(rows[i]);
    free(rows);
}

int mp_sample_list_read(mp_namemap_t *m, int *include, const char *arg, int is_file)
{
    const char *list = arg;
    const char *opt = is_file ? "-S" : "-s";
    *include = list[0] != '^';
    list += !*include;
    int n = 0;
    char **rows = read_list(list, is_file, &n, opt);
    if (!rows)
        return -1;
    kstring_t w[2] = {KS_INITIALIZE, KS_INITIALIZE};
    int rc = n == 0 || (m->idx = khash_str2int_init()) ? 0 : -1; /* empty: no list */
    for (int i = 0; i < n && rc == 0; i++) {
        row_words(rows[i], w, 2);
        if (!w[0].s)
            rc = no_first_word(opt, arg, i);
        else if (map_set(m, w[0].s, w[1].l ? w[1].s : w[0].s, 1) < 0)
            rc = -1;
    }
    free_rows(rows, n);
    free(w[0].s), free(w[1].s);
    if (rc == -1)
        ss_error("out of memory reading the sample list %s", arg);
    return rc < 0 ? -1 : 0;
}

int mp_rg_list_read(mp_namemap_t *m, int *include, const char *arg)
{
    const char *list = arg;
    *include = list[0] != '^';
    list += !*include;
    int n = 0;
    char **rows = read_list(list, 1, &n, "-G");
    if (!rows)
        return -1;
    kstring_t f[3] = {KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE};
    int rc = n == 0 || (m->idx = khash_str2int_init()) ? 0 : -1; /* empty: no list */
    for (int i = 0; i < n && rc == 0; i++) {
        row_words(rows[i], f, 3);
        if (f[2].l) { /* ID FILE SAMPLE: the key is "ID\tFILE" */
            kputc('\t', &f[0]);
            kputs(f[1].s, &f[0]);
            f[1].l = 0;
            kputs(f[2].s, &f[1]);
        }
        if (!f[0].s) {
            rc = no_first_word("-G", arg, i);
            break;
        }
        /* "\t": keep the header's sample name */
        rc = map_set(m, f[0].s, f[1].l ? f[1].s : "\t", 0);
        if (rc > 0) {
            ss_error("-G %s: the read group \"%s\" is assigned to two different samples; "
                     "keep one of its lines",
                     arg, f[0].s);
            rc = -2;
        }
    }
    free_rows(rows, n);
    free(f[0].s), free(f[1].s), free(f[2].s);
    if (rc == -1)
        ss_error("out of memory reading the read-group list %s", arg);
    return rc == 0 ? 0 : -1;
}

int mp_rg_keep(const mp_samples_t *s, const char *fname, const char *rg, const char **name)
{
    kstring_t key = KS_INITIALIZE;
    const char *v = mp_namemap_get(&s->rg_list, rg);
    if (!v) {
        ksprintf(&key, "%s\t%s", rg, fname);
        v = mp_namemap_get(&s->rg_list, key.s);
    }
    if (!v) {
        key.l = 0;
        ksprintf(&key, "*\t%s", fname);
        v = mp_namemap_get(&s->rg_list, key.s);
    }
    free(key.s);
    if ((!v && s->rg_include) || (v && !s->rg_include))
        return 0;
    if (v && v[0] != '\t')
        *name = v;
    return 1;
}

/*
 * diff_words.c -- a read's SNP words: mp_snp_words_simd (16 bases a step) and
 * mp_snp_words_scalar against a transcription of what bcftools 1.16's
 * bcf_call_glfgen (bam2bcf.c) computes per base of a SNP column: the quality
 * lowered to a neighbour's plus --delta-BQ, the --min-BQ test, the --max-BQ
 * cap, the mapping quality (255 read as 20, capped at capQ 60), errmod's key
 * (quality capped by seqQ 99, mapQ and 63, floor 4; strand; base) and the
 * distance to the read's nearer end, capped at 25. A word holds those fields
 * (mp_words.h), so the transcription's fields, packed, must be the word; an
 * '=' base is packed as MP_WORD_EQ, which the column reads as its reference,
 * as bcftools' seq_nt16_int[b ? b : ref_base] does.
 *
 * Reads of 1..1000 bases, every 4-bit code (N and '=' included), qualities
 * 0..93 and 255; MAPQ 0..255 on both strands; --delta-BQ from negative past
 * the byte range, --min-BQ and --max-BQ at and past it.
 */
#include <stdlib.h>
#include <string.h>

#include "../../kernels/mpileup/likelihood/mp_words.h"
#include "base/ss_exact_fp.h"
#include "diff_routines.h"

#define MAX_LEN  1000
#define SLACK    64
#define CAPQ     60 /* bcf_call_init's capQ */
#define DEF_MAPQ 20 /* bam2bcf.c: what MAPQ 255 counts as */
#define CAP_DIST 25

typedef struct {
    int len, rev, raw_mapq, delta, min_bq, max_bq;
    uint8_t seq[(MAX_LEN + SLACK) / 2], qual[MAX_LEN + SLACK];
} words_case_t;

/* ---- bcftools 1.16, transcribed: one base of bcf_call_glfgen's SNP branch -------------- */

static int bt_mapq(int raw)
{
    int mapQ = raw < 255 ? raw : DEF_MAPQ;
    return mapQ < CAPQ ? mapQ : CAPQ;
}

/* The word bcftools' fields of base qpos make; 0 where it skips the base (--min-BQ). */
static uint32_t bt_word(const words_case_t *c, int qpos)
{
    const uint8_t *qual = c->qual;
    int q = qual[qpos];
    if (qpos > 0 && q > qual[qpos - 1] + c->delta)
        q = qual[qpos - 1] + c->delta;
    if (qpos + 1 < c->len && q > qual[qpos + 1] + c->delta)
        q = qual[qpos + 1] + c->delta;
    if (q < c->min_bq)
        return 0;
    if (q > c->max_bq)
        q = c->max_bq;
    int baseQ = q, seqQ = 99, mapQ = bt_mapq(c->raw_mapq);
    if (q > seqQ)
        q = seqQ;
    if (q > mapQ)
        q = mapQ;
    if (q > 63)
        q = 63;
    if (q < 4)
        q = 4;
    int nt16 = bam_seqi(c->seq, qpos), b = nt16 ? seq_nt16_int[nt16] : MP_WORD_EQ;
    int min_dist = c->len - 1 - qpos;
    if (min_dist > qpos)
        min_dist = qpos;
    if (min_dist > CAP_DIST)
        min_dist = CAP_DIST;
    return (uint32_t)(q << 5 | c->rev << 4 | b) | (uint32_t)min_dist << 11 | (uint32_t)baseQ << 16 |
           (uint32_t)mapQ << 24;
}

/* ---- cases ----------------------------------------------------------------------------- */

static int pick_len(diff_rng_t *r)
{
    switch (diff_rng_below(r, 10)) {
    case 0:
    case 1:
    case 2:
    case 3:
        return diff_rng_range(r, 1, 40);
    case 4:
    case 5:
    case 6:
        return diff_rng_range(r, 40, 160);
    default:
        return diff_rng_range(r, 160, MAX_LEN);
    }
}

/* One base's quality: typical, anything printable (0..93), 255 (no quality), or 0. */
static uint8_t pick_qual(diff_rng_t *r, int mode)
{
    int k = (int)diff_rng_below(r, 16);
    if (mode == 0)
        return (uint8_t)(k == 0 ? diff_rng_range(r, 0, 93) : diff_rng_range(r, 25, 41));
    if (mode == 1)
        return (uint8_t)diff_rng_range(r, 0, 93);
    if (mode == 2)
        return k < 12 ? 255 : (uint8_t)diff_rng_range(r, 0, 93);
    return (uint8_t)(k < 4 ? 0 : k < 8 ? 255 : diff_rng_range(r, 0, 93));
}

/* Settings: bcftools' defaults, its presets' (-Q5 --max-BQ 50 --delta-BQ 10), and the edges. */
static void pick_settings(diff_rng_t *r, words_case_t *c)
{
    static const int deltas[] = {30, 10, 0, 1, 254, 255, 256, 1000};
    static const int mins[] = {1, 5, 13, 0, 30, 255, 256, 100000};
    static const int maxs[] = {60, 50, 0, 4, 99, 255, 256, 100000};
    int k = (int)diff_rng_below(r, 4);
    c->delta = k == 0 ? diff_rng_range(r, -40, 400) : deltas[diff_rng_below(r, 8)];
    c->min_bq = diff_rng_one_in(r, 4) ? diff_rng_range(r, 0, 300) : mins[diff_rng_below(r, 8)];
    c->max_bq = diff_rng_one_in(r, 4) ? diff_rng_range(r, 0, 300) : maxs[diff_rng_below(r, 8)];
    static const int mapqs[] = {0, 60, 255, 254, 59, 61, 20, 1};
    c->raw_mapq = diff_rng_one_in(r, 2) ? diff_rng_range(r, 0, 255) : mapqs[diff_rng_below(r, 8)];
    c->rev = (int)diff_rng_below(r, 2);
}

static void make_case(diff_rng_t *r, words_case_t *c)
{
    memset(c, 0, sizeof(*c));
    c->len = pick_len(r);
    pick_settings(r, c);
    int qmode = (int)diff_rng_below(r, 4), nmode = (int)diff_rng_below(r, 4);
    for (int i = 0; i < c->len; i++) {
        /* ACGT, every code, many N (15), or many '=' (0) */
        int code = nmode == 0             ? (int[]){1, 2, 4, 8}[diff_rng_below(r, 4)]
                   : nmode == 1           ? (int)diff_rng_below(r, 16)
                   : diff_rng_below(r, 3) ? (nmode == 2 ? 15 : 0)
                                          : (int)diff_rng_below(r, 16);
        c->seq[i >> 1] |= (uint8_t)(code << ((~i & 1) << 2));
        c->qual[i] = pick_qual(r, qmode);
    }
}

/* ---- comparison ------------------------------------------------------------------------ */

typedef struct {
    const char *path;
    int base;
    uint32_t ours, theirs;
} words_diff_t;

/* The first base where a path's word is not bcftools'; 0 when none. */
static int words_differ(const words_case_t *c, words_diff_t *d)
{
    uint32_t want[MAX_LEN + SLACK], got[MAX_LEN + SLACK];
    mp_word_src_t s = {c->seq,   c->qual,   c->len,   c->rev, bt_mapq(c->raw_mapq),
                       c->delta, c->min_bq, c->max_bq};
    for (int i = 0; i < c->len; i++)
        want[i] = bt_word(c, i);
    for (int path = 0; path < 2; path++) {
        if (path == 0)
            mp_snp_words_scalar(&s, got);
        else if (mp_snp_words_simd(&s, got) < 0)
            continue; /* this CPU or setting takes the scalar path */
        for (int i = 0; i < c->len; i++)
            if (got[i] != want[i]) {
                *d = (words_diff_t){path ? "simd" : "scalar", i, got[i], want[i]};
                return 1;
            }
    }
    return 0;
}

/* Drops bases from either end while the case still differs. */
static void words_shrink(words_case_t *c)
{
    words_diff_t d;
    for (int progress = 1; progress;) {
        progress = 0;
        for (int end = 0; end < 2 && c->len > 1; end++) {
            words_case_t t = *c;
            t.len--;
            memset(t.seq, 0, sizeof t.seq); /* repacked, nothing past the end */
            for (int i = 0; i < t.len; i++)
                t.seq[i >> 1] |= (uint8_t)(bam_seqi(c->seq, i + !end) << ((~i & 1) << 2));
            if (end == 0)
                memmove(t.qual, t.qual + 1, (size_t)t.len);
            if (words_differ(&t, &d)) {
                *c = t;
                progress = 1;
            }
        }
    }
}

/* The word's fields (mp_words.h), for the report. */
static void print_word(FILE *f, const char *who, uint32_t w)
{
    fprintf(f, "  %-8s %08x: key %03x (q %d, rev %d, base %d), dist %d, baseQ %d, mapQ %d\n", who,
            w, MP_WORD_KEY(w), MP_WORD_KEY(w) >> 5, MP_WORD_REV(w), MP_WORD_BASE(w),
            MP_WORD_DIST(w), MP_WORD_BASEQ(w), MP_WORD_MAPQ(w));
}

/* The read as a unit test's mp_word_src_t takes it: packed seq, quals, settings. */
static void print_case(FILE *f, const words_case_t *c)
{
    fputs("  /* ", f);
    for (int i = 0; i < c->len; i++)
        fputc(seq_nt16_str[bam_seqi(c->seq, i)], f);
    fputs(" */\n  uint8_t seq[] = {", f);
    for (int i = 0; i < (c->len + 1) / 2; i++)
        fprintf(f, "%s0x%02x", i ? (i % 12 ? ", " : ",\n      ") : "", c->seq[i]);
    fputs("};\n  uint8_t qual[] = {", f);
    for (int i = 0; i < c->len; i++)
        fprintf(f, "%s%d", i ? (i % 16 ? ", " : ",\n      ") : "", c->qual[i]);
    fprintf(f, "};\n  /* raw MAPQ %d */\n", c->raw_mapq);
    fprintf(f, "  mp_word_src_t s = {seq, qual, %d, %d, %d, %d, %d, %d};\n", c->len, c->rev,
            bt_mapq(c->raw_mapq), c->delta, c->min_bq, c->max_bq);
}

void diff_snp_words(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    words_case_t *c = malloc(sizeof(*c));
    if (!c) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    words_diff_t d;
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "snp-words", i);
        make_case(&r, c);
        t->cases++;
        if (!words_differ(c, &d))
            continue;
        words_shrink(c);
        words_differ(c, &d);
        if (diff_report(t, "snp-words", seed, i, "%s path, base %d of %d (shrunk)", d.path, d.base,
                        c->len)) {
            print_word(t->log, "ours", d.ours);
            print_word(t->log, "bcftools", d.theirs);
            print_case(t->log, c);
        }
    }
    free(c);
}

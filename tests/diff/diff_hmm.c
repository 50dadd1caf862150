/*
 * diff_hmm.c -- the alignment HMM two ways: the indel model's forward-only
 * score (pl_baq_glocal_score) against htslib's probaln_glocal, and BAQ
 * (pl_baq_batch on every path this CPU runs) against htslib's sam_prob_realn.
 *
 * Parameters are those the callers pass (bcftools' indel model: d 1e-4,
 * e 1e-2, band indel + 3; long reads: 1e-3, 1e-1; BAQ: 1e-3 or 1e-7, 0.1)
 * and random ones; references have homopolymers and STRs with an indel
 * planted in them, reads end in indels, qualities run 0-255, bands 1-60.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts.h>
#include <htslib/sam.h>

#include "../../kernels/pileup/baq.h"
#include "diff_routines.h"
#include "diff_seq.h"

#define MAX_LEN 1000
#define MAX_BATCH 9

typedef struct {
    uint8_t ref[MAX_LEN + 64], query[MAX_LEN + 128], qual[MAX_LEN + 128];
    int l_ref, l_query;
    probaln_par_t par;
} score_case_t;

static void score_params(diff_rng_t *r, score_case_t *c, int indel)
{
    int len = abs(indel), k = (int)diff_rng_below(r, 8);
    if (k < 4)
        c->par = (probaln_par_t){1e-4f, 1e-2f, len + 3};
    else if (k == 4)
        c->par = (probaln_par_t){1e-3f, 1e-1f, len + 3};
    else if (k == 5)
        c->par = (probaln_par_t){1e-3f, 0.1f, diff_rng_range(r, 1, 60)};
    else if (k == 6)
        c->par = (probaln_par_t){1e-7f, 0.1f, diff_rng_range(r, 1, 60)};
    else
        c->par = (probaln_par_t){(float)(diff_rng_unit(r) * 0.4), (float)diff_rng_unit(r),
                                 diff_rng_range(r, 1, 60)};
}

static void score_make(diff_rng_t *r, score_case_t *c)
{
    c->l_ref = diff_seq_length(r, MAX_LEN);
    diff_seq_ref(r, c->ref, c->l_ref);
    int indel;
    c->l_query = diff_seq_query(r, c->ref, c->l_ref, c->query, MAX_LEN + 100,
                                diff_rng_one_in(r, 5) ? 60 : 8, &indel);
    diff_seq_quals(r, c->qual, c->l_query);
    score_params(r, c, indel);
}

/* 1 when ours and htslib's score differ on c; *ours, *theirs get both. */
static int score_differs(pl_baq_t *q, const score_case_t *c, int *ours, int *theirs)
{
    *theirs = probaln_glocal(c->ref, c->l_ref, c->query, c->l_query, c->qual, &c->par, NULL, NULL);
    *ours = pl_baq_glocal_score(q, c->ref, c->l_ref, c->query, c->l_query, c->qual, &c->par);
    return *ours != *theirs;
}

/* Drops bases from either end of ref and query while the case still differs. */
static void score_shrink(pl_baq_t *q, score_case_t *c)
{
    int a, b, progress = 1;
    while (progress) {
        progress = 0;
        for (int what = 0; what < 4; what++) {
            score_case_t t = *c;
            if (what < 2 && t.l_ref > 1) {
                if (what == 0)
                    memmove(t.ref, t.ref + 1, (size_t)--t.l_ref);
                else
                    t.l_ref--;
            } else if (what >= 2 && t.l_query > 1) {
                if (what == 2) {
                    memmove(t.query, t.query + 1, (size_t)--t.l_query);
                    memmove(t.qual, t.qual + 1, (size_t)t.l_query);
                } else {
                    t.l_query--;
                }
            } else {
                continue;
            }
            if (score_differs(q, &t, &a, &b)) {
                *c = t;
                progress = 1;
            }
        }
    }
}

void diff_hmm_score(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    pl_baq_t *q = pl_baq_init(PL_BAQ_SCALAR);
    score_case_t *c = malloc(sizeof(*c));
    if (!q || !c) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "hmm-score", i);
        score_make(&r, c);
        int ours, theirs;
        t->cases++;
        if (!score_differs(q, c, &ours, &theirs))
            continue;
        score_shrink(q, c);
        score_differs(q, c, &ours, &theirs);
        if (diff_report(t, "hmm-score", seed, i, "ours %d, htslib %d; shrunk: d %.9g e %.9g bw %d",
                        ours, theirs, c->par.d, c->par.e, c->par.bw)) {
            diff_seq_print(t->log, "ref", c->ref, c->l_ref, 0);
            diff_seq_print(t->log, "query", c->query, c->l_query, 0);
            diff_seq_print(t->log, "qual", c->qual, c->l_query, 1);
        }
    }
    free(c);
    pl_baq_destroy(q);
}

/* ---- BAQ ------------------------------------------------------------------------------- */

#define WIN 1400 /* the reference window reads are placed in */

/* A read at pos of ref[] with a CIGAR of soft clips, matches and the planted indel. */
static bam1_t *baq_read(diff_rng_t *r, const char *ref, int idx)
{
    uint8_t codes[WIN], query[MAX_LEN + 128];
    int l_win = diff_rng_range(r, 1, 600), pos = diff_rng_range(r, 0, WIN - l_win);
    static const int8_t nt[256] = {['A'] = 0, ['C'] = 1, ['G'] = 2, ['T'] = 3};
    for (int i = 0; i < l_win; i++)
        codes[i] = ref[pos + i] == 'N' ? 4 : (uint8_t)nt[(uint8_t)ref[pos + i]];
    int indel, lq = diff_seq_query(r, codes, l_win, query, MAX_LEN, diff_rng_one_in(r, 5) ? 40 : 6,
                                   &indel);
    /* a CIGAR that matches how the query was made: M, the indel where it went, M */
    uint32_t cig[6];
    int nc = 0, clip = diff_rng_one_in(r, 4) && lq > 2 ? diff_rng_range(r, 1, lq / 2) : 0;
    int m1 = diff_rng_range(r, 0, lq - clip), m2;
    if (clip)
        cig[nc++] = bam_cigar_gen(clip, BAM_CSOFT_CLIP);
    if (m1)
        cig[nc++] = bam_cigar_gen(m1, BAM_CMATCH);
    if (indel > 0 && indel <= lq - clip - m1) {
        cig[nc++] = bam_cigar_gen(indel, BAM_CINS);
        m2 = lq - clip - m1 - indel;
    } else {
        if (indel < 0)
            cig[nc++] = bam_cigar_gen(-indel, BAM_CDEL);
        m2 = lq - clip - m1;
    }
    if (m2)
        cig[nc++] = bam_cigar_gen(m2, BAM_CMATCH);
    if (bam_cigar2rlen(nc, cig) == 0)
        cig[nc++] = bam_cigar_gen(1, BAM_CMATCH), lq++, query[lq - 1] = 0;
    char seq[MAX_LEN + 130], qual[MAX_LEN + 130], name[24];
    uint8_t qv[MAX_LEN + 130];
    diff_seq_quals(r, qv, lq);
    for (int i = 0; i < lq; i++)
        seq[i] = "ACGTN"[query[i] < 5 ? query[i] : 4], qual[i] = (char)(qv[i] < 94 ? qv[i] : 93);
    snprintf(name, sizeof name, "r%d", idx);
    bam1_t *b = bam_init1();
    if (!b || bam_set1(b, strlen(name), name, diff_rng_one_in(r, 2) ? BAM_FREVERSE : 0, 0, pos,
                       60, (size_t)nc, cig, -1, -1, 0, (size_t)lq, seq, qual, 0) < 0) {
        fprintf(stderr, "ssdiff: cannot build a read\n");
        exit(2);
    }
    return b;
}

static int same_record(const bam1_t *a, const bam1_t *b)
{
    return a->l_data == b->l_data && memcmp(a->data, b->data, (size_t)a->l_data) == 0;
}

static void print_read(FILE *f, const bam1_t *b)
{
    fprintf(f, "  read %s pos %lld cigar ", bam_get_qname(b), (long long)b->core.pos);
    for (uint32_t k = 0; k < b->core.n_cigar; k++)
        fprintf(f, "%d%c", bam_cigar_oplen(bam_get_cigar(b)[k]), bam_cigar_opchr(bam_get_cigar(b)[k]));
    fputs(" seq ", f);
    for (int i = 0; i < b->core.l_qseq; i++)
        fputc(seq_nt16_str[bam_seqi(bam_get_seq(b), i)], f);
    fputc('\n', f);
}

static const pl_baq_path_t baq_paths[] = {PL_BAQ_SCALAR, PL_BAQ_SSE2, PL_BAQ_AVX2};

/* One case: a batch of reads (some of one shape, for full SIMD groups) on every path. */
static void baq_case(pl_baq_t **q, int n_paths, uint64_t seed, uint64_t i, diff_tally_t *t)
{
    diff_rng_t r;
    diff_rng_init(&r, seed, "baq", i);
    char ref[WIN + 1];
    uint8_t codes[WIN];
    diff_seq_ref(&r, codes, WIN);
    for (int k = 0; k < WIN; k++)
        ref[k] = codes[k] < 4 ? "ACGT"[codes[k]] : "NRYn"[codes[k] & 3];
    ref[WIN] = 0;
    int flag = (int[]){3, 7, 1, 5, 2, 6}[diff_rng_below(&r, 6)];
    int n = diff_rng_range(&r, 1, MAX_BATCH);
    bam1_t *in[MAX_BATCH], *want[MAX_BATCH], *got[MAX_BATCH];
    int want_ret[MAX_BATCH], got_ret[MAX_BATCH];
    for (int k = 0; k < n; k++) {
        in[k] = k > 0 && diff_rng_one_in(&r, 2) ? bam_dup1(in[k - 1]) : baq_read(&r, ref, k);
        want[k] = bam_dup1(in[k]);
        want_ret[k] = sam_prob_realn(want[k], ref, WIN, flag);
    }
    t->cases++;
    int bad = 0;
    for (int p = 0; p < n_paths && !bad; p++) {
        for (int k = 0; k < n; k++)
            got[k] = bam_dup1(in[k]);
        pl_baq_batch(q[p], got, n, ref, WIN, flag, got_ret);
        for (int k = 0; k < n && !bad; k++) {
            if (got_ret[k] == want_ret[k] && same_record(got[k], want[k]))
                continue;
            bad = 1;
            if (diff_report(t, "baq", seed, i, "path %s, flag %d, read %d of %d: ret %d, htslib %d",
                            pl_baq_path_name(baq_paths[p]), flag, k, n, got_ret[k], want_ret[k]))
                print_read(t->log, in[k]);
        }
        for (int k = 0; k < n; k++)
            bam_destroy1(got[k]);
    }
    for (int k = 0; k < n; k++) {
        bam_destroy1(in[k]);
        bam_destroy1(want[k]);
    }
}

void diff_baq(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    pl_baq_t *q[3];
    int n_paths = 0;
    __builtin_cpu_init();
    for (int p = 0; p < 3; p++) {
        if (baq_paths[p] == PL_BAQ_AVX2 && !__builtin_cpu_supports("avx2"))
            continue;
        if (!(q[n_paths++] = pl_baq_init(baq_paths[p]))) {
            fprintf(stderr, "ssdiff: out of memory\n");
            exit(2);
        }
    }
    for (uint64_t i = first; i < first + n; i++)
        baq_case(q, n_paths, seed, i, t);
    for (int p = 0; p < n_paths; p++)
        pl_baq_destroy(q[p]);
}

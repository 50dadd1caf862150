/*
 * diff_hmm.c -- the alignment HMM two ways: the indel model's forward-only
 * score (baq_glocal_score) against htslib's probaln_glocal, and BAQ
 * (baq_batch on every path this CPU runs) against htslib's sam_prob_realn.
 *
 * Parameters are those the callers pass (bcftools' indel model: d 1e-4,
 * e 1e-2, band indel + 3; long reads: 1e-3, 1e-1; BAQ: 1e-3 or 1e-7, 0.1)
 * and random ones; references have homopolymers and STRs with an indel
 * planted in them, reads end in indels, qualities run 0-255, bands 1-60.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts.h>
#include <htslib/sam.h>

#include "../../genomics/baq.h"
#include "../../genomics/baq_priv.h"
#include "base/ss_exact_fp.h"
#include "diff_probaln.h"
#include "diff_routines.h"
#include "diff_seq.h"

#define MAX_LEN   1000
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

/* The band probaln_glocal uses for these lengths. */
static int glocal_band(int l_ref, int l_query, int asked)
{
    int bw = l_ref > l_query ? l_ref : l_query;
    if (bw > asked)
        bw = asked;
    if (bw < abs(l_ref - l_query))
        bw = abs(l_ref - l_query);
    return bw;
}

static float q2p[256]; /* 10^(-q/10) as float, as htslib's table */
static pthread_once_t q2p_once = PTHREAD_ONCE_INIT;

static void q2p_fill(void)
{
    for (int i = 0; i < 256; i++)
        q2p[i] = (float)pow(10, -i / 10.);
}

/*
 * 1 when the case differs: our rounded score against htslib's, our unrounded
 * likelihood against the transcription's bits, or the transcription against
 * htslib (then the transcription is what is wrong). *ours, *theirs get the scores.
 */
static int score_differs(baq_t *q, double *ws, const score_case_t *c, int *ours, int *theirs)
{
    *theirs = probaln_glocal(c->ref, c->l_ref, c->query, c->l_query, c->qual, &c->par, NULL, NULL);
    *ours = baq_glocal_score(q, c->ref, c->l_ref, c->query, c->l_query, c->qual, &c->par);
    double tr_phred;
    int tr =
        tr_probaln(c->ref, c->l_ref, c->query, c->l_query, c->qual, &c->par, &tr_phred, NULL, NULL);
    if (*ours != *theirs || tr != *theirs)
        return 1;
    if (c->l_ref == 0 || c->l_query == 0)
        return 0;
    baq_shape_t sh = {c->l_query, c->l_ref, glocal_band(c->l_ref, c->l_query, c->par.bw),
                      c->par.d,   c->par.e, q2p};
    baq_lane_t lane = {c->query, c->ref, c->qual, NULL, NULL, NULL};
    double phred = baq_dp_scalar_phred_only(&sh, &lane, ws);
    return memcmp(&phred, &tr_phred, sizeof phred) != 0;
}

/* Drops bases from either end of ref and query while the case still differs. */
static void score_shrink(baq_t *q, double *ws, score_case_t *c)
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
            if (score_differs(q, ws, &t, &a, &b)) {
                *c = t;
                progress = 1;
            }
        }
    }
}

void diff_hmm_score(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    pthread_once(&q2p_once, q2p_fill);
    baq_t *q = baq_init(BAQ_PATH_SCALAR);
    score_case_t *c = malloc(sizeof(*c));
    /* the forward pass's workspace for the longest case: (lq + 1) rows of 3 (2bw + 5) */
    double *ws = aligned_alloc(64, 64 * 1024 * 1024);
    if (!q || !c || !ws) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "hmm-score", i);
        score_make(&r, c);
        int ours, theirs;
        t->cases++;
        if (!score_differs(q, ws, c, &ours, &theirs))
            continue;
        score_shrink(q, ws, c);
        score_differs(q, ws, c, &ours, &theirs);
        if (diff_report(t, "hmm-score", seed, i,
                        "ours %d, htslib %d (or the unrounded likelihoods differ);"
                        " shrunk: d %.9g e %.9g bw %d",
                        ours, theirs, c->par.d, c->par.e, c->par.bw)) {
            diff_seq_print(t->log, "ref", c->ref, c->l_ref, 0);
            diff_seq_print(t->log, "query", c->query, c->l_query, 0);
            diff_seq_print(t->log, "qual", c->qual, c->l_query, 1);
        }
    }
    free(ws);
    free(c);
    baq_destroy(q);
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
    if (!b || bam_set1(b, strlen(name), name, diff_rng_one_in(r, 2) ? BAM_FREVERSE : 0, 0, pos, 60,
                       (size_t)nc, cig, -1, -1, 0, (size_t)lq, seq, qual, 0) < 0) {
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
        fprintf(f, "%d%c", bam_cigar_oplen(bam_get_cigar(b)[k]),
                bam_cigar_opchr(bam_get_cigar(b)[k]));
    fputs(" seq ", f);
    for (int i = 0; i < b->core.l_qseq; i++)
        fputc(seq_nt16_str[bam_seqi(bam_get_seq(b), i)], f);
    fputc('\n', f);
}

static const baq_path_t baq_paths[] = {BAQ_PATH_SCALAR, BAQ_PATH_SSE2, BAQ_PATH_AVX2};

/* One case: a batch of reads (some of one shape, for full SIMD groups) on every path. */
static void baq_case(baq_t **q, int n_paths, uint64_t seed, uint64_t i, diff_tally_t *t)
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
        baq_batch(q[p], got, n, ref, WIN, flag, got_ret);
        for (int k = 0; k < n && !bad; k++) {
            if (got_ret[k] == want_ret[k] && same_record(got[k], want[k]))
                continue;
            bad = 1;
            if (diff_report(t, "baq", seed, i, "path %s, flag %d, read %d of %d: ret %d, htslib %d",
                            baq_path_name(baq_paths[p]), flag, k, n, got_ret[k], want_ret[k]))
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
    baq_t *q[3];
    int n_paths = 0;
    __builtin_cpu_init();
    for (int p = 0; p < 3; p++) {
        if (baq_paths[p] == BAQ_PATH_AVX2 && !__builtin_cpu_supports("avx2"))
            continue;
        if (!(q[n_paths++] = baq_init(baq_paths[p]))) {
            fprintf(stderr, "ssdiff: out of memory\n");
            exit(2);
        }
    }
    for (uint64_t i = first; i < first + n; i++)
        baq_case(q, n_paths, seed, i, t);
    for (int p = 0; p < n_paths; p++)
        baq_destroy(q[p]);
}

/* ---- the pass alone, every width, against the transcription's unrounded posteriors -------- */

#define PASS_MAX 400
#define PASS_WS  ((size_t)4 << 20) /* doubles: 4 lanes of 400 x 400 */

/* One case: w lanes of one shape (the widths group reads so), each lane its own read. */
static void pass_case(int w, uint64_t seed, uint64_t i, double *ws, diff_tally_t *t)
{
    static const char *names[] = {NULL, "baq-pass", "baq-pass-sse2", NULL, "baq-pass-avx2"};
    diff_rng_t r;
    diff_rng_init(&r, seed, names[w], i);
    int lr = diff_rng_range(&r, 1, PASS_MAX), lq = diff_rng_range(&r, 1, PASS_MAX);
    if (!diff_rng_one_in(&r, 4)) /* mostly a read and its window, a few bases apart */
        lq = lr - diff_rng_range(&r, -12, 12);
    lq = lq < 1 ? 1 : lq > PASS_MAX ? PASS_MAX : lq;
    probaln_par_t par = {diff_rng_one_in(&r, 3) ? 1e-7f : 1e-3f, 0.1f, diff_rng_range(&r, 1, 40)};
    if (diff_rng_one_in(&r, 5))
        par.d = (float)(diff_rng_unit(&r) * 0.2), par.e = (float)diff_rng_unit(&r);
    baq_shape_t sh = {lq, lr, glocal_band(lr, lq, par.bw), par.d, par.e, q2p};
    static _Thread_local uint8_t ref[4][PASS_MAX], qry[4][PASS_MAX + 64], ql[4][PASS_MAX + 64];
    static _Thread_local int state[4][PASS_MAX + 64], tr_state[PASS_MAX + 64], failed[4];
    static _Thread_local double miss[4][PASS_MAX + 64], tr_miss[PASS_MAX + 64];
    baq_lane_t ln[4];
    for (int l = 0; l < w; l++) {
        int indel;
        diff_seq_ref(&r, ref[l], lr);
        for (int k = 0; k < lr; k++)
            ref[l][k] = ref[l][k] > 4 ? 4 : ref[l][k]; /* BAQ's reference codes are 0-4 */
        int n = diff_seq_query(&r, ref[l], lr, qry[l], lq, 6, &indel);
        for (int k = n; k < lq; k++)
            qry[l][k] = (uint8_t)diff_rng_below(&r, 5);
        diff_seq_quals(&r, ql[l], lq);
        ln[l] = (baq_lane_t){qry[l], ref[l], ql[l], state[l], miss[l], &failed[l]};
    }
    t->cases++;
    if (baq_dp_doubles(&sh, w) > PASS_WS) {
        fprintf(stderr, "ssdiff: the pass's workspace is too small for lq %d lr %d\n", lq, lr);
        exit(2);
    }
    if (w == 1)
        baq_dp_scalar(&sh, ln, ws);
    else if (w == 2)
        baq_dp_sse2_2(&sh, ln, ws);
    else
        baq_dp_avx2_4(&sh, ln, ws);
    for (int l = 0; l < w; l++) {
        double phred;
        int tr = tr_probaln(ref[l], lr, qry[l], lq, ql[l], &par, &phred, tr_state, tr_miss);
        int k = 0;
        while (k < lq && state[l][k] == tr_state[k] &&
               memcmp(&miss[l][k], &tr_miss[k], sizeof(double)) == 0)
            k++;
        if (k == lq && failed[l] == (tr == INT_MIN))
            continue;
        if (diff_report(t, names[w], seed, i,
                        "lane %d of %d, lr %d lq %d bw %d d %.9g e %.9g: "
                        "base %d state %d miss %.17g, transcription %d %.17g; failed %d, %d",
                        l, w, lr, lq, sh.bw, par.d, par.e, k, k < lq ? state[l][k] : 0,
                        k < lq ? miss[l][k] : 0., k < lq ? tr_state[k] : 0,
                        k < lq ? tr_miss[k] : 0., failed[l], tr == INT_MIN)) {
            diff_seq_print(t->log, "ref", ref[l], lr, 0);
            diff_seq_print(t->log, "query", qry[l], lq, 0);
            diff_seq_print(t->log, "qual", ql[l], lq, 1);
        }
        break;
    }
}

/*
 * The transcription itself against htslib's probaln_glocal with state and q:
 * its states and its qualities from the posteriors must be htslib's, or the
 * comparisons above prove nothing.
 */
static int transcription_differs(const baq_lane_t *ln, const baq_shape_t *sh,
                                 const probaln_par_t *par)
{
    static _Thread_local int st[PASS_MAX + 64], tst[PASS_MAX + 64];
    static _Thread_local uint8_t q[PASS_MAX + 64];
    static _Thread_local double miss[PASS_MAX + 64];
    double phred;
    int a = probaln_glocal(ln->tref, sh->l_ref, ln->tseq, sh->l_query, ln->qual, par, st, q);
    int b =
        tr_probaln(ln->tref, sh->l_ref, ln->tseq, sh->l_query, ln->qual, par, &phred, tst, miss);
    if (a != b)
        return 1;
    for (int k = 0; k < sh->l_query; k++) {
        /* htslib's q: a posterior of 1 gives log(0) and INT_MIN, stored as a byte */
        int qq = baq_phred_int(-4.343 * log(miss[k]) + .499);
        if (st[k] != tst[k] || q[k] != (uint8_t)(qq > 100 ? 99 : qq))
            return 1;
    }
    return 0;
}

static void pass_run(int w, uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    pthread_once(&q2p_once, q2p_fill);
    double *ws = aligned_alloc(64, PASS_WS * sizeof(double));
    if (!ws) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    for (uint64_t i = first; i < first + n; i++) {
        pass_case(w, seed, i, ws, t);
        if (w != 1 || i % 16)
            continue;
        /* every 16th scalar case: the transcription against htslib on a fresh lane */
        diff_rng_t r;
        diff_rng_init(&r, seed, "transcription", i);
        static _Thread_local uint8_t ref[PASS_MAX], qry[PASS_MAX + 64], ql[PASS_MAX + 64];
        int lr = diff_rng_range(&r, 1, PASS_MAX), indel;
        diff_seq_ref(&r, ref, lr);
        int lq = diff_seq_query(&r, ref, lr, qry, PASS_MAX, 8, &indel);
        diff_seq_quals(&r, ql, lq);
        probaln_par_t par = {1e-3f, 0.1f, diff_rng_range(&r, 1, 40)};
        baq_shape_t sh = {lq, lr, glocal_band(lr, lq, par.bw), par.d, par.e, q2p};
        baq_lane_t ln = {qry, ref, ql, NULL, NULL, NULL};
        t->cases++;
        if (transcription_differs(&ln, &sh, &par))
            diff_report(t, "transcription", seed, i,
                        "the test's probaln_glocal transcription "
                        "differs from htslib's (lr %d lq %d bw %d): fix the transcription",
                        lr, lq, par.bw);
    }
    free(ws);
}

void diff_baq_pass(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    pass_run(1, seed, first, n, t);
}

void diff_baq_pass_sse2(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    pass_run(2, seed, first, n, t);
}

void diff_baq_pass_avx2(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2"))
        return; /* this CPU cannot run the path, so seqshard never does either */
    pass_run(4, seed, first, n, t);
}

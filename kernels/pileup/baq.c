/*
 * baq.c -- sam_prob_realn() of htslib 1.16, for a batch of reads at once.
 *
 * Per read, in htslib's order: the BQ/ZQ tag checks and conversions, the
 * aligned span from the CIGAR, the band and the reference window, then the
 * forward-backward pass (baq_dp.h), then the CIGAR walk that turns the
 * pass's states and posteriors into BQ and applies it. The reads that need
 * the pass are grouped by shape and each group goes through the path's
 * pass, a read per lane; a group that does not fill the width is padded with
 * copies of its own last read.
 *
 * Memory: the workspace (per-read buffers of a batch, the pass's matrices)
 * grows to the largest batch seen and is reused; the BAQ path allocates
 * nothing per read (bam_aux_append may grow a record's data, as in htslib).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/hts_log.h>

#include "baq.h"
#include "baq_priv.h"

#if defined(__x86_64__) || defined(__i386__)
#define BAQ_HAVE_AVX2_BUILD 1
#else
#define BAQ_HAVE_AVX2_BUILD 0
#endif

/* A read of the batch: where its pass reads and writes. */
typedef struct {
    bam1_t *b;
    int ret;            /* final code, or 1 while the pass is pending */
    int l_query, l_ref, bw, bw_pass; /* bw: realn's band; bw_pass: the pass's */
    double d;
    int xb, xe;         /* the reference window, before the cut at the contig end */
    uint8_t *tseq, *tref, *bq;
    int *state;
    double *miss;
} job_t;

struct pl_baq_s {
    pl_baq_path_t path;
    float q2p[256];
    job_t *jobs;
    int *order;
    int m_jobs;
    unsigned char *arena; /* per-read buffers of the batch */
    size_t m_arena;
    double *ws;           /* the pass's workspace, 64-byte aligned */
    size_t m_ws;
};

/* ---- the path ---------------------------------------------------------------------------- */

static const char *const path_names[] = {"htslib", "scalar", "sse2", "avx2"};

const char *pl_baq_path_name(pl_baq_path_t path)
{
    return (unsigned)path < 4 ? path_names[path] : "?";
}

static int have_avx2(void)
{
#if BAQ_HAVE_AVX2_BUILD
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
#else
    return 0;
#endif
}

int pl_baq_path_select(pl_baq_path_t *path, const char **why)
{
    const char *v = getenv("SEQSHARD_BAQ_PATH");
    *why = NULL;
    if (!v || !*v) {
        *path = have_avx2() ? PL_BAQ_AVX2 : PL_BAQ_SSE2;
        return 0;
    }
    for (int i = 0; i < 4; i++)
        if (strcmp(v, path_names[i]) == 0) {
            if (i == PL_BAQ_AVX2 && !have_avx2()) {
                *why = "SEQSHARD_BAQ_PATH=avx2, but this CPU has no AVX2; use sse2, scalar or "
                       "htslib, or unset it";
                return -1;
            }
            *path = (pl_baq_path_t)i;
            return 0;
        }
    *why = "SEQSHARD_BAQ_PATH must be scalar, sse2, avx2 or htslib (unset: the best this CPU "
           "runs)";
    return -1;
}

/* ---- the workspace ----------------------------------------------------------------------- */

pl_baq_t *pl_baq_init(pl_baq_path_t path)
{
    pl_baq_t *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->path = path;
    for (int i = 0; i < 256; i++)
        q->q2p[i] = pow(10, -i / 10.);
    return q;
}

void pl_baq_destroy(pl_baq_t *q)
{
    if (!q)
        return;
    free(q->jobs);
    free(q->order);
    free(q->arena);
    free(q->ws);
    free(q);
}

static int grow_jobs(pl_baq_t *q, int n)
{
    if (n <= q->m_jobs)
        return 0;
    job_t *j = realloc(q->jobs, (size_t)n * sizeof(*j));
    if (!j)
        return -1;
    q->jobs = j;
    int *o = realloc(q->order, (size_t)n * sizeof(*o));
    if (!o)
        return -1;
    q->order = o;
    q->m_jobs = n;
    return 0;
}

static int grow_arena(pl_baq_t *q, size_t n)
{
    if (n <= q->m_arena)
        return 0;
    n += n / 2;
    unsigned char *a = realloc(q->arena, n);
    if (!a)
        return -1;
    q->arena = a, q->m_arena = n;
    return 0;
}

size_t baq_dp_doubles(const baq_shape_t *sh, int w)
{
    size_t S = (size_t)(2 * sh->bw + 1 < sh->l_ref ? 2 * sh->bw + 1 : sh->l_ref) + 4;
    size_t row = S * 3 * w, lq = sh->l_query;
    return (lq + 3) * row + (lq + 2) * w + 3 * lq * w + (size_t)sh->l_ref * w;
}

static int grow_ws(pl_baq_t *q, size_t doubles)
{
    if (doubles <= q->m_ws)
        return 0;
    doubles += doubles / 4;
    void *p = NULL;
    if (posix_memalign(&p, 64, doubles * sizeof(double)) != 0)
        return -1;
    free(q->ws);
    q->ws = p, q->m_ws = doubles;
    return 0;
}

/* ---- before the pass: tags, span, band, window -------------------------------------------- */

static int tag_ok(const uint8_t *tg, enum htsLogLevel severity, const char *type, const bam1_t *b)
{
    if (*tg != 'Z') {
        hts_log(severity, "pl_baq", "Incorrect %s tag type (%c) for read %s", type, *tg,
                bam_get_qname(b));
        return 0;
    }
    if ((size_t)b->core.l_qseq != strlen((const char *)tg + 1)) {
        hts_log(severity, "pl_baq", "Read %s %s tag is wrong length", bam_get_qname(b), type);
        return 0;
    }
    return 1;
}

/*
 * Existing BQ/ZQ tags, as htslib treats them: dropped, reused, or converted
 * into each other. Returns 1 when the read needs the pass, else the final
 * code. Pointers into the aux data are kept across bam_aux_del exactly as
 * htslib keeps them, so a tag that moves is read where htslib reads it.
 */
static int realn_tags(bam1_t *b, int flag)
{
    int apply = flag & BAQ_APPLY, redo = flag & BAQ_REDO, fix_bq = 0;
    uint8_t *bq, *zq, *qual = bam_get_qual(b);
    int l = b->core.l_qseq;

    if ((bq = bam_aux_get(b, "BQ")) != NULL) {
        if (!redo && !tag_ok(bq, HTS_LOG_WARNING, "BQ", b))
            fix_bq = 1;
        ++bq;
    }
    if ((zq = bam_aux_get(b, "ZQ")) != NULL) {
        if (!tag_ok(zq, HTS_LOG_ERROR, "ZQ", b))
            return -4;
        ++zq;
    }
    if (bq && redo) {
        bam_aux_del(b, bq - 1);
        bq = NULL;
    }
    if (bq && zq) {
        bam_aux_del(b, zq - 1);
        zq = NULL;
    }
    if (!zq && fix_bq) {
        bam_aux_del(b, bq - 1);
        bq = NULL;
    }
    if (!bq && !zq)
        return 1;
    if ((apply && zq) || (!apply && bq))
        return -3;
    if (bq && apply) { /* BQ becomes ZQ */
        for (int i = 0; i < l; ++i)
            qual[i] = qual[i] + 64 < bq[i] ? 0 : qual[i] - ((int)bq[i] - 64);
        *(bq - 3) = 'Z';
    } else if (zq && !apply) { /* ZQ becomes BQ */
        for (int i = 0; i < l; ++i)
            qual[i] += (int)zq[i] - 64;
        *(zq - 3) = 'B';
    }
    return 0;
}

/*
 * The aligned span, the band and the reference window (before it is cut at
 * the contig end). Returns 1, or -1 when the read has no M/=/X or has an N.
 */
static int realn_window(const bam1_t *b, job_t *j, int *xe_out)
{
    const uint32_t *cigar = bam_get_cigar(b);
    const bam1_core_t *c = &b->core;
    hts_pos_t x = c->pos;
    int y = 0, yb = -1, ye = -1, xb = -1, xe = -1;
    for (uint32_t k = 0; k < c->n_cigar; ++k) {
        int op = bam_cigar_op(cigar[k]), l = bam_cigar_oplen(cigar[k]);
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) {
            if (yb < 0)
                yb = y;
            if (xb < 0)
                xb = x;
            ye = y + l, xe = x + l;
            x += l, y += l;
        } else if (op == BAM_CSOFT_CLIP || op == BAM_CINS) {
            y += l;
        } else if (op == BAM_CDEL) {
            x += l;
        } else if (op == BAM_CREF_SKIP) {
            return -1;
        }
    }
    if (xb == -1)
        return -1;
    int bw = 7;
    if (abs((xe - xb) - (ye - yb)) > bw)
        bw = abs((xe - xb) - (ye - yb)) + 3;
    xb -= yb + bw / 2;
    if (xb < 0)
        xb = 0;
    xe += c->l_qseq - ye + bw / 2;
    if (xe - xb - c->l_qseq > bw) {
        xb += (xe - xb - c->l_qseq - bw) / 2; /* the second uses the new xb, as in htslib */
        xe -= (xe - xb - c->l_qseq - bw) / 2;
    }
    j->bw = bw;
    j->xb = xb;
    *xe_out = xe;
    return 1;
}

/* Bytes of per-read buffers for a read of l_query bases and a window of at most lr. */
static size_t job_bytes(const job_t *j)
{
    size_t lq = j->l_query, lr = j->xe - j->xb;
    size_t n = lq * (sizeof(double) + sizeof(int) + 2) + 1 + (lr > 0 ? lr : 1);
    return (n + 15) & ~(size_t)15;
}

/* miss, state, tseq, bq (with room for the tag's NUL), tref */
static void job_place(job_t *j, unsigned char *p)
{
    size_t lq = j->l_query;
    j->miss = (double *)p;
    j->state = (int *)(p + lq * sizeof(double));
    j->tseq = p + lq * (sizeof(double) + sizeof(int));
    j->bq = j->tseq + lq;
    j->tref = j->bq + lq + 1;
}

/* Codes for the pass, the window cut at the contig end, and the pass's band. */
static void job_fill(job_t *j, const char *ref, hts_pos_t ref_len)
{
    int xe = j->xe;
    const bam1_t *b = j->b;
    const uint8_t *seq = bam_get_seq(b);
    for (int i = 0; i < j->l_query; ++i)
        j->tseq[i] = (uint8_t)seq_nt16_int[bam_seqi(seq, i)];
    for (int i = j->xb; i < xe; ++i) {
        if (i >= ref_len || ref[i] == '\0') {
            xe = i;
            break;
        }
        j->tref[i - j->xb] = (uint8_t)seq_nt16_int[seq_nt16_table[(unsigned char)ref[i]]];
    }
    j->l_ref = xe - j->xb;
    int bw = j->l_ref > j->l_query ? j->l_ref : j->l_query;
    if (bw > j->bw)
        bw = j->bw;
    if (bw < abs(j->l_ref - j->l_query))
        bw = abs(j->l_ref - j->l_query);
    j->bw_pass = bw;
}

/* ---- after the pass: BQ from the states and posteriors ------------------------------------- */

/* htslib's phred value of a posterior miss, capped as it caps it. */
static inline uint8_t miss_q(double miss)
{
    int k = (int)(-4.343 * log(miss) + .499);
    return (uint8_t)(k > 100 ? 99 : k);
}

static inline int state_ok(const job_t *j, int i, hts_pos_t x, int y)
{
    return (j->state[i] & 3) == 0 && j->state[i] >> 2 == x - j->xb + (i - y);
}

/* Without BAQ_EXTEND: BQ capped by the base quality. bq[] holds the qualities on entry. */
static void bq_capped(job_t *j)
{
    const bam1_t *b = j->b;
    const uint32_t *cigar = bam_get_cigar(b);
    const uint8_t *qual = bam_get_qual(b);
    int lq = b->core.l_qseq, y = 0;
    hts_pos_t x = b->core.pos;
    for (uint32_t k = 0; k < b->core.n_cigar; ++k) {
        int op = bam_cigar_op(cigar[k]), l = bam_cigar_oplen(cigar[k]);
        if (l == 0)
            continue;
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) {
            if (l > lq - y)
                l = lq - y;
            for (int i = y; i < y + l; ++i) {
                if (!state_ok(j, i, x, y))
                    j->bq[i] = 0;
                else if (j->bq[i] != 0) { /* min(0, q) needs no q */
                    uint8_t q = miss_q(j->miss[i]);
                    j->bq[i] = j->bq[i] < q ? j->bq[i] : q;
                }
            }
            x += l, y += l;
        } else if (op == BAM_CSOFT_CLIP || op == BAM_CINS) {
            if (l > lq - y)
                l = lq - y;
            y += l;
        } else if (op == BAM_CDEL) {
            x += l;
        }
    }
    for (int i = 0; i < lq; ++i)
        j->bq[i] = qual[i] - j->bq[i] + 64;
}

/*
 * BAQ_EXTEND (samtools mpileup's default): BAQ per aligned block is the lower of the running maxima from
 * either end, and may exceed the base quality. left/right: scratch of l_query.
 */
static void bq_extended(job_t *j, uint8_t *left, uint8_t *right)
{
    const bam1_t *b = j->b;
    const uint32_t *cigar = bam_get_cigar(b);
    const uint8_t *qual = bam_get_qual(b);
    uint8_t *bq = j->bq;
    int lq = b->core.l_qseq, y = 0;
    hts_pos_t x = b->core.pos;
    for (uint32_t k = 0; k < b->core.n_cigar; ++k) {
        int op = bam_cigar_op(cigar[k]), l = bam_cigar_oplen(cigar[k]);
        if (l == 0)
            continue;
        if (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) {
            if (l > lq - y)
                l = lq - y;
            for (int i = y; i < y + l; ++i)
                bq[i] = state_ok(j, i, x, y) ? miss_q(j->miss[i]) : 0;
            left[y] = bq[y];
            for (int i = y + 1; i < y + l; ++i)
                left[i] = bq[i] > left[i - 1] ? bq[i] : left[i - 1];
            right[y + l - 1] = bq[y + l - 1];
            for (int i = y + l - 2; i >= y; --i)
                right[i] = bq[i] > right[i + 1] ? bq[i] : right[i + 1];
            for (int i = y; i < y + l; ++i)
                bq[i] = left[i] < right[i] ? left[i] : right[i];
            x += l, y += l;
        } else if (op == BAM_CSOFT_CLIP || op == BAM_CINS) {
            if (l > lq - y)
                l = lq - y;
            y += l;
        } else if (op == BAM_CDEL) {
            x += l;
        }
    }
    for (int i = 0; i < lq; ++i)
        bq[i] = 64 + (qual[i] <= bq[i] ? 0 : qual[i] - bq[i]);
}

static void job_finish(job_t *j, int flag, uint8_t *scratch)
{
    bam1_t *b = j->b;
    uint8_t *qual = bam_get_qual(b);
    int lq = b->core.l_qseq;
    memcpy(j->bq, qual, lq); /* bases outside M/=/X keep their quality */
    if (flag & BAQ_EXTEND)
        bq_extended(j, scratch, scratch + lq);
    else
        bq_capped(j);
    uint8_t *tag = j->bq; /* bam_aux_append copies l_qseq + 1 bytes: the text and its NUL */
    tag[lq] = 0;
    if (flag & BAQ_APPLY) {
        for (int i = 0; i < lq; ++i)
            qual[i] -= tag[i] - 64;
        bam_aux_append(b, "ZQ", 'Z', lq + 1, tag);
    } else {
        bam_aux_append(b, "BQ", 'Z', lq + 1, tag);
    }
    j->ret = 0;
}

/* ---- the batch --------------------------------------------------------------------------- */

/* Steps 1 and 2 of a read: 1 when it needs the pass (sizes set), else its code. */
static int job_start(job_t *j, bam1_t *b, int flag)
{
    const bam1_core_t *c = &b->core;
    int system = flag & (0xff << 3);
    j->b = b;
    j->l_query = c->l_qseq;
    j->d = c->l_qseq > 1000 || system > BAQ_ILLUMINA ? 1e-7 : 0.001;
    if ((c->flag & BAM_FUNMAP) || c->l_qseq == 0 || bam_get_qual(b)[0] == (uint8_t)-1)
        return -1;
    int r = realn_tags(b, flag);
    if (r != 1)
        return r;
    if (realn_window(b, j, &j->xe) < 0)
        return -1;
    /* probaln_glocal's own checks: a negative window or a query too long fails */
    if (j->xe - j->xb < 0 || c->l_qseq >= INT_MAX - 2)
        return -4;
    return 1;
}

static int shape_cmp(const job_t *a, const job_t *b)
{
    if (a->l_query != b->l_query)
        return a->l_query < b->l_query ? -1 : 1;
    if (a->l_ref != b->l_ref)
        return a->l_ref < b->l_ref ? -1 : 1;
    if (a->bw_pass != b->bw_pass)
        return a->bw_pass < b->bw_pass ? -1 : 1;
    return a->d < b->d ? -1 : a->d > b->d;
}

/* Indices of the reads that need the pass, sorted by shape (insertion sort: batches are small). */
static int sort_pending(pl_baq_t *q, int n)
{
    int np = 0;
    for (int i = 0; i < n; i++) {
        if (q->jobs[i].ret != 1)
            continue;
        int k = np++;
        while (k > 0 && shape_cmp(&q->jobs[q->order[k - 1]], &q->jobs[i]) > 0) {
            q->order[k] = q->order[k - 1];
            k--;
        }
        q->order[k] = i;
    }
    return np;
}

typedef void (*dp_fn)(const baq_shape_t *, const baq_lane_t *, double *);

/* Run w lanes from jobs ord[0..n-1] (n <= w; the last read fills the rest). */
static int run_lanes(pl_baq_t *q, const int *ord, int n, int w, dp_fn fn)
{
    const job_t *j0 = &q->jobs[ord[0]];
    baq_shape_t sh = {j0->l_query, j0->l_ref, j0->bw_pass, j0->d, 0.1, q->q2p};
    baq_lane_t ln[4];
    if (grow_ws(q, baq_dp_doubles(&sh, w)) < 0)
        return -1;
    for (int l = 0; l < w; l++) {
        const job_t *j = &q->jobs[ord[l < n ? l : n - 1]];
        ln[l] = (baq_lane_t){j->tseq, j->tref, bam_get_qual(j->b), j->state, j->miss};
    }
    fn(&sh, ln, q->ws);
    return 0;
}

/*
 * One group of a shape, in the width of the path. A lone read goes through
 * the scalar pass: a vector step costs about what one read costs alone.
 */
static int run_group(pl_baq_t *q, const int *ord, int n)
{
    int w = q->path == PL_BAQ_AVX2 ? 4 : q->path == PL_BAQ_SSE2 ? 2 : 1;
    dp_fn fn = w == 4 ? baq_dp_avx2_4 : w == 2 ? baq_dp_sse2_2 : baq_dp_scalar;
    while (n > 0) {
        int take = n < w ? n : w;
        if (take == 1 ? run_lanes(q, ord, 1, 1, baq_dp_scalar) < 0
                      : run_lanes(q, ord, take, w, fn) < 0)
            return -1;
        ord += take, n -= take;
    }
    return 0;
}

int pl_baq_batch(pl_baq_t *q, bam1_t *const *b, int n, const char *ref, hts_pos_t ref_len,
                 int flag, int *ret)
{
    if (q->path == PL_BAQ_HTSLIB) {
        for (int i = 0; i < n; i++)
            ret[i] = sam_prob_realn(b[i], ref, ref_len, flag);
        return 0;
    }
    if (grow_jobs(q, n > 0 ? n : 1) < 0) {
        for (int i = 0; i < n; i++)
            ret[i] = -4;
        errno = ENOMEM;
        return -1;
    }
    size_t bytes = 0, max_lq = 1;
    for (int i = 0; i < n; i++) {
        job_t *j = &q->jobs[i];
        j->ret = job_start(j, b[i], flag);
        if (j->ret == 1) {
            bytes += job_bytes(j);
            if ((size_t)j->l_query + 1 > max_lq)
                max_lq = (size_t)j->l_query + 1;
        }
    }
    /* scratch for -E: two rows of l_query + 1 */
    if (grow_arena(q, bytes + 2 * max_lq + 16) < 0)
        goto oom;
    unsigned char *p = q->arena;
    for (int i = 0; i < n; i++) {
        job_t *j = &q->jobs[i];
        if (j->ret != 1)
            continue;
        job_place(j, p);
        p += job_bytes(j);
        job_fill(j, ref, ref_len);
    }
    uint8_t *scratch = p;
    int np = sort_pending(q, n);
    for (int s = 0; s < np;) {
        int e = s + 1;
        while (e < np && shape_cmp(&q->jobs[q->order[s]], &q->jobs[q->order[e]]) == 0)
            e++;
        if (q->jobs[q->order[s]].l_ref == 0) {
            /* htslib's pass returns without writing its outputs: no state is right */
            for (int k = s; k < e; k++) {
                job_t *j = &q->jobs[q->order[k]];
                for (int i = 0; i < j->l_query; i++)
                    j->state[i] = -1, j->miss[i] = 1.;
            }
        } else if (run_group(q, q->order + s, e - s) < 0) {
            goto oom;
        }
        s = e;
    }
    for (int i = 0; i < n; i++) {
        if (q->jobs[i].ret == 1)
            job_finish(&q->jobs[i], flag, scratch);
        ret[i] = q->jobs[i].ret;
    }
    return 0;
oom:
    for (int i = 0; i < n; i++)
        ret[i] = q->jobs[i].ret != 1 ? q->jobs[i].ret : -4;
    errno = ENOMEM;
    return -1;
}

int pl_baq_one(pl_baq_t *q, bam1_t *b, const char *ref, hts_pos_t ref_len, int flag)
{
    int ret;
    bam1_t *one[1] = {b};
    pl_baq_batch(q, one, 1, ref, ref_len, flag, &ret);
    return ret;
}

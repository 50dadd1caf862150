/*
 * baq.c -- sam_prob_realn() of htslib 1.16, for a batch of reads at once.
 *
 * Per read, in htslib's order: the BQ/ZQ tag checks and conversions, the
 * aligned span from the CIGAR, the band and the reference window
 * (baq_realn.c), then the forward-backward pass (baq_dp.h), then the CIGAR
 * walk that turns the pass's states and posteriors into BQ and applies it
 * (baq_realn.c). The reads that need
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

#include "baq.h"
#include "baq_priv.h"
#include "base/ss_exact_fp.h"

#if defined(__x86_64__) || defined(__i386__)
#define BAQ_HAVE_AVX2_BUILD 1
#else
#define BAQ_HAVE_AVX2_BUILD 0
#endif

struct baq_s {
    baq_path_t path;
    float q2p[256];
    baq_job_t *jobs;
    int *order;
    int m_jobs;
    unsigned char *arena; /* per-read buffers of the batch */
    size_t m_arena;
    double *ws; /* the pass's workspace, 64-byte aligned */
    size_t m_ws;
};

/* ---- the path ---------------------------------------------------------------------------- */

static const char *const path_names[] = {"htslib", "scalar", "sse2", "avx2"};

const char *baq_path_name(baq_path_t path)
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

int baq_path_select(baq_path_t *path, const char **why)
{
    const char *v = getenv("SEQSHARD_BAQ_PATH");
    *why = NULL;
    if (!v || !*v) {
        *path = have_avx2() ? BAQ_PATH_AVX2 : BAQ_PATH_SSE2;
        return 0;
    }
    for (int i = 0; i < 4; i++)
        if (strcmp(v, path_names[i]) == 0) {
            if (i == BAQ_PATH_AVX2 && !have_avx2()) {
                *why = "SEQSHARD_BAQ_PATH=avx2, but this CPU has no AVX2; use sse2, scalar or "
                       "htslib, or unset it";
                return -1;
            }
            *path = (baq_path_t)i;
            return 0;
        }
    *why = "SEQSHARD_BAQ_PATH must be scalar, sse2, avx2 or htslib (unset: the best this CPU "
           "runs)";
    return -1;
}

/* ---- the workspace ----------------------------------------------------------------------- */

baq_t *baq_init(baq_path_t path)
{
    baq_t *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->path = path;
    for (int i = 0; i < 256; i++)
        q->q2p[i] = pow(10, -i / 10.);
    return q;
}

void baq_destroy(baq_t *q)
{
    if (!q)
        return;
    free(q->jobs);
    free(q->order);
    free(q->arena);
    free(q->ws);
    free(q);
}

static int grow_jobs(baq_t *q, int n)
{
    if (n <= q->m_jobs)
        return 0;
    baq_job_t *j = realloc(q->jobs, (size_t)n * sizeof(*j));
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

static int grow_arena(baq_t *q, size_t n)
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

static int grow_ws(baq_t *q, size_t doubles)
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

/* ---- the batch --------------------------------------------------------------------------- */

static int shape_cmp(const baq_job_t *a, const baq_job_t *b)
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
static int sort_pending(baq_t *q, int n)
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
static int run_lanes(baq_t *q, const int *ord, int n, int w, dp_fn fn)
{
    const baq_job_t *j0 = &q->jobs[ord[0]];
    baq_shape_t sh = {j0->l_query, j0->l_ref, j0->bw_pass, j0->d, 0.1f, q->q2p};
    baq_lane_t ln[4];
    if (grow_ws(q, baq_dp_doubles(&sh, w)) < 0)
        return -1;
    for (int l = 0; l < w; l++) {
        baq_job_t *j = &q->jobs[ord[l < n ? l : n - 1]];
        ln[l] = (baq_lane_t){j->tseq, j->tref, bam_get_qual(j->b), j->state, j->miss, &j->failed};
    }
    fn(&sh, ln, q->ws);
    return 0;
}

/*
 * One group of a shape, in the width of the path. A lone read goes through
 * the vector pass too, its copies filling the other lanes: measured on
 * mpileup's partial BAQ, where most reads come alone, a 4-lane AVX2 step with
 * one useful lane costs about half of the scalar pass (bench/bench-mpileup.sh).
 */
static int run_group(baq_t *q, const int *ord, int n)
{
    int w = q->path == BAQ_PATH_AVX2 ? 4 : q->path == BAQ_PATH_SSE2 ? 2 : 1;
    dp_fn fn = w == 4 ? baq_dp_avx2_4 : w == 2 ? baq_dp_sse2_2 : baq_dp_scalar;
    while (n > 0) {
        int take = n < w ? n : w;
        if (run_lanes(q, ord, take, w, fn) < 0)
            return -1;
        ord += take, n -= take;
    }
    return 0;
}

int baq_batch(baq_t *q, bam1_t *const *b, int n, const char *ref, hts_pos_t ref_len, int flag,
              int *ret)
{
    if (q->path == BAQ_PATH_HTSLIB) {
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
        baq_job_t *j = &q->jobs[i];
        j->ret = baq_job_start(j, b[i], flag);
        if (j->ret == 1) {
            bytes += baq_job_bytes(j);
            if ((size_t)j->l_query + 1 > max_lq)
                max_lq = (size_t)j->l_query + 1;
        }
    }
    /* scratch for -E: two rows of l_query + 1 */
    if (grow_arena(q, bytes + 2 * max_lq + 16) < 0)
        goto oom;
    unsigned char *p = q->arena;
    for (int i = 0; i < n; i++) {
        baq_job_t *j = &q->jobs[i];
        if (j->ret != 1)
            continue;
        baq_job_place(j, p, ref, ref_len);
        p += baq_job_bytes(j);
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
                baq_job_t *j = &q->jobs[q->order[k]];
                j->failed = 0;
                for (int i = 0; i < j->l_query; i++)
                    j->state[i] = -1, j->miss[i] = 1.;
            }
        } else if (run_group(q, q->order + s, e - s) < 0) {
            goto oom;
        }
        s = e;
    }
    for (int i = 0; i < n; i++) {
        if (q->jobs[i].ret == 1 && q->jobs[i].failed)
            q->jobs[i].ret = -4; /* sam_prob_realn's fail: the read stays as it was */
        else if (q->jobs[i].ret == 1)
            baq_job_finish(&q->jobs[i], flag, scratch);
        ret[i] = q->jobs[i].ret;
    }
    return 0;
oom:
    for (int i = 0; i < n; i++)
        ret[i] = q->jobs[i].ret != 1 ? q->jobs[i].ret : -4;
    errno = ENOMEM;
    return -1;
}

int baq_one(baq_t *q, bam1_t *b, const char *ref, hts_pos_t ref_len, int flag)
{
    int ret;
    bam1_t *one[1] = {b};
    baq_batch(q, one, 1, ref, ref_len, flag, &ret);
    return ret;
}

/* ---- a forward-only score ---------------------------------------------------------------- */

int baq_glocal_score(baq_t *q, const uint8_t *ref, int l_ref, const uint8_t *query, int l_query,
                     const uint8_t *qual, const probaln_par_t *par)
{
    if (q->path == BAQ_PATH_HTSLIB || !qual)
        return probaln_glocal(ref, l_ref, query, l_query, qual, par, NULL, NULL);
    if (l_ref < 0 || l_query < 0 || l_query >= INT_MAX - 2) {
        errno = EINVAL;
        return INT_MIN;
    }
    if (l_ref == 0 || l_query == 0)
        return 0;
    /* htslib's band: the longer length, capped at par->bw, but never below the difference */
    int bw = l_ref > l_query ? l_ref : l_query, diff = abs(l_ref - l_query);
    if (bw > par->bw)
        bw = par->bw;
    if (bw < diff)
        bw = diff;
    baq_shape_t sh = {l_query, l_ref, bw, par->d, par->e, q->q2p};
    baq_lane_t lane = {query, ref, qual, NULL, NULL, NULL};
    if (grow_ws(q, baq_dp_doubles(&sh, 1)) < 0) {
        errno = ENOMEM;
        return INT_MIN;
    }
    return baq_phred_int(baq_dp_scalar_phred_only(&sh, &lane, q->ws) + .499);
}

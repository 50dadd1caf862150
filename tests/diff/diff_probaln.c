/*
 * diff_probaln.c -- the transcription of htslib 1.16's probaln_glocal
 * (diff_probaln.h). Cells are indexed as htslib's set_u does: column k of row
 * i sits at 3 * (k - max(i - bw, 0) + 1) in a row of i_dim doubles.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "base/ss_exact_fp.h"
#include "diff_probaln.h"

#define TR_EI .25
#define TR_EM .33333333333

typedef struct {
    int lr, lq, bw;
    size_t dim;        /* doubles per row */
    double *f, *b, *s; /* f, b: lq + 1 rows; s: lq + 2 */
    double m[9], sM, sI, bM, bI;
    float *qp; /* 10^(-q/10) per query base, in float as htslib's table */
} tr_t;

static int cell(int bw, int i, int k)
{
    int x = i - bw > 0 ? i - bw : 0;
    return (k - x + 1) * 3;
}

/* The emission of query base qb (prob. of error p) against reference code rb. */
static double emit(uint8_t rb, uint8_t qb, float p)
{
    if (rb > 3 || qb > 3)
        return 1.;
    return rb == qb ? 1. - p : p * TR_EM;
}

/* Transitions: d and e are floats, so parts are computed in float, as htslib does. */
static void transitions(tr_t *t, const probaln_par_t *c)
{
    t->sM = t->sI = 1. / (2 * t->lq + 2);
    t->m[0] = (1 - c->d - c->d) * (1 - t->sM);
    t->m[1] = t->m[2] = c->d * (1 - t->sM);
    t->m[3] = (1 - c->e) * (1 - t->sI);
    t->m[4] = c->e * (1 - t->sI);
    t->m[5] = 0.;
    t->m[6] = 1 - c->e;
    t->m[7] = 0.;
    t->m[8] = c->e;
    t->bM = (1 - c->d) / t->lr;
    t->bI = c->d / t->lr;
}

static void forward_row1(tr_t *t, const uint8_t *ref, const uint8_t *query)
{
    double *fi = t->f + t->dim, sum = 0.;
    int end = t->lr < t->bw + 1 ? t->lr : t->bw + 1;
    for (int k = 1; k <= end; k++) {
        int u = cell(t->bw, 1, k);
        fi[u] = emit(ref[k - 1], query[0], t->qp[0]) * t->bM;
        fi[u + 1] = TR_EI * t->bI;
        sum += fi[u] + fi[u + 1];
    }
    t->s[1] = sum;
}

static void forward_row(tr_t *t, int i, const uint8_t *ref, const uint8_t *query)
{
    double *fi = t->f + i * t->dim, *fp = t->f + (i - 1) * t->dim;
    int beg = i - t->bw > 1 ? i - t->bw : 1, end = i + t->bw < t->lr ? i + t->bw : t->lr;
    double M = 1. / t->s[i - 1], xm[5];
    xm[0] = M * t->m[0], xm[1] = M * t->m[3], xm[2] = M * t->m[6];
    xm[3] = TR_EI * M * t->m[1], xm[4] = TR_EI * M * t->m[4];
    double *x = fi + cell(t->bw, i, beg), *y = fp + cell(t->bw, i - 1, beg - 1);
    double lx0 = t->m[2] * x[0], lx2 = t->m[8] * x[2], sum = 0.;
    for (int k = beg; k <= end; k++, x += 3, y += 3) {
        double z0 = xm[0] * y[0], z1 = xm[1] * y[1], z2 = xm[2] * y[2];
        double z3 = xm[3] * y[3], z4 = xm[4] * y[4];
        x[0] = emit(ref[k - 1], query[i - 1], t->qp[i - 1]) * (z0 + z1 + z2);
        x[1] = z3 + z4;
        x[2] = lx0 + lx2;
        sum += x[0] + x[1] + x[2];
        lx0 = t->m[2] * x[0];
        lx2 = t->m[8] * x[2];
    }
    t->s[i] = sum;
}

static void last_scale(tr_t *t)
{
    double sum = 0., M = 1. / t->s[t->lq], *fl = t->f + t->lq * t->dim;
    for (int k = 1; k <= t->lr; k++) {
        int u = cell(t->bw, t->lq, k);
        if (u < 3 || (size_t)u >= t->dim - 3)
            continue;
        sum += M * fl[u] * t->sM + M * fl[u + 1] * t->sI;
    }
    t->s[t->lq + 1] = sum;
}

static double likelihood(const tr_t *t)
{
    double p = 1., pr = 0.;
    for (int i = 0; i <= t->lq + 1; i++) {
        p *= t->s[i];
        if (p < 1e-100)
            pr += -4.343 * log(p), p = 1.;
    }
    return pr + -4.343 * log(p * t->lr * t->lq);
}

static void backward(tr_t *t, const uint8_t *ref, const uint8_t *query)
{
    double *bl = t->b + t->lq * t->dim;
    for (int k = 1; k <= t->lr; k++) {
        int u = cell(t->bw, t->lq, k);
        if (u < 3 || (size_t)u >= t->dim - 3)
            continue;
        bl[u] = t->sM / t->s[t->lq] / t->s[t->lq + 1];
        bl[u + 1] = t->sI / t->s[t->lq] / t->s[t->lq + 1];
    }
    for (int i = t->lq - 1; i >= 1; i--) {
        double *bi = t->b + i * t->dim, *bn = t->b + (i + 1) * t->dim, y = i > 1;
        int beg = i - t->bw > 1 ? i - t->bw : 1, end = i + t->bw < t->lr ? i + t->bw : t->lr;
        double *x = bi + cell(t->bw, i, end), *yn = bn + cell(t->bw, i + 1, end);
        double x5 = x[5], e1 = TR_EI * t->m[1], e4 = TR_EI * t->m[4], n = 1. / t->s[i];
        for (int k = end; k >= beg; k--, x -= 3, yn -= 3) {
            double e = k >= t->lr ? 0 : emit(ref[k], query[i], t->qp[i]) * yn[3];
            x[1] = e * t->m[3] + e4 * yn[1];
            x[0] = e * t->m[0] + e1 * yn[1] + t->m[2] * x5;
            x[2] = (e * t->m[6] + t->m[8] * x5) * y;
            x5 = x[2];
            x[1] *= n, x[0] *= n, x[2] *= n;
        }
    }
}

static void map(const tr_t *t, int *state, double *miss)
{
    for (int i = 1; i <= t->lq; i++) {
        const double *fi = t->f + i * t->dim, *bi = t->b + i * t->dim;
        int beg = i - t->bw > 1 ? i - t->bw : 1, end = i + t->bw < t->lr ? i + t->bw : t->lr;
        double M = 1. / t->s[i], sum = 0., max = 0.;
        int max_k = -1;
        for (int k = beg, u = cell(t->bw, i, beg); k <= end; k++, u += 3) {
            double z1 = M * fi[u] * bi[u], z2 = M * fi[u + 1] * bi[u + 1];
            int which = z2 > z1;
            double zm = which ? z2 : z1;
            if (zm > max)
                max = zm, max_k = (k - 1) << 2 | which;
            sum += z1 + z2;
        }
        max /= sum;
        state[i - 1] = max_k;
        miss[i - 1] = 1. - max;
    }
}

int tr_probaln(const uint8_t *ref, int l_ref, const uint8_t *query, int l_query,
               const uint8_t *qual, const probaln_par_t *par, double *phred, int *state,
               double *miss)
{
    *phred = 0.;
    if (l_ref < 0 || l_query < 0 || l_query >= INT_MAX - 2)
        return INT_MIN;
    if (l_ref == 0 || l_query == 0)
        return 0;
    tr_t t = {.lr = l_ref, .lq = l_query};
    t.bw = l_ref > l_query ? l_ref : l_query;
    if (t.bw > par->bw)
        t.bw = par->bw;
    if (t.bw < abs(l_ref - l_query))
        t.bw = abs(l_ref - l_query);
    int bw2 = 2 * t.bw + 1;
    t.dim = bw2 < l_ref ? (size_t)bw2 * 3 + 6 : (size_t)l_ref * 3 + 6;
    t.f = calloc((size_t)(l_query + 1) * t.dim, sizeof(double));
    t.b = state ? calloc((size_t)(l_query + 1) * t.dim, sizeof(double)) : NULL;
    t.s = malloc((size_t)(l_query + 2) * sizeof(double));
    t.qp = malloc((size_t)l_query * sizeof(float));
    int ret = INT_MIN;
    if (!t.f || !t.s || !t.qp || (state && !t.b))
        goto out;
    for (int i = 0; i < l_query; i++)
        t.qp[i] = (float)pow(10, -(qual ? qual[i] : 30) / 10.);
    transitions(&t, par);
    t.f[cell(t.bw, 0, 0)] = t.s[0] = 1.;
    forward_row1(&t, ref, query);
    for (int i = 2; i <= l_query; i++)
        forward_row(&t, i, ref, query);
    last_scale(&t);
    *phred = likelihood(&t);
    double r = *phred + .499; /* htslib's (int) on x86-64: INT_MIN when out of range */
    ret = r > -2147483649.0 && r < 2147483648.0 ? (int)r : INT_MIN;
    if (state) {
        backward(&t, ref, query);
        map(&t, state, miss);
    }
out:
    free(t.f), free(t.b), free(t.s), free(t.qp);
    return ret;
}

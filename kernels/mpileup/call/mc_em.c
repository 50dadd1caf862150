/*
 * mc_em.c -- the consensus caller's site estimates (bcftools 1.16 em.c,
 * single-locus part): the REF allele frequency by EM, with Brent's method
 * (kmin.c) when EM is slow, then genotype frequencies and the HWE test.
 *
 * P(D|G) here come three per sample in the consensus caller's order:
 * ALT/ALT, REF/ALT, REF/REF. Frequencies are the REF allele's.
 */
#include <math.h>
#include <string.h>

#include <htslib/kfunc.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

#define EM_TRIES 10 /* EM steps before switching to Brent */
#define G3_STEPS 50
#define EM_EPS   1e-5

typedef struct {
    const double *pdg;
    int beg, end;
} em_data_t;

/* A first guess: the samples' most likely genotypes counted; -1 when no sample has data. */
static double guess_freq(int n, const double *pdg)
{
    int count[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        const double *p = pdg + i * 3;
        if (p[0] == 1. && p[1] == 1. && p[2] == 1.)
            continue;
        int best = p[0] > p[1] ? 0 : 1;
        best = p[best] > p[2] ? best : 2;
        count[best]++;
    }
    int total = count[0] + count[1] + count[2];
    return total == 0 ? -1.0 : (.5 * count[1] + count[2]) / total;
}

/* Minus the log likelihood of the samples at REF frequency f (Brent's target). */
static double minus_log_lk(double f, const em_data_t *d)
{
    if (f < 0 || f > 1)
        return 1e300;
    double f3[3] = {(1. - f) * (1. - f), 2. * f * (1. - f), f * f};
    double p = 1., l = 0.;
    for (int i = d->beg; i < d->end; i++) {
        const double *pdg = d->pdg + i * 3;
        p *= pdg[0] * f3[0] + pdg[1] * f3[1] + pdg[2] * f3[2];
        if (p < 1e-200) {
            l -= log(p);
            p = 1.;
        }
    }
    return l - log(p);
}

/* One EM step of the frequency; returns how far it moved. */
static double em_step(double *f, const em_data_t *d)
{
    double f0 = *f;
    double f3[3] = {(1. - f0) * (1. - f0), 2. * f0 * (1. - f0), f0 * f0};
    double next = 0.;
    for (int i = d->beg; i < d->end; i++) {
        const double *pdg = d->pdg + i * 3;
        next += (pdg[1] * f3[1] + 2. * pdg[2] * f3[2]) /
                (pdg[0] * f3[0] + pdg[1] * f3[1] + pdg[2] * f3[2]);
    }
    next /= (d->end - d->beg) * 2;
    double moved = fabs(next - *f);
    *f = next;
    return moved;
}

/*
 * Widen [a, b] downhill until it brackets a minimum (golden-section steps
 * and parabolic jumps of at most 100 times the last step); the bracket comes
 * back in pts[0..2] with its values in fp[0..2], a < b < c not yet ordered.
 */
static void bracket(const em_data_t *d, double a, double b, double pts[3], double fp[3])
{
    const double gold = 1.6180339887, tiny = 1e-20;
    double fa = minus_log_lk(a, d), fb = minus_log_lk(b, d), t;
    if (fb > fa) {
        t = a, a = b, b = t;
        t = fa, fa = fb, fb = t;
    }
    double c = b + gold * (b - a), fc = minus_log_lk(c, d), u, fu;
    while (fb > fc) {
        double limit = b + 100.0 * (c - b);
        double r = (b - a) * (fb - fc), q = (b - c) * (fb - fa);
        double denom = fabs(q - r) < tiny ? (q > r ? tiny : 0.0 - tiny) : q - r;
        u = b - ((b - c) * q - (b - a) * r) / (2.0 * denom);
        if ((b > u && u > c) || (b < u && u < c)) {
            fu = minus_log_lk(u, d);
            if (fu < fc) {
                a = b, b = u, fa = fb, fb = fu;
                break;
            } else if (fu > fb) {
                c = u, fc = fu;
                break;
            }
            u = c + gold * (c - b);
            fu = minus_log_lk(u, d);
        } else if ((c > u && u > limit) || (c < u && u < limit)) {
            fu = minus_log_lk(u, d);
            if (!(fu < fc)) {
                a = b, b = c, c = u, fa = fb, fb = fc, fc = fu;
                break;
            }
            b = c, c = u, u = c + gold * (c - b);
            fb = fc, fc = fu, fu = minus_log_lk(u, d);
        } else if ((u > limit && limit > c) || (u < limit && limit < c)) {
            u = limit;
            fu = minus_log_lk(u, d);
        } else {
            u = c + gold * (c - b);
            fu = minus_log_lk(u, d);
        }
        a = b, b = c, c = u, fa = fb, fb = fc, fc = fu;
    }
    pts[0] = a, pts[1] = b, pts[2] = c;
    fp[0] = fa, fp[1] = fb, fp[2] = fc;
}

/* Brent's state: the bracket [a, c], the best point b, the next best w, v. */
typedef struct {
    double a, b, c, v, w, fb, fv, fw;
    double e, dx; /* the step before last, and the last */
} brent_t;

/* The next step from b: parabolic through b, w, v when it is sound, else golden. */
static void brent_step(brent_t *s, double mid, double tol1, double tol2)
{
    const double gold2 = 0.3819660113;
    if (fabs(s->e) > tol1) {
        double r = (s->b - s->w) * (s->fb - s->fv);
        double q = (s->b - s->v) * (s->fb - s->fw);
        double p = (s->b - s->v) * q - (s->b - s->w) * r;
        q = 2.0 * (q - r);
        if (q > 0.0)
            p = 0.0 - p;
        else
            q = 0.0 - q;
        double e_old = s->e;
        s->e = s->dx;
        if (!(fabs(p) >= fabs(0.5 * q * e_old) || p <= q * (s->a - s->b) ||
              p >= q * (s->c - s->b))) {
            s->dx = p / q;
            double u = s->b + s->dx;
            if (u - s->a < tol2 || s->c - u < tol2)
                s->dx = (mid > s->b) ? tol1 : 0.0 - tol1;
            return;
        }
    }
    s->e = s->b >= mid ? s->a - s->b : s->c - s->b;
    s->dx = gold2 * s->e;
}

/* Take the point u with value fu into the state. */
static void brent_update(brent_t *s, double u, double fu)
{
    if (fu <= s->fb) {
        if (u >= s->b)
            s->a = s->b;
        else
            s->c = s->b;
        s->v = s->w, s->w = s->b, s->b = u;
        s->fv = s->fw, s->fw = s->fb, s->fb = fu;
        return;
    }
    if (u < s->b)
        s->a = u;
    else
        s->c = u;
    if (fu <= s->fw || s->w == s->b) {
        s->v = s->w, s->w = u;
        s->fv = s->fw, s->fw = fu;
    } else if (fu <= s->fv || s->v == s->b || s->v == s->w) {
        s->v = u, s->fv = fu;
    }
}

/*
 * Brent's minimisation of minus_log_lk started from a and b, to relative
 * tolerance tol (kmin_brent, step for step: its last bits decide AF1).
 */
static double brent_min(const em_data_t *d, double a0, double b0, double tol)
{
    const double tiny = 1e-20;
    double pts[3], fp[3];
    bracket(d, a0, b0, pts, fp);
    brent_t s = {.a = pts[0], .b = pts[1], .c = pts[2], .fb = fp[1]};
    if (s.a > s.c) {
        double t = s.a;
        s.a = s.c, s.c = t;
    }
    s.w = s.v = s.b;
    s.fw = s.fv = s.fb;
    for (int iter = 0; iter != 100; iter++) {
        double mid = 0.5 * (s.a + s.c);
        double tol1 = tol * fabs(s.b) + tiny, tol2 = 2.0 * tol1;
        if (fabs(s.b - mid) <= (tol2 - 0.5 * (s.c - s.a)))
            break;
        brent_step(&s, mid, tol1, tol2);
        double u = fabs(s.dx) >= tol1 ? s.b + s.dx : s.b + (s.dx > 0.0 ? tol1 : -tol1);
        brent_update(&s, u, minus_log_lk(u, d));
    }
    return s.b;
}

/* The ML REF frequency of samples beg..end from f0: EM, then Brent if EM has not settled. */
static double ml_freq(double f0, const em_data_t *d)
{
    double f = f0;
    int i;
    for (i = 0; i < EM_TRIES; i++)
        if (em_step(&f, d) < EM_EPS)
            break;
    if (i == EM_TRIES)
        f = brent_min(d, f0 == f ? .5 * f0 : f0, f, EM_EPS);
    return f;
}

/* One EM step of the genotype frequencies g (ALT/ALT, REF/ALT, REF/REF); the largest move. */
static double g3_step(double g[3], const em_data_t *d)
{
    double next[3] = {0., 0., 0.};
    for (int i = d->beg; i < d->end; i++) {
        const double *pdg = d->pdg + i * 3;
        double t[3] = {pdg[0] * g[0], pdg[1] * g[1], pdg[2] * g[2]};
        double sum = (t[0] + t[1] + t[2]) * (d->end - d->beg);
        next[0] += t[0] / sum;
        next[1] += t[1] / sum;
        next[2] += t[2] / sum;
    }
    double e0 = fabs(next[0] - g[0]), e1 = fabs(next[1] - g[1]), e2 = fabs(next[2] - g[2]);
    double err = e0 > e1 ? e0 : e1;
    err = err > e2 ? err : e2;
    memcpy(g, next, sizeof(next));
    return err;
}

/*
 * bcf_em1 as -c runs it (one group, flag 0x1ff): x[0] the REF frequency,
 * x[1..3] the genotype frequencies (ALT/ALT, REF/ALT, REF/REF), x[4] the HWE
 * P-value; x[5..9] stay -1. Returns -1 (x[0] -1) when no sample has data or
 * there is no ALT, else 0.
 */
int mc_em_site(const double *pdg, int nsmpl, int n_allele, double x[10])
{
    for (int i = 0; i < 10; i++)
        x[i] = -1.;
    if (n_allele < 2)
        return -1;
    em_data_t d = {pdg, 0, nsmpl};
    if ((x[0] = guess_freq(nsmpl, pdg)) < 0.)
        return -1;
    x[0] = ml_freq(x[0], &d);
    double *g = x + 1, f3[3];
    f3[0] = g[0] = (1 - x[0]) * (1 - x[0]);
    f3[1] = g[1] = 2 * x[0] * (1 - x[0]);
    f3[2] = g[2] = x[0] * x[0];
    for (int i = 0; i < G3_STEPS; i++)
        if (g3_step(g, &d) < EM_EPS)
            break;
    double r = 1.;
    for (int i = 0; i < nsmpl; i++) {
        const double *p = pdg + i * 3;
        r *= (p[0] * g[0] + p[1] * g[1] + p[2] * g[2]) /
             (p[0] * f3[0] + p[1] * f3[1] + p[2] * f3[2]);
    }
    x[4] = kf_gammaq(.5, log(r));
    return 0;
}

/*
 * baq_dp.h -- the body of the forward-backward pass, included once per width
 * by baq_scalar.c, baq_sse2.c and baq_avx2.c (not a header of its own).
 *
 * Before including, define:
 *   BAQ_W          lanes (reads) per step
 *   BAQ_FN         the function's name
 *   BAQ_VD         W doubles (double itself for W = 1)
 *   BAQ_VM         what comparing two BAQ_VD gives (W 64-bit masks, or int)
 *   BAQ_SEL(m,a,b) per lane: m ? a : b
 *
 * The pass is htslib 1.16's probaln_glocal as it is compiled (its optimised
 * branch, not PROBALN_ORIG), with b[0] left out because sam_prob_realn does
 * not use it; the likelihood is computed only by the forward-only score
 * (scalar width), which bcftools' indel scoring uses. Every expression keeps htslib's operand order
 * and grouping ((a + b) + c is not a + (b + c) in floating point); a lane is
 * a read, so the lanes never mix. Cells the pass reads but never writes are
 * zero, as htslib's calloc leaves them: each row zeroes the cell on either
 * side of its band.
 *
 * Band geometry (htslib's set_u): row i covers reference columns
 * k = max(1, i-bw) .. min(l_ref, i+bw), and column k sits in cell
 * k - max(i-bw, 0) + 1 of a row of R = min(2bw+1, l_ref) + 2 cells. The first
 * and last rows' loops only use cells 1 .. R-2 (htslib's u >= 3 && u < i_dim-3),
 * which leaves out the last column of short reads on short windows.
 */

#define BQ_CAT2(a, b) a##_##b
#define BQ_CAT(a, b)  BQ_CAT2(a, b)
#define BQ(name)      BQ_CAT(BAQ_FN, name)

#define BQ_EM .33333333333
#define BQ_EI .25

#define BQ_LD(p)    (*(const BAQ_VD *)(p))
#define BQ_ST(p, v) (*(BAQ_VD *)(p) = (v))

static inline BAQ_VD BQ(splat)(double x)
{
    BAQ_VD v;
    double *p = (double *)&v;
    for (int l = 0; l < BAQ_W; l++)
        p[l] = x;
    return v;
}

/*
 * Emission probability: 1 for an N on either side (an N in the query made
 * match and mis 1 already), else match or mismatch. One lane picks from a
 * table, as htslib does: a branch would be mispredicted on every error.
 */
#if BAQ_W == 1
static inline double BQ(emit)(double r, double qc, double match, double mis, double one,
                              double four)
{
    (void)four;
    const double t[4] = {mis, match, one, one};
    return t[(r > 3.) * 2 + (r == qc)];
}
#else
static inline BAQ_VD BQ(emit)(BAQ_VD r, BAQ_VD qc, BAQ_VD match, BAQ_VD mis, BAQ_VD one,
                              BAQ_VD four)
{
    BAQ_VM amb = r == four, eq = r == qc;
    BAQ_VD e = BAQ_SEL(eq, match, mis);
    return BAQ_SEL(amb, one, e);
}
#endif

typedef struct {
    int lq, lr, bw, S; /* S: cells per stored row (R + 2) */
    double *F, *B, *s; /* forward rows 0..lq, two backward rows, scale factors */
    double *qc, *match, *mis, *rc;
} BQ(ctx_t);

static inline int BQ(beg)(int i, int bw)
{
    return i - bw > 1 ? i - bw : 1;
}

static inline int BQ(end)(int i, int bw, int lr)
{
    return i + bw < lr ? i + bw : lr;
}

/* The cell of column k in row i. */
static inline int BQ(cell)(int i, int k, int bw)
{
    int x = i - bw > 0 ? i - bw : 0;
    return k - x + 1;
}

static inline double *BQ(at)(double *row, int c, int st)
{
    return row + ((size_t)c * 3 + st) * BAQ_W;
}

static inline void BQ(zero_cell)(double *row, int c)
{
    BAQ_VD z = BQ(splat)(0.);
    for (int st = 0; st < 3; st++)
        BQ_ST(BQ(at)(row, c, st), z);
}

/* Per lane: query codes, emissions per row (N in the query: 1), reference codes. */
static void BQ(setup)(BQ(ctx_t) * x, const baq_shape_t *sh, const baq_lane_t *ln)
{
    for (int l = 0; l < BAQ_W; l++) {
        for (int i = 0; i < x->lq; i++) {
            double qp = sh->q2p[ln[l].qual[i]];
            int amb = ln[l].tseq[i] > 3;
            x->qc[i * BAQ_W + l] = ln[l].tseq[i];
            x->match[i * BAQ_W + l] = amb ? 1. : 1. - qp;
            x->mis[i * BAQ_W + l] = amb ? 1. : qp * BQ_EM;
        }
        for (int k = 0; k < x->lr; k++)
            x->rc[k * BAQ_W + l] = ln[l].tref[k];
    }
}

static void BQ(forward)(BQ(ctx_t) * x, const double *m, double bM, double bI)
{
    const int lq = x->lq, lr = x->lr, bw = x->bw;
    const size_t row = (size_t)x->S * 3 * BAQ_W;
    const BAQ_VD one = BQ(splat)(1.), four = BQ(splat)(4.);
    BQ_ST(x->s, one);
    { /* row 1: from the start state */
        double *fi = x->F + row;
        int end = BQ(end)(1, bw, lr);
        BAQ_VD sum = BQ(splat)(0.), q = BQ_LD(x->qc), ma = BQ_LD(x->match), mi = BQ_LD(x->mis);
        BAQ_VD vbM = BQ(splat)(bM), vI = BQ(splat)(BQ_EI * bI);
        BQ(zero_cell)(fi, BQ(cell)(1, 1, bw) - 1);
        BQ(zero_cell)(fi, BQ(cell)(1, end, bw) + 1);
        for (int k = 1; k <= end; k++) {
            double *c = BQ(at)(fi, BQ(cell)(1, k, bw), 0);
            BAQ_VD e = BQ(emit)(BQ_LD(x->rc + (k - 1) * BAQ_W), q, ma, mi, one, four);
            BAQ_VD vm = e * vbM;
            BQ_ST(c, vm);
            BQ_ST(c + BAQ_W, vI);
            BQ_ST(c + 2 * BAQ_W, BQ(splat)(0.));
            sum = sum + (vm + vI);
        }
        BQ_ST(x->s + BAQ_W, sum);
    }
    const BAQ_VD m2 = BQ(splat)(m[2]), m8 = BQ(splat)(m[8]);
    for (int i = 2; i <= lq; i++) {
        double *fi = x->F + i * row, *fp = x->F + (i - 1) * row;
        int beg = BQ(beg)(i, bw), end = BQ(end)(i, bw, lr);
        BAQ_VD M = one / BQ_LD(x->s + (i - 1) * BAQ_W), EIM = BQ(splat)(BQ_EI) * M;
        BAQ_VD xm0 = M * BQ(splat)(m[0]), xm1 = M * BQ(splat)(m[3]), xm2 = M * BQ(splat)(m[6]);
        BAQ_VD xm3 = EIM * BQ(splat)(m[1]), xm4 = EIM * BQ(splat)(m[4]);
        BAQ_VD q = BQ_LD(x->qc + (i - 1) * BAQ_W), ma = BQ_LD(x->match + (i - 1) * BAQ_W);
        BAQ_VD mi = BQ_LD(x->mis + (i - 1) * BAQ_W);
        BAQ_VD sum = BQ(splat)(0.), lx0 = sum, lx2 = sum;
        int cb = BQ(cell)(i, beg, bw), ce = BQ(cell)(i, end, bw);
        BQ(zero_cell)(fi, cb - 1);
        BQ(zero_cell)(fi, ce + 1);
        double *xi = BQ(at)(fi, cb, 0), *yi = BQ(at)(fp, BQ(cell)(i - 1, beg - 1, bw), 0);
        const double *r = x->rc + (beg - 1) * BAQ_W;
        for (int k = beg; k <= end; k++, xi += 3 * BAQ_W, yi += 3 * BAQ_W, r += BAQ_W) {
            BAQ_VD e = BQ(emit)(BQ_LD(r), q, ma, mi, one, four);
            BAQ_VD z0 = xm0 * BQ_LD(yi), z1 = xm1 * BQ_LD(yi + BAQ_W);
            BAQ_VD z2 = xm2 * BQ_LD(yi + 2 * BAQ_W), z3 = xm3 * BQ_LD(yi + 3 * BAQ_W);
            BAQ_VD z4 = xm4 * BQ_LD(yi + 4 * BAQ_W);
            BAQ_VD vm = e * ((z0 + z1) + z2), vi = z3 + z4, vd = lx0 + lx2;
            BQ_ST(xi, vm);
            BQ_ST(xi + BAQ_W, vi);
            BQ_ST(xi + 2 * BAQ_W, vd);
            sum = sum + ((vm + vi) + vd);
            lx0 = m2 * vm;
            lx2 = m8 * vd;
        }
        BQ_ST(x->s + i * BAQ_W, sum);
    }
}

/* The last scaling factor: the end state from row lq. */
static void BQ(last_scale)(BQ(ctx_t) * x, double sM, double sI)
{
    const int lq = x->lq, bw = x->bw, R = x->S - 2;
    double *fl = x->F + (size_t)lq * x->S * 3 * BAQ_W;
    BAQ_VD M = BQ(splat)(1.) / BQ_LD(x->s + lq * BAQ_W), sum = BQ(splat)(0.);
    BAQ_VD vsM = BQ(splat)(sM), vsI = BQ(splat)(sI);
    for (int k = BQ(beg)(lq, bw); k <= BQ(end)(lq, bw, x->lr); k++) {
        int c = BQ(cell)(lq, k, bw);
        if (c < 1 || c > R - 2)
            continue;
        sum = sum + ((M * BQ_LD(BQ(at)(fl, c, 0))) * vsM + (M * BQ_LD(BQ(at)(fl, c, 1))) * vsI);
    }
    BQ_ST(x->s + (lq + 1) * BAQ_W, sum);
}

/* Posterior of row i: the best state and 1 - its probability, per lane. */
static void BQ(map_row)(BQ(ctx_t) * x, int i, const double *bi, const baq_lane_t *ln)
{
    const int bw = x->bw;
    const double *fi = x->F + (size_t)i * x->S * 3 * BAQ_W;
    int beg = BQ(beg)(i, bw), end = BQ(end)(i, bw, x->lr), c = BQ(cell)(i, beg, bw);
    BAQ_VD M = BQ(splat)(1.) / BQ_LD(x->s + i * BAQ_W);
    BAQ_VD sum = BQ(splat)(0.), max = sum, idx = BQ(splat)(-1.), kd = BQ(splat)((beg - 1) * 4.);
    const BAQ_VD one = BQ(splat)(1.), four = BQ(splat)(4.);
    const double *f = fi + (size_t)c * 3 * BAQ_W, *b = bi + (size_t)c * 3 * BAQ_W;
    for (int k = beg; k <= end; k++, f += 3 * BAQ_W, b += 3 * BAQ_W, kd = kd + four) {
        BAQ_VD z1 = (M * BQ_LD(f)) * BQ_LD(b);
        BAQ_VD z2 = (M * BQ_LD(f + BAQ_W)) * BQ_LD(b + BAQ_W);
        BAQ_VM which = z2 > z1;
        BAQ_VD zm = BAQ_SEL(which, z2, z1), cand = BAQ_SEL(which, kd + one, kd);
        BAQ_VM up = zm > max;
        max = BAQ_SEL(up, zm, max);
        idx = BAQ_SEL(up, cand, idx);
        sum = sum + (z1 + z2);
    }
    const double *pm = (const double *)&max, *ps = (const double *)&sum;
    const double *pi = (const double *)&idx;
    for (int l = 0; l < BAQ_W; l++) {
        ln[l].state[i - 1] = (int)pi[l];
        ln[l].miss[i - 1] = 1. - pm[l] / ps[l];
    }
}

/* Backward rows lq..1 in two alternating rows, each row's posterior as it is done. */
static void BQ(backward)(BQ(ctx_t) * x, const double *m, double sM, double sI, const baq_lane_t *ln)
{
    const int lq = x->lq, lr = x->lr, bw = x->bw, R = x->S - 2;
    const size_t row = (size_t)x->S * 3 * BAQ_W;
    const BAQ_VD one = BQ(splat)(1.), four = BQ(splat)(4.), zero = BQ(splat)(0.);
    { /* row lq: to the end state */
        double *bl = x->B + (lq & 1) * row;
        BAQ_VD sl = BQ_LD(x->s + lq * BAQ_W), se = BQ_LD(x->s + (lq + 1) * BAQ_W);
        BAQ_VD vm = BQ(splat)(sM) / sl / se, vi = BQ(splat)(sI) / sl / se;
        for (int c = 0; c < x->S; c++)
            BQ(zero_cell)(bl, c);
        for (int k = BQ(beg)(lq, bw); k <= BQ(end)(lq, bw, lr); k++) {
            int c = BQ(cell)(lq, k, bw);
            if (c < 1 || c > R - 2)
                continue;
            BQ_ST(BQ(at)(bl, c, 0), vm);
            BQ_ST(BQ(at)(bl, c, 1), vi);
        }
        BQ(map_row)(x, lq, bl, ln);
    }
    const BAQ_VD m0 = BQ(splat)(m[0]), m2 = BQ(splat)(m[2]), m3 = BQ(splat)(m[3]);
    const BAQ_VD m6 = BQ(splat)(m[6]), m8 = BQ(splat)(m[8]);
    const BAQ_VD e1 = BQ(splat)(BQ_EI * m[1]), e4 = BQ(splat)(BQ_EI * m[4]);
    for (int i = lq - 1; i >= 1; i--) {
        double *bi = x->B + (i & 1) * row, *bn = x->B + ((i + 1) & 1) * row;
        int beg = BQ(beg)(i, bw), end = BQ(end)(i, bw, lr);
        int cb = BQ(cell)(i, beg, bw), ce = BQ(cell)(i, end, bw);
        BAQ_VD q = BQ_LD(x->qc + i * BAQ_W), ma = BQ_LD(x->match + i * BAQ_W);
        BAQ_VD mi = BQ_LD(x->mis + i * BAQ_W), n = one / BQ_LD(x->s + i * BAQ_W);
        BAQ_VD x5 = zero; /* the D state right of the band: never written, so zero */
        BQ(zero_cell)(bi, cb - 1);
        BQ(zero_cell)(bi, ce + 1);
        double *xi = BQ(at)(bi, ce, 0);
        const double *yi = BQ(at)(bn, BQ(cell)(i + 1, end, bw), 0);
        for (int k = end; k >= beg; k--, xi -= 3 * BAQ_W, yi -= 3 * BAQ_W) {
            BAQ_VD e = zero;
            if (k < lr)
                e = BQ(emit)(BQ_LD(x->rc + k * BAQ_W), q, ma, mi, one, four) *
                    BQ_LD(yi + 3 * BAQ_W);
            BAQ_VD yI = BQ_LD(yi + BAQ_W);
            BAQ_VD vi = e * m3 + e4 * yI;
            BAQ_VD vm = (e * m0 + e1 * yI) + m2 * x5;
            BAQ_VD vd = e * m6 + m8 * x5;
            if (i == 1)
                vd = vd * zero; /* htslib multiplies by (i > 1); by 1 changes nothing */
            x5 = vd;
            BQ_ST(xi + BAQ_W, vi * n);
            BQ_ST(xi, vm * n);
            BQ_ST(xi + 2 * BAQ_W, vd * n);
        }
        BQ(map_row)(x, i, bi, ln);
    }
}

/* The context over workspace ws, and the transitions as htslib sets them up. */
static void BQ(begin)(BQ(ctx_t) * x, const baq_shape_t *sh, double *ws, double *m, double *sMI)
{
    const int lq = sh->l_query, lr = sh->l_ref, bw = sh->bw;
    x->lq = lq, x->lr = lr, x->bw = bw;
    x->S = (2 * bw + 1 < lr ? 2 * bw + 1 : lr) + 4;
    size_t row = (size_t)x->S * 3 * BAQ_W;
    x->F = ws;
    x->B = x->F + (size_t)(lq + 1) * row;
    x->s = x->B + 2 * row;
    x->qc = x->s + (size_t)(lq + 2) * BAQ_W;
    x->match = x->qc + (size_t)lq * BAQ_W;
    x->mis = x->match + (size_t)lq * BAQ_W;
    x->rc = x->mis + (size_t)lq * BAQ_W;

    /*
     * htslib's gap probabilities are floats and its constants ints, so (1 - d - d),
     * (1 - e) and the begin transitions are single-precision expressions widened to
     * double afterwards (C's usual conversions; x86-64 evaluates float in float).
     * Computing them in double gives other transitions and, about once in 10^5
     * indel scores, another rounded likelihood.
     */
    const float d = sh->d, e = sh->e;
    double sM = 1. / (2 * lq + 2), sI = sM;
    m[0 * 3 + 0] = (double)(1 - d - d) * (1 - sM);
    m[0 * 3 + 1] = m[0 * 3 + 2] = (double)d * (1 - sM);
    m[1 * 3 + 0] = (double)(1 - e) * (1 - sI);
    m[1 * 3 + 1] = (double)e * (1 - sI);
    m[1 * 3 + 2] = 0.;
    m[2 * 3 + 0] = (double)(1 - e);
    m[2 * 3 + 1] = 0.;
    m[2 * 3 + 2] = (double)e;
    sMI[0] = sM, sMI[1] = sI;
}

/*
 * What probaln_glocal returns for lane l, from its scaling factors, in htslib's
 * order: the phred-scaled likelihood (phred: before rounding; likelihood:
 * rounded, INT_MIN where that is no int).
 */
static double BQ(phred)(const BQ(ctx_t) * x, int lane)
{
    double p = 1., pr = 0.;
    for (int i = 0; i <= x->lq + 1; i++) {
        p *= x->s[i * BAQ_W + lane];
        if (p < 1e-100)
            pr += -4.343 * log(p), p = 1.;
    }
    return pr + -4.343 * log(p * x->lr * x->lq);
}

static int BQ(likelihood)(const BQ(ctx_t) * x, int lane)
{
    return baq_phred_int(BQ(phred)(x, lane) + .499);
}

/* The begin state's transitions, in float as htslib computes them (see begin). */
static inline double BQ(begin_match)(const baq_shape_t *sh)
{
    return (double)((1 - sh->d) / sh->l_ref);
}

static inline double BQ(begin_insert)(const baq_shape_t *sh)
{
    return (double)(sh->d / sh->l_ref);
}

void BAQ_FN(const baq_shape_t *sh, const baq_lane_t *ln, double *ws)
{
    BQ(ctx_t) x;
    double m[9], sMI[2];
    BQ(begin)(&x, sh, ws, m, sMI);
    double bM = BQ(begin_match)(sh), bI = BQ(begin_insert)(sh);
    BQ(setup)(&x, sh, ln);
    BQ(forward)(&x, m, bM, bI);
    BQ(last_scale)(&x, sMI[0], sMI[1]);
    for (int l = 0; l < BAQ_W; l++)
        *ln[l].failed = BQ(likelihood)(&x, l) == -2147483647 - 1;
    BQ(backward)(&x, m, sMI[0], sMI[1], ln);
}

#if BAQ_W == 1
/*
 * What probaln_glocal returns when it is given no state or q arrays (bcftools'
 * indel scoring) before it is rounded: the forward pass only, then the
 * likelihood. ln->state, ln->miss and ln->failed are unused.
 */
double BQ(phred_only)(const baq_shape_t *sh, const baq_lane_t *ln, double *ws)
{
    BQ(ctx_t) x;
    double m[9], sMI[2];
    BQ(begin)(&x, sh, ws, m, sMI);
    double bM = BQ(begin_match)(sh), bI = BQ(begin_insert)(sh);
    BQ(setup)(&x, sh, ln);
    BQ(forward)(&x, m, bM, bI);
    BQ(last_scale)(&x, sMI[0], sMI[1]);
    return BQ(phred)(&x, 0);
}
#endif

#undef BQ_CAT2
#undef BQ_CAT
#undef BQ
#undef BQ_EM
#undef BQ_EI
#undef BQ_LD
#undef BQ_ST

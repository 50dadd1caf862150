/*
 * diff_indel.c -- the indel model's per-read calls two ways: our
 * mp_indel_assign against a transcription of bcftools 1.16's
 * bcf_cgp_compute_indelQ (bam2bcf_indel.c): the score packing into sort
 * keys, the per-read indelQ and seqQ from the alignment scores and the
 * repeat penalty byte, the sum per candidate, the site's four alleles and
 * each read's p->aux.
 *
 * The scores themselves (alignment score << 8 | penalty, made in
 * mp_indel_align.c's static align_to_hap) need a whole column to reach; the
 * scores here are generated instead: near ties, penalties around 111, the
 * wrap of score << 6 at 2^25, the no-score value, and any int.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/mpileup/indel/mp_indel.h"
#include "base/ss_exact_fp.h"
#include "diff_routines.h"

#define ID_MAX_READS 10000
#define ID_MAX_SMPL  8

typedef struct {
    int n, n_plp[ID_MAX_SMPL], n_reads;
    int types[MP_INDEL_MAX_TYPES], n_types, ref_type, max_ins, l_run;
    int openQ, extQ, tandemQ;
    char ins_cons[MP_INDEL_MAX_TYPES * 60];
    int score[ID_MAX_READS * 8]; /* n_reads x n_types, n_types * n_reads bounded below */
} id_case_t;

/* ---- bcftools 1.16's bcf_cgp_compute_indelQ, transcribed -------------------------------- */

/* x << n as GCC compiles bcftools' shifts of a negative int: two's complement wrap. */
static int id_shl(int x, int n)
{
    return (int)((unsigned)x << n);
}

typedef struct {
    int indel_types[4], maxins;
    char inscns[4 * 60];
} id_out_t;

static int id_est_seqQ(const id_case_t *c, int l, int l_run)
{
    int q = c->openQ + c->extQ * (abs(l) - 1);
    int qh = l_run >= 3 ? (int)(c->tandemQ * (double)abs(l) / l_run + .499) : 1000;
    return q < qh ? q : qh;
}

/* The first loop: one read's sort keys, qualities and p->aux; returns its sum term. */
static int id_read(const id_case_t *c, const int *sct, bam_pileup1_t *p, int *best)
{
    int sc[MP_INDEL_MAX_TYPES], t, j, tmp, seqQ, indelQ, n_types = c->n_types;
    sc[0] = sc[1] = 0; /* n_types >= 2: this tells the compiler */
    for (t = 0; t < n_types; ++t)
        sc[t] = id_shl(sct[t], 6) | t;
    for (t = 1; t < n_types; ++t)
        for (j = t; j > 0 && sc[j] < sc[j - 1]; --j)
            tmp = sc[j], sc[j] = sc[j - 1], sc[j - 1] = tmp;
    if ((sc[0] & 0x3f) == c->ref_type) {
        indelQ = (sc[1] >> 14) - (sc[0] >> 14);
        seqQ = id_est_seqQ(c, c->types[sc[1] & 0x3f], c->l_run);
    } else {
        for (t = 0; t < n_types; ++t)
            if ((sc[t] & 0x3f) == c->ref_type)
                break;
        indelQ = (sc[t] >> 14) - (sc[0] >> 14);
        seqQ = id_est_seqQ(c, c->types[sc[0] & 0x3f], c->l_run);
    }
    tmp = sc[0] >> 6 & 0xff;
    indelQ = tmp > 111 ? 0 : (int)((1. - tmp / 111.) * indelQ + .499);
    if (indelQ > seqQ)
        indelQ = seqQ;
    if (indelQ > 255)
        indelQ = 255;
    if (seqQ > 255)
        seqQ = 255;
    p->aux = (sc[0] & 0x3f) << 16 | id_shl(seqQ, 8) | indelQ;
    *best = sc[0] & 0x3f;
    return indelQ < seqQ ? indelQ : seqQ;
}

static int id_compute_indelQ(const id_case_t *c, bam_pileup1_t *plp, id_out_t *o)
{
    int sumq[MP_INDEL_MAX_TYPES], t, j, tmp, n_alt, n_types = c->n_types, best;
    memset(sumq, 0, n_types * sizeof(int));
    for (int k = 0; k < c->n_reads; k++) {
        int q = id_read(c, &c->score[k * n_types], &plp[k], &best);
        sumq[best] += q;
    }
    o->maxins = c->max_ins;
    for (t = 0; t < n_types; ++t)
        sumq[t] = id_shl(sumq[t], 6) | t;
    for (t = 1; t < n_types; ++t)
        for (j = t; j > 0 && sumq[j] > sumq[j - 1]; --j)
            tmp = sumq[j], sumq[j] = sumq[j - 1], sumq[j - 1] = tmp;
    for (t = 0; t < n_types; ++t)
        if ((sumq[t] & 0x3f) == c->ref_type)
            break;
    if (t) {
        tmp = sumq[t];
        for (; t > 0; --t)
            sumq[t] = sumq[t - 1];
        sumq[0] = tmp;
    }
    for (t = 0; t < 4; ++t)
        o->indel_types[t] = MP_INDEL_NULL;
    for (t = 0; t < 4 && t < n_types; ++t) {
        o->indel_types[t] = c->types[sumq[t] & 0x3f];
        if (o->maxins)
            memcpy(&o->inscns[t * o->maxins], &c->ins_cons[(sumq[t] & 0x3f) * c->max_ins],
                   o->maxins);
    }
    for (int k = n_alt = 0; k < c->n_reads; k++) {
        bam_pileup1_t *p = &plp[k];
        int x = c->types[p->aux >> 16 & 0x3f];
        for (j = 0; j < 4; ++j)
            if (x == o->indel_types[j])
                break;
        p->aux = j << 16 | (j == 4 ? 0 : (p->aux & 0xffff));
        if ((p->aux >> 16 & 0x3f) > 0)
            ++n_alt;
    }
    return n_alt;
}

/* ---- cases ----------------------------------------------------------------------------- */

/* One score: alignment score << 8 | penalty byte, as align_to_hap packs it, or anything. */
static int id_score(diff_rng_t *r, int mode, int base)
{
    int aln, pen = diff_rng_one_in(r, 3) ? diff_rng_range(r, 100, 125) : diff_rng_range(r, 0, 255);
    switch (mode) {
    case 0:
        aln = diff_rng_range(r, 0, 3000);
        break;
    case 1:
        aln = base + diff_rng_range(r, 0, 2);
        break; /* ties */
    case 2:
        aln = (1 << 17) + base % 8 - diff_rng_range(r, 0, 8);
        break; /* << 14 wraps at 2^17 */
    case 3:
        aln = diff_rng_range(r, (1 << 23) - 4, (1 << 23) + 4);
        break; /* << 8 wraps */
    default:
        return diff_rng_one_in(r, 2) ? 0xffffff : (int)diff_rng_next(r);
    }
    if (diff_rng_one_in(r, 40))
        return 0xffffff; /* cannot be aligned */
    return (int)((unsigned)aln << 8) | pen;
}

/* Candidate sizes: distinct, ascending, in -60..60, REF (0) among them. */
static void id_types(diff_rng_t *r, id_case_t *c, int max_types)
{
    int want = diff_rng_one_in(r, 10) ? diff_rng_range(r, 2, max_types) : diff_rng_range(r, 2, 5);
    if (want > max_types)
        want = max_types;
    uint8_t used[121] = {0};
    used[60] = 1;
    for (int k = 1, tries = 0; k < want && tries < 1000; tries++) {
        int v = diff_rng_one_in(r, 2) ? diff_rng_range(r, -8, 8) : diff_rng_range(r, -60, 60);
        if (!used[v + 60])
            used[v + 60] = 1, k++;
    }
    c->n_types = c->max_ins = 0;
    for (int v = -60; v <= 60; v++)
        if (used[v + 60]) {
            if (v == 0)
                c->ref_type = c->n_types;
            c->types[c->n_types++] = v;
            c->max_ins = v > c->max_ins ? v : c->max_ins;
        }
}

static void id_gen(diff_rng_t *r, id_case_t *c)
{
    c->n = diff_rng_range(r, 1, ID_MAX_SMPL);
    int depth =
        diff_rng_one_in(r, 50) ? diff_rng_range(r, 1, ID_MAX_READS) : diff_rng_range(r, 1, 40);
    int max_types = ID_MAX_READS * 8 / depth;
    id_types(r, c, max_types < MP_INDEL_MAX_TYPES ? max_types : MP_INDEL_MAX_TYPES - 1);
    c->n_reads = 0;
    for (int s = 0; s < c->n; s++) {
        int left = depth - c->n_reads;
        c->n_plp[s] = s + 1 < c->n ? (int)diff_rng_below(r, left + 1) : left;
        c->n_reads += c->n_plp[s];
    }
    c->l_run = diff_rng_one_in(r, 2) ? diff_rng_range(r, 1, 3) : diff_rng_range(r, 1, 40);
    c->openQ = diff_rng_one_in(r, 2) ? 40 : diff_rng_range(r, -10, 100);
    c->extQ = diff_rng_one_in(r, 2) ? 20 : diff_rng_range(r, 0, 60);
    c->tandemQ = diff_rng_one_in(r, 2) ? 100 : diff_rng_range(r, 0, 300);
    for (int i = 0; i < c->n_types * c->max_ins; i++)
        c->ins_cons[i] = (char)diff_rng_below(r, 5);
    int mode = (int)diff_rng_below(r, 6), base = diff_rng_range(r, 0, 2000);
    for (int k = 0; k < c->n_reads * c->n_types; k++)
        c->score[k] = id_score(r, mode == 5 ? (int)diff_rng_below(r, 5) : mode, base);
}

/* ---- ours, and the comparison ----------------------------------------------------------- */

typedef struct {
    id_case_t c;
    bam_pileup1_t ours[ID_MAX_READS], theirs[ID_MAX_READS];
    mp_aux_t *bca;
} id_state_t;

/* The first difference, or NULL. */
static const char *id_differs(id_state_t *st, const id_case_t *c)
{
    bam_pileup1_t *plp[ID_MAX_SMPL];
    mp_indel_col_t col;
    memset(&col, 0, sizeof(col));
    col.n = c->n;
    col.n_plp = (int *)c->n_plp;
    for (int s = 0, k = 0; s < c->n; k += c->n_plp[s], s++)
        plp[s] = st->ours + k;
    col.plp = plp;
    memcpy(col.types, c->types, sizeof(col.types));
    col.n_types = c->n_types, col.ref_type = c->ref_type;
    col.max_ins = c->max_ins, col.l_run = c->l_run;
    mp_aux_t *bca = st->bca;
    bca->openQ = c->openQ, bca->extQ = c->extQ, bca->tandemQ = c->tandemQ;
    memset(st->ours, 0, c->n_reads * sizeof(*st->ours));
    memset(st->theirs, 0, c->n_reads * sizeof(*st->theirs));
    int a = mp_indel_assign(&col, bca, c->ins_cons, c->score);
    id_out_t o;
    int b = id_compute_indelQ(c, st->theirs, &o);
    if (a != b)
        return "n_alt";
    int n_als = c->n_types < 4 ? c->n_types : 4; /* inscns past them is stale in both */
    if (memcmp(bca->indel_types, o.indel_types, sizeof(o.indel_types)) || bca->maxins != o.maxins ||
        (o.maxins && memcmp(bca->inscns, o.inscns, n_als * o.maxins)))
        return "the site's alleles";
    for (int k = 0; k < c->n_reads; k++)
        if (st->ours[k].aux != st->theirs[k].aux)
            return "a read's p->aux";
    return NULL;
}

/* Keeps halves of the reads (first or second) while the case still differs. */
static void id_shrink(id_state_t *st, id_case_t *c)
{
    id_case_t *t = malloc(sizeof(*t));
    for (int progress = 1; progress && c->n_reads > 1;) {
        progress = 0;
        for (int half = 0; half < 2 && !progress; half++) {
            *t = *c;
            int keep = c->n_reads / 2, from = half ? c->n_reads - keep : 0;
            t->n = 1, t->n_plp[0] = t->n_reads = keep;
            memcpy(t->score, c->score + from * c->n_types, keep * c->n_types * sizeof(int));
            if (id_differs(st, t))
                *c = *t, progress = 1;
        }
    }
    free(t);
}

static void id_print(FILE *f, const id_case_t *c)
{
    fprintf(f, "    /* openQ %d extQ %d tandemQ %d l_run %d ref_type %d max_ins %d, samples:",
            c->openQ, c->extQ, c->tandemQ, c->l_run, c->ref_type, c->max_ins);
    for (int s = 0; s < c->n; s++)
        fprintf(f, " %d", c->n_plp[s]);
    fputs(" reads */\n    int types[] = {", f);
    for (int t = 0; t < c->n_types; t++)
        fprintf(f, "%d%s", c->types[t], t + 1 < c->n_types ? ", " : "};\n");
    fputs("    int score[] = { /* per read, one per type */\n        ", f);
    int n = c->n_reads * c->n_types;
    for (int k = 0; k < n && k < 400; k++)
        fprintf(f, "0x%x%s", (unsigned)c->score[k],
                k + 1 < n ? (k % 8 == 7 ? ",\n        " : ", ") : "");
    fputs(n > 400 ? " /* ... */};\n" : "};\n", f);
}

void diff_indel_qual(uint64_t seed, uint64_t first, uint64_t n, diff_tally_t *t)
{
    id_state_t *st = calloc(1, sizeof(*st));
    id_case_t *c = malloc(sizeof(*c));
    if (!st || !c || !(st->bca = calloc(1, sizeof(*st->bca)))) {
        fprintf(stderr, "ssdiff: out of memory\n");
        exit(2);
    }
    for (uint64_t i = first; i < first + n; i++) {
        diff_rng_t r;
        diff_rng_init(&r, seed, "indel-qual", i);
        id_gen(&r, c);
        t->cases++;
        if (!id_differs(st, c))
            continue;
        id_shrink(st, c);
        const char *what = id_differs(st, c);
        if (diff_report(t, "indel-qual", seed, i,
                        "%s differs from bcftools' "
                        "bcf_cgp_compute_indelQ (shrunk to %d reads)",
                        what ? what : "(not after shrinking)", c->n_reads))
            id_print(t->log, c);
    }
    free(st->bca->inscns);
    free(st->bca);
    free(st);
    free(c);
}

/*
 * test_pileup_engine.c -- the pileup engine against htslib's own pileup,
 * side by side on random reads: random CIGARs (every operation, zero-length
 * ones too), piles at one position deeper than the depth cap, overlapping
 * mates (including mates in a deletion), reads on a contig other than 0.
 * Every column must hold the same reads in the same order with the same
 * fields and, after mate-overlap tweaking, the same base qualities.
 */
#include <htslib/sam.h>

#include "../genomics/pileup_engine.h"
#include "ss_testutil.h"

#define MAX_READS 600

typedef struct {
    bam1_t *rec[MAX_READS];
    int n, next;
} feed_t;

static int feed_read(void *data, bam1_t *b)
{
    feed_t *f = data;
    if (f->next >= f->n)
        return -1;
    return bam_copy1(b, f->rec[f->next++]) ? 0 : -2;
}

static uint32_t rng;
static uint32_t rnd(uint32_t n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

/* A CIGAR with at least one aligned base; returns n_cigar, fills the query length. */
static int random_cigar(uint32_t *cig, int *qlen)
{
    static const int ops[] = {BAM_CMATCH, BAM_CMATCH,    BAM_CMATCH,     BAM_CINS,
                              BAM_CDEL,   BAM_CREF_SKIP, BAM_CSOFT_CLIP, BAM_CHARD_CLIP,
                              BAM_CPAD,   BAM_CEQUAL,    BAM_CDIFF};
    int n = 1 + (int)rnd(6), has_match = 0;
    *qlen = 0;
    for (int i = 0; i < n; i++) {
        int op = ops[rnd(sizeof(ops) / sizeof(ops[0]))];
        int len = rnd(40) == 0 ? 0 : 1 + (int)rnd(op == BAM_CMATCH ? 60 : 6);
        if (i == n - 1 && !has_match)
            op = BAM_CMATCH, len = 1 + (int)rnd(60);
        has_match |= (op == BAM_CMATCH || op == BAM_CEQUAL || op == BAM_CDIFF) && len > 0;
        cig[i] = bam_cigar_gen(len, op);
        if (bam_cigar_type(op) & 1)
            *qlen += len;
    }
    return n;
}

static bam1_t *make_read(const char *name, int tid, hts_pos_t pos, uint16_t flag, hts_pos_t mpos,
                         int64_t isize)
{
    uint32_t cig[8];
    int qlen, n = random_cigar(cig, &qlen);
    char seq[512], qual[512];
    for (int i = 0; i < qlen; i++) {
        seq[i] = "ACGTN"[rnd(rnd(10) ? 4 : 5)];
        qual[i] = (char)rnd(60);
    }
    bam1_t *b = bam_init1();
    if (b && bam_set1(b, strlen(name), name, flag, tid, pos, 60, (size_t)n, cig, tid, mpos, isize,
                      (size_t)qlen, seq, qual, 0) < 0) {
        bam_destroy1(b);
        return NULL;
    }
    return b;
}

static int by_pos(const void *pa, const void *pb)
{
    const bam1_t *a = *(bam1_t *const *)pa, *b = *(bam1_t *const *)pb;
    if (a->core.pos != b->core.pos)
        return a->core.pos < b->core.pos ? -1 : 1;
    return strcmp(bam_get_qname(a), bam_get_qname(b));
}

/* Pairs and single reads around a few hot spots, sorted by position. */
static void make_case(feed_t *f, int tid)
{
    f->n = f->next = 0;
    int n_pairs = 20 + (int)rnd(200);
    for (int i = 0; i < n_pairs && f->n + 2 <= MAX_READS; i++) {
        char name[32];
        snprintf(name, sizeof(name), "p%d", rnd(5) ? i : (int)rnd(8)); /* some names repeat */
        hts_pos_t p1 = rnd(3) ? (hts_pos_t)rnd(400) : 100;             /* a pile at 100 */
        hts_pos_t p2 = p1 + (hts_pos_t)rnd(80);
        uint16_t fl = BAM_FPAIRED | (rnd(8) ? BAM_FPROPER_PAIR : 0) | (rnd(20) ? 0 : BAM_FMUNMAP);
        int64_t isize = (int64_t)(p2 - p1) + 50;
        f->rec[f->n++] = make_read(name, tid, p1, fl | BAM_FREAD1 | (rnd(2) ? BAM_FREVERSE : 0),
                                   rnd(30) ? p2 : -1, isize);
        if (rnd(6))
            f->rec[f->n++] = make_read(name, tid, p2, fl | BAM_FREAD2, p1, -isize);
    }
    qsort(f->rec, (size_t)f->n, sizeof(f->rec[0]), by_pos);
}

static void free_case(feed_t *f)
{
    for (int i = 0; i < f->n; i++)
        bam_destroy1(f->rec[i]);
    f->n = 0;
}

/*
 * Client data from the read as it enters, qualities included: htslib
 * constructs a read before mate overlaps lower its qualities, so an engine
 * that constructed after would differ on overlapping pairs.
 */
static int construct(void *data, const bam1_t *b, bam_pileup_cd *cd)
{
    (void)data;
    uint64_t h = (uint64_t)b->core.pos;
    const uint8_t *q = bam_get_qual(b);
    for (int i = 0; i < b->core.l_qseq; i++)
        h = h * 31 + q[i];
    cd->i = (int64_t)h;
    return 0;
}

/* One pileup entry, from either engine. */
static int same_entry(const bam_pileup1_t *h, const bam_pileup1_t *o)
{
    const bam1_t *hb = h->b, *ob = o->b;
    int hq = h->qpos < hb->core.l_qseq ? bam_get_qual(hb)[h->qpos] : -1;
    int oq = o->qpos < ob->core.l_qseq ? bam_get_qual(ob)[o->qpos] : -1;
    return strcmp(bam_get_qname(hb), bam_get_qname(ob)) == 0 && hb->core.pos == ob->core.pos &&
           hb->core.flag == ob->core.flag && h->qpos == o->qpos && h->indel == o->indel &&
           h->is_del == o->is_del && h->is_refskip == o->is_refskip && h->is_head == o->is_head &&
           h->is_tail == o->is_tail && h->cigar_ind == o->cigar_ind && hq == oq &&
           h->cd.i == o->cd.i;
}

/* Run both engines over one case; returns the number of columns compared, or -1. */
static int compare(feed_t *f, int tid, int maxcnt, int overlaps)
{
    feed_t fh = *f, fo = *f;
    fh.next = fo.next = 0;
    void *data[1] = {&fh};
    /* samtools drives htslib's pileup through the multi-input iterator */
    bam_mplp_t hp = bam_mplp_init(1, feed_read, data);
    pe_t *e = pe_init(feed_read, &fo, maxcnt, overlaps, 0);
    if (!hp || !e)
        return -1;
    bam_mplp_set_maxcnt(hp, maxcnt);
    if (overlaps)
        bam_mplp_init_overlaps(hp);
    bam_mplp_constructor(hp, construct);
    e->construct = construct;
    pe_reset(e, tid);
    int columns = 0, bad = 0, h_tid, n_h, n_o;
    hts_pos_t h_pos;
    const bam_pileup1_t *hcol;
    while (bam_mplp64_auto(hp, &h_tid, &h_pos, &n_h, &hcol) > 0) {
        if (pe_next_pos(e) != 1 || e->pos != h_pos) {
            fprintf(stderr, "\ncolumn %d: htslib at %lld, engine at %lld\n", columns,
                    (long long)h_pos, (long long)e->pos);
            bad = 1;
            break;
        }
        const bam_pileup1_t *ocol = pe_column(e, &n_o);
        int ok = n_o == n_h;
        for (int i = 0; ok && i < n_h; i++)
            ok = same_entry(&hcol[i], &ocol[i]);
        if (!ok) {
            fprintf(stderr, "\nat %lld: htslib %d reads, engine %d\n", (long long)h_pos, n_h, n_o);
            bad = 1;
            break;
        }
        pe_done_pos(e);
        columns++;
    }
    if (!bad && pe_next_pos(e) != 0) {
        fprintf(stderr, "\nengine has a column at %lld after htslib's last\n", (long long)e->pos);
        bad = 1;
    }
    bam_mplp_destroy(hp);
    pe_destroy(e);
    return bad ? -1 : columns;
}

static void test_random_cases(void)
{
    static const int caps[] = {1, 3, 12, 8000};
    feed_t f;
    long columns = 0;
    rng = 12345;
    for (int c = 0; c < 400; c++) {
        int tid = c % 3 == 2 ? 1 : 0;
        make_case(&f, tid);
        int cap = caps[c % 4], overlaps = (c / 4) % 2 == 0;
        int r = compare(&f, tid, cap, overlaps);
        if (r < 0)
            fprintf(stderr, "case %d (cap %d, overlaps %d) differs\n", c, cap, overlaps);
        SS_LE(0, r);
        columns += r > 0 ? r : 0;
        free_case(&f);
        if (r < 0)
            break;
    }
    SS_LE(10000, columns); /* the cases are not empty */
}

/* A read that starts before the engine's position and ends before it is skipped. */
static void test_skip_column_keeps_cursor(void)
{
    feed_t f = {.n = 0};
    uint32_t cig[3] = {bam_cigar_gen(3, BAM_CMATCH), bam_cigar_gen(2, BAM_CDEL),
                       bam_cigar_gen(3, BAM_CMATCH)};
    bam1_t *b = bam_init1();
    SS_EQ_FATAL(bam_set1(b, 1, "r", 0, 0, 10, 60, 3, cig, -1, -1, 0, 6, "ACGTAC", "IIIIII", 0) >= 0,
                1);
    f.rec[f.n++] = b;
    pe_t *e = pe_init(feed_read, &f, 8000, 0, 0);
    pe_reset(e, 0);
    /* skip columns 10..14 without building them, then ask for 15 */
    for (hts_pos_t p = 10; p < 15; p++) {
        SS_EQ(pe_next_pos(e), 1);
        SS_EQ(e->pos, p);
        pe_skip_column(e);
        pe_done_pos(e);
    }
    SS_EQ(pe_next_pos(e), 1);
    int n;
    const bam_pileup1_t *col = pe_column(e, &n);
    SS_EQ(n, 1);
    SS_EQ(col[0].qpos, 3); /* first base after the deletion */
    SS_EQ(col[0].is_del, 0);
    pe_destroy(e);
    free_case(&f);
}

static bam1_t *read_with_cigar(const char *name, int tid, hts_pos_t pos, const char *cigar)
{
    uint32_t *cig = NULL;
    size_t m = 0;
    ssize_t n = sam_parse_cigar(cigar, NULL, &cig, &m);
    int qlen = n > 0 ? (int)bam_cigar2qlen((int)n, cig) : 0;
    bam1_t *b = bam_init1();
    if (n <= 0 || !b ||
        bam_set1(b, strlen(name), name, 0, tid, pos, 60, (size_t)n, cig, -1, -1, 0, (size_t)qlen,
                 "ACGTACGTAC", "IIIIIIIIII", 0) < 0) {
        bam_destroy1(b);
        b = NULL;
    }
    free(cig);
    return b;
}

/*
 * A read without reference bases first at position 0: htslib keeps it (and
 * counts it against the depth cap) only on a contig other than tid 0.
 */
static void test_empty_read_first(void)
{
    for (int tid = 0; tid < 2; tid++) {
        feed_t f = {.n = 0};
        f.rec[f.n++] = read_with_cigar("a", tid, 0, "3S");
        f.rec[f.n++] = read_with_cigar("b", tid, 0, "5M");
        f.rec[f.n++] = read_with_cigar("c", tid, 2, "2I4M");
        SS_EQ_FATAL(f.rec[0] && f.rec[1] && f.rec[2], 1);
        int columns = compare(&f, tid, 1, 1);
        SS_EQ(columns, tid == 0 ? 6 : 4);
        free_case(&f);
    }
}

/*
 * A depth cap of 0 or less (bcftools passes -d 0 on as it is): htslib turns
 * away every read starting at the position it fills once it holds one, but
 * it sits on tid 0 until a read enters, so on another contig the first read
 * at position 0 enters.
 */
static void test_cap_zero_at_start(void)
{
    for (int cap = -1; cap <= 0; cap++)
        for (int tid = 0; tid < 2; tid++) {
            feed_t f = {.n = 0};
            for (int i = 0; i < 4; i++)
                f.rec[f.n++] = read_with_cigar("s", tid, 0, "5M");
            f.rec[f.n++] = read_with_cigar("t", tid, 3, "5M");
            f.rec[f.n++] = read_with_cigar("u", tid, 3, "5M");
            for (int i = 0; i < f.n; i++)
                SS_EQ_FATAL(f.rec[i] != NULL, 1);
            int columns = compare(&f, tid, cap, 1);
            SS_EQ(columns, tid == 0 ? 5 : 8); /* tid 0: only t, from 3; else s from 0, t */
            free_case(&f);
        }
}

/* One of a proper pair on contig 0: 8 aligned bases at pos, its mate at mpos. */
static bam1_t *mate_of_pair(hts_pos_t pos, hts_pos_t mpos)
{
    uint32_t cig = bam_cigar_gen(8, BAM_CMATCH);
    int64_t isize = pos < mpos ? mpos + 8 - pos : -(pos + 8 - mpos);
    bam1_t *b = bam_init1();
    if (b && bam_set1(b, 1, "p", BAM_FPAIRED | BAM_FPROPER_PAIR, 0, pos, 60, 1, &cig, 0, mpos,
                      isize, 8, "ACGTACGT", "IIIIIIII", 0) < 0) {
        bam_destroy1(b);
        b = NULL;
    }
    return b;
}

/*
 * The flag a kernel reads to know a read's qualities are new (mpileup works
 * out its per-base words again): set when the read enters, and again on the
 * waiting mate when the second mate enters and their overlap is adjusted.
 */
static void test_quals_changed(void)
{
    feed_t f = {.n = 0};
    f.rec[f.n++] = mate_of_pair(10, 14);
    f.rec[f.n++] = read_with_cigar("c", 0, 12, "8M");
    f.rec[f.n++] = mate_of_pair(14, 10);
    SS_EQ_FATAL(f.rec[0] && f.rec[1] && f.rec[2], 1);
    pe_t *e = pe_init(feed_read, &f, 8000, 1, 0);
    pe_reset(e, 0);
    int n;
    SS_EQ(pe_next_pos(e), 1);
    SS_EQ(e->pos, 10);
    bam1_t *first = pe_column(e, &n)[0].b;
    SS_EQ(n, 1);
    SS_EQ(pe_rec(first)->quals_changed, 1); /* it entered */
    pe_rec(first)->quals_changed = 0;       /* as the kernel clears it */
    pe_done_pos(e);
    SS_EQ(pe_next_pos(e), 1);
    SS_EQ(e->pos, 11);
    SS_EQ(pe_rec(first)->quals_changed, 0);
    pe_done_pos(e);
    /* the engine takes the second mate in before it gives position 12 */
    SS_EQ(pe_next_pos(e), 1);
    SS_EQ(e->pos, 12);
    SS_EQ(pe_rec(first)->quals_changed, 1);
    const bam_pileup1_t *col = pe_column(e, &n);
    SS_EQ(n, 2);
    SS_EQ(pe_rec(col[1].b)->quals_changed, 1); /* the read that entered at 12 */
    pe_destroy(e);
    free_case(&f);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("pileup_engine", NULL, NULL);
    CU_add_test(s, "random reads: same columns as htslib", test_random_cases);
    CU_add_test(s, "a cap of 0: the first read of another contig", test_cap_zero_at_start);
    CU_add_test(s, "skipped columns keep the CIGAR cursor", test_skip_column_keeps_cursor);
    CU_add_test(s, "a read with no reference bases first", test_empty_read_first);
    CU_add_test(s, "a read's qualities flagged new on entry and on its mate's", test_quals_changed);
    return ss_test_run();
}

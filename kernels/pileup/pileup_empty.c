/*
 * pileup_empty.c -- zero-depth lines for -a and -aa.
 *
 * samtools prints a zero-depth position with the reference base of the
 * contig it has loaded at that moment, which is not always the position's
 * own contig: the tail of a contig after its last covered position, and
 * whole contigs without reads (-aa), are printed when the next covered
 * contig arrives, with that contig's bases (or, after the last covered
 * contig, with the last one's). With -a alone, contigs without reads are
 * not printed at all, and with no reads anywhere -aa prints nothing unless
 * -r is given. A shard cannot see the rest of the genome, so it asks the
 * index: "does this range have any read that passes the filters?"
 */
#include "pileup.h"

/* Reads in range, with the inputs' reference switched to contig tid. */
static int has_reads_on(pl_worker_t *w, int tid, hts_pos_t beg, hts_pos_t end)
{
    hts_pos_t len = 0;
    const char *ref = NULL;
    if (tid != -1 && ss_job_opts(w->job)->reference)
        ref = ss_ref_get(w->ref_aux, tid, sam_hdr_tid2name(w->hdr, tid), &len);
    if (len < 0)
        return -1; /* out of memory: said */
    pl_input_t saved = w->in[0];
    for (int i = 0; i < w->n; i++) {
        w->in[i].ref = ref;
        w->in[i].ref_len = len;
        w->in[i].ref_src = w->ref_aux;
        w->in[i].ref_tid = tid;
        w->in[i].do_baq = w->o->baq && ref;
    }
    int r = pl_has_reads(w->in, w->n, tid, beg, end, w->scratch);
    for (int i = 0; i < w->n; i++) {
        w->in[i].ref = saved.ref;
        w->in[i].ref_len = saved.ref_len;
        w->in[i].ref_src = saved.ref_src;
        w->in[i].ref_tid = saved.ref_tid;
        w->in[i].do_baq = saved.do_baq;
    }
    /* the other contig's window is not needed after the question */
    ss_ref_release(w->ref_aux);
    return r;
}

/* Whether tid has reads within its scope; cached per worker. -1 on error. */
static int contig_has_reads(pl_worker_t *w, int tid)
{
    if (w->cov[tid] < 0) {
        hts_pos_t beg, end;
        pl_scope(w, tid, &beg, &end);
        int r = has_reads_on(w, tid, beg, end);
        if (r < 0)
            return -1;
        w->cov[tid] = (signed char)r;
    }
    return w->cov[tid];
}

/* The nearest contig with reads after (dir 1) or before (dir -1) tid; -1 none, -2 error. */
static int nearest_covered(pl_worker_t *w, int tid, int dir)
{
    int nref = sam_hdr_nref(w->hdr);
    for (int t = tid + dir; t >= 0 && t < nref; t += dir) {
        int r = contig_has_reads(w, t);
        if (r < 0)
            return -2;
        if (r)
            return t;
    }
    return -1;
}

/*
 * Which contig's bases label zero-depth lines in [from, to) of tid, or -1 to
 * print nothing. Returns -2 on error.
 */
static int label_contig(pl_worker_t *w, int tid, hts_pos_t to, int shard_cov)
{
    int region = ss_job_region(w->job) != NULL;
    int cov = shard_cov ? 1 : contig_has_reads(w, tid);
    if (cov < 0)
        return -2;
    if (cov) {
        hts_pos_t scope_beg, scope_end;
        pl_scope(w, tid, &scope_beg, &scope_end);
        int later = has_reads_on(w, tid, to, scope_end);
        if (later < 0)
            return -2;
        if (later || region)
            return tid;
        int next = nearest_covered(w, tid, 1);
        return next == -1 ? tid : next; /* the last covered contig keeps its own bases */
    }
    if (w->o->all < 2)
        return -1;
    if (region)
        return tid;
    int t = nearest_covered(w, tid, 1);
    if (t == -1)
        t = nearest_covered(w, tid, -1);
    return t;
}

int pl_emit_uncovered(pl_worker_t *w, int tid, hts_pos_t from, hts_pos_t to, int followed,
                      int shard_cov, kstring_t *out)
{
    const char *ref = w->ctg_ref;
    hts_pos_t ref_len = w->ctg_ref_len;
    if (!followed) {
        int label = label_contig(w, tid, to, shard_cov);
        if (label == -2)
            return -1;
        if (label == -1)
            return 0;
        if (label != tid) {
            ref = NULL, ref_len = 0;
            if (ss_job_opts(w->job)->reference)
                ref = ss_ref_get(w->ref_aux, label, sam_hdr_tid2name(w->hdr, label), &ref_len);
            if (ref_len < 0 || ss_ref_cover(w->ref_aux, label, from, to) < 0)
                return -1;
        }
    }
    if (ref == w->ctg_ref && ss_ref_cover(w->ref, tid, from, to) < 0)
        return -1;
    const ss_bed_t *bed = ss_job_bed(w->job);
    const char *ctg = sam_hdr_tid2name(w->hdr, tid);
    for (hts_pos_t p = from; p < to; p++) {
        if (bed && !ss_bed_overlap(bed, ctg, p, p + 1))
            continue;
        if (pl_format_empty(out, w->o, ctg, p, ref, ref_len, w->n) < 0) {
            ss_error("out of memory writing zero-depth lines for %s", ctg);
            return -1;
        }
    }
    return 0;
}

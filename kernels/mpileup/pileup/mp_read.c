/*
 * mp_read.c -- the reads bcftools mpileup 1.16 puts in its pileup (its read
 * filter, in its order), and where a shard's pileup must begin for its
 * columns to be those of one run over the whole input.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_read.h"

/*
 * BAQ appends a ZQ tag to the read, which may move its data while htslib's
 * pileup holds pointers into it (the mate-overlap hash keys on the name).
 * bcftools reserves the room when the read is loaded, with a placeholder tag
 * of ZQ's size that is dropped just before BAQ runs; so do we.
 */
static int reserve_zq(bam1_t *b)
{
    size_t n = (size_t)b->core.l_qseq + 1;
    char stack[512], *q = n <= sizeof(stack) ? stack : malloc(n);
    if (!q)
        return -1;
    memset(q, '@', n - 1);
    q[n - 1] = 0;
    int rc = bam_aux_append(b, "_Q", 'Z', (int)n, (uint8_t *)q);
    if (q != stack)
        free(q);
    return rc;
}

/* The flag filters: --nu, --lu, --ls, --ns, in bcftools' order. 1 keeps the read. */
static int flags_pass(const mp_opts_t *o, uint16_t f)
{
    if (o->skip_any_unset && (o->skip_any_unset & f) != o->skip_any_unset)
        return 0;
    if (o->skip_all_set && (o->skip_all_set & f) == o->skip_all_set)
        return 0;
    if (o->skip_all_unset && !(o->skip_all_unset & f))
        return 0;
    return !(o->skip_any_set & f);
}

/* 1 keeps the read (edited as bcftools edits it), 0 drops it, -1 out of memory. */
static int keep_read(mp_input_t *in, bam1_t *b)
{
    const mp_opts_t *o = in->o;
    if (b->core.tid < 0 || (b->core.flag & BAM_FUNMAP) || !flags_pass(o, b->core.flag))
        return 0;
    /* SEQ '*': no base to call (bcftools 1.16 reads past the record and aborts); left out,
     * as seqshard pileup and samtools mpileup leave its quality-0 bases out at their -Q */
    if (b->core.l_qseq == 0)
        return 0;
    if (in->targets && !mp_targets_read(in->targets, in->targets_itr, in->ctg, b))
        return 0;
    if (mp_samples_of(in->smpl, in->i, b) < 0)
        return 0;
    if (o->illumina13) {
        uint8_t *q = bam_get_qual(b);
        for (int i = 0; i < b->core.l_qseq; i++)
            q[i] = q[i] > 31 ? q[i] - 31 : 0;
    }
    int has_ref = in->ref != NULL;
    if (has_ref && in->ref_len <= b->core.pos)
        return 0; /* past the reference's end, as bcftools skips it */
    /* the reference BAQ and -C read: the read's span and a band of up to its length on
     * each side (the pileup kernel loads the same); its columns lie within */
    hts_pos_t rlen = has_ref ? bam_cigar2rlen(b->core.n_cigar, bam_get_cigar(b)) : 0;
    hts_pos_t m = b->core.l_qseq + rlen + 64;
    if (has_ref && mp_ref_need(in->rs, b->core.pos - m, b->core.pos + rlen + m) < 0)
        return -1;
    if (has_ref && o->baq && !bam_aux_get(b, "ZQ") && reserve_zq(b) < 0)
        return -1;
    if (has_ref && o->capQ_thres > 10) {
        int q = sam_cap_mapq(b, in->ref, in->ref_len, o->capQ_thres);
        if (q < 0)
            return 0;
        if (b->core.qual > q)
            b->core.qual = q;
    }
    if (b->core.qual < o->min_mq)
        return 0;
    if (!o->orphans && (b->core.flag & BAM_FPAIRED) && !(b->core.flag & BAM_FPROPER_PAIR))
        return 0;
    return 1;
}

int mp_read_filtered(void *data, bam1_t *b)
{
    mp_input_t *in = data;
    int ret;
    while ((ret = ss_source_next(in->src, b)) >= 0) {
        in->n_read++;
        int k = keep_read(in, b);
        if (k < 0) {
            in->read_err = MP_READ_NOMEM;
            return MP_READ_NOMEM;
        }
        if (k)
            return ret;
    }
    if (ret < -1)
        in->read_err = ret;
    return ret;
}

/* The earliest start of the kept reads that cover pos, or pos; -2 after a read error. */
static hts_pos_t earliest_over(mp_input_t *in, int n, int tid, hts_pos_t pos, bam1_t *b)
{
    hts_pos_t min = pos;
    for (int i = 0; i < n; i++) {
        if (ss_source_query(in[i].src, tid, pos, pos + 1) < 0)
            return -2;
        int ret;
        /* sorted by start: the first kept read is the earliest */
        if ((ret = mp_read_filtered(&in[i], b)) >= 0 && b->core.pos < min)
            min = b->core.pos;
        if (ret < -1)
            return -2;
    }
    return min;
}

/*
 * Could htslib's depth cap have dropped a read that starts in [from, q)?
 * It drops a read starting at the column it is at when it already holds more
 * than max_depth reads; counting every kept read as held (those that end
 * before a start are gone), no more than max_depth at any start means none was
 * dropped. 1 safe, 0 not, -1 error.
 */
static int cap_safe(mp_input_t *in, int tid, hts_pos_t from, hts_pos_t q, int max_depth, bam1_t *b)
{
    hts_pos_t *ends = NULL;
    size_t n = 0, m = 0;
    int ret, safe = 1;
    if (ss_source_query(in->src, tid, from, q) < 0)
        return -1;
    while (safe == 1 && (ret = mp_read_filtered(in, b)) >= 0) {
        size_t k = 0;
        for (size_t j = 0; j < n; j++) /* drop reads ended before this start */
            if (ends[j] >= b->core.pos)
                ends[k++] = ends[j];
        n = k;
        if ((int64_t)n + 1 > max_depth) {
            safe = 0;
            break;
        }
        if (n == m) {
            hts_pos_t *e = realloc(ends, (m = m ? 2 * m : 256) * sizeof(*e));
            if (!e) {
                safe = -1;
                break;
            }
            ends = e;
        }
        ends[n++] = bam_endpos(b);
    }
    free(ends);
    if (safe == 1 && ret < -1)
        return -1;
    return safe;
}

hts_pos_t mp_shard_start(mp_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t scope_beg,
                         int max_depth, bam1_t *b)
{
    if (beg <= scope_beg)
        return scope_beg;
    /*
     * Partial BAQ realigns a read at the first column that asks for it, and a
     * mate's overlap takes the other's qualities as they are then: replay from
     * where the reads over beg began, and the reads over that point too.
     */
    hts_pos_t s = beg;
    for (int level = 0; level < 3 && s > scope_beg; level++) {
        hts_pos_t e = earliest_over(in, n, tid, s - 1, b);
        if (e < -1)
            return -1;
        s = e < scope_beg ? scope_beg : e;
    }
    /* then back until the depth cap could not have dropped a read the replay needs */
    hts_pos_t step = 1024;
    while (s > scope_beg && max_depth != INT_MAX) {
        hts_pos_t from = earliest_over(in, n, tid, s - 1, b);
        if (from < -1)
            return -1;
        int safe = 1;
        for (int i = 0; i < n && safe == 1; i++)
            safe = cap_safe(&in[i], tid, from > scope_beg ? from : scope_beg, s + 1, max_depth, b);
        if (safe < 0)
            return -1;
        if (safe)
            break;
        s = s - step > scope_beg ? s - step : scope_beg;
        step *= 2;
    }
    return s > scope_beg ? s - 1 : scope_beg;
}

/*
 * Depth events: +1 where a read starts, -1 where it ends, encoded so that
 * sorting orders them by position, ends before starts at the same place
 * (a read ending at p no longer covers p).
 */
static int add_event(uint64_t **ev, size_t *n, size_t *m, hts_pos_t pos, int start)
{
    if (*n == *m) {
        size_t cap = *m ? 2 * *m : 4096;
        if (cap > MP_DEPTH_EVENTS_MAX)
            return 1; /* too many to sort cheaply: say "maybe" */
        uint64_t *e = realloc(*ev, cap * sizeof(*e));
        if (!e)
            return 1;
        *ev = e;
        *m = cap;
    }
    (*ev)[(*n)++] = (uint64_t)pos << 1 | (uint64_t)start;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Whether more than limit events' reads overlap at some position. */
static int events_exceed(uint64_t *ev, size_t n, int limit)
{
    qsort(ev, n, sizeof(*ev), cmp_u64);
    int depth = 0;
    for (size_t k = 0; k < n; k++) {
        depth += (ev[k] & 1) ? 1 : -1;
        if (depth > limit)
            return 1;
    }
    return 0;
}

int mp_depth_exceeds(mp_input_t *in, int n, int tid, hts_pos_t beg, hts_pos_t end, int limit,
                     bam1_t *b)
{
    uint64_t *ev = NULL;
    size_t n_ev = 0, m_ev = 0;
    int ret = 0, maybe = 0;
    for (int i = 0; i < n && !maybe && ret >= -1; i++) {
        if (ss_source_query(in[i].src, tid, beg, mp_kept_end(&in[i], beg, end)) < 0) {
            free(ev);
            return -1;
        }
        /* every read the pileup may hold: the filter only takes some away */
        while (!maybe && (ret = ss_source_next(in[i].src, b)) >= 0) {
            if (b->core.tid != tid || (b->core.flag & BAM_FUNMAP))
                continue;
            hts_pos_t s = b->core.pos > beg ? b->core.pos : beg, e = bam_endpos(b);
            if (e > end)
                e = end;
            if (s < e)
                maybe = add_event(&ev, &n_ev, &m_ev, s, 1) || add_event(&ev, &n_ev, &m_ev, e, 0);
        }
        if (ret < -1)
            in[i].read_err = ret; /* mp_shard_error reports it */
    }
    int over = ret < -1 ? -1 : maybe || (n_ev > 0 && events_exceed(ev, n_ev, limit));
    free(ev);
    return over;
}

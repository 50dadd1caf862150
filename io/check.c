/*
 * check.c -- what every reader checks of the records it reads.
 *
 * Sharding trusts the input: a shard reads its range through the index and
 * stops at the first record past its end, so one record with a wrong POS in
 * the middle of a contig would end the shard early and drop what follows,
 * and a contig id past the header makes htslib read outside its tables.
 * samtools mpileup stops on such files ("not sorted"); seqshard must fail
 * too, never print a shorter output. So each record read, also the ones
 * htslib's iterator skips or stops at, passes a few compares here: ids and
 * positions in range, optional fields that end inside the record, and (tid,
 * pos) not below the record before it in the same stream. A stream also
 * checks the record just after its last one, so every pair of neighbours in
 * the file is compared by some shard.
 *
 * No state is shared: an ss_io_order_t belongs to the owner of the stream.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ss_check.h"

void ss_io_order_reset(ss_io_order_t *o)
{
    o->tid = 0;
    o->pos = HTS_POS_MIN;
    o->n = 0;
    o->ended = 0;
}

/* (tid, pos) in file order: unplaced reads (tid -1) sort last, and among them POS is free. */
static int sorts_before(int tid, hts_pos_t pos, int last_tid, hts_pos_t last_pos)
{
    if (tid != last_tid)
        return (uint32_t)tid < (uint32_t)last_tid;
    return tid >= 0 && pos < last_pos;
}

/* Bytes of one value of BAM type t (a B array's element when in_array); 0: no such type. */
static int aux_value_size(uint8_t t, int in_array)
{
    switch (t) {
    case 'A':
    case 'c':
    case 'C':
        return 1;
    case 's':
    case 'S':
        return 2;
    case 'i':
    case 'I':
    case 'f':
        return 4;
    case 'd':
        return in_array ? 0 : 8;
    default:
        return 0;
    }
}

/* The end of the field whose value starts at v (type t), or NULL when it runs past end. */
static const uint8_t *aux_field_end(uint8_t t, const uint8_t *v, const uint8_t *end)
{
    if (t == 'Z' || t == 'H') {
        const uint8_t *nul = memchr(v, 0, (size_t)(end - v));
        return nul ? nul + 1 : NULL;
    }
    if (t == 'B') {
        int size = aux_value_size(v[0], 1);
        if (!size || end - v < 5)
            return NULL;
        uint32_t n =
            (uint32_t)v[1] | (uint32_t)v[2] << 8 | (uint32_t)v[3] << 16 | (uint32_t)v[4] << 24;
        v += 5;
        return (uint64_t)(end - v) / (uint64_t)size < n ? NULL : v + (size_t)n * size;
    }
    int size = aux_value_size(t, 0);
    return size && end - v >= size ? v + size : NULL;
}

/*
 * Whether b's optional fields are whole, by samtools view's rules (sam.c's
 * sam_format1): fields while 4 or more bytes are left, each of a known type
 * whose value, string or array ends inside the record. htslib's readers do
 * not check this (samtools view fails, "Corrupted aux data"; bam_aux_get may
 * miss a tag after the damage), so a kernel would silently read another RG.
 */
static int aux_whole(const bam1_t *b)
{
    const uint8_t *p = bam_get_aux(b), *end = b->data + b->l_data;
    while (p && end - p >= 4)
        p = aux_field_end(p[2], p + 3, end);
    return p != NULL;
}

int ss_io_check_record(const bam1_t *b, int n_targets, ss_io_order_t *o)
{
    const bam1_core_t *c = &b->core;
    if (c->tid < -1 || c->tid >= n_targets)
        return SS_IO_BAD_TID;
    if (c->mtid < -1 || c->mtid >= n_targets)
        return SS_IO_BAD_MTID;
    if (c->pos < -1 || c->mpos < -1)
        return SS_IO_BAD_POS;
    if (!aux_whole(b))
        return SS_IO_BAD_AUX;
    if (o->n > 0 && sorts_before(c->tid, c->pos, o->tid, o->pos))
        return SS_IO_UNSORTED;
    o->tid = c->tid;
    o->pos = c->pos;
    o->n++;
    return 0;
}

/*
 * htslib's iterator reads through its readrec hook, and that hook sees every
 * record the iterator reads, including those it skips (ending before the
 * query) and the one it stops at. ss_io_itr_next puts this in front of the
 * hook for one call; data carries what the check needs and, to htslib's own
 * hook, the file (BAM's ignores it, CRAM's needs it).
 */
typedef struct {
    hts_readrec_func *readrec;
    samFile *fp;
    int n_targets;
    ss_io_order_t *order;
} checked_t;

static int checked_readrec(BGZF *bgzf, void *data, void *r, int *tid, hts_pos_t *beg,
                           hts_pos_t *end)
{
    checked_t *c = data;
    int ret = c->readrec(bgzf, c->fp, r, tid, beg, end);
    if (ret >= 0) {
        int bad = ss_io_check_record(r, c->n_targets, c->order);
        if (bad < 0)
            return bad; /* the iterator stops and hands the code back */
    }
    return ret;
}

/*
 * The stream ended: check the record after the last one read, which some
 * other shard may start from. BAM chunk iterators only: htslib's CRAM reader
 * and read-to-the-end iterators have nothing after their end.
 */
static int check_next(samFile *fp, hts_itr_t *itr, bam1_t *b, const checked_t *c)
{
    ss_io_order_t *o = c->order;
    if (o->ended || o->n == 0 || itr->read_rest || itr->is_cram || !fp->is_bgzf)
        return -1;
    o->ended = 1;
    int tid;
    hts_pos_t beg, end;
    int r = c->readrec(fp->fp.bgzf, fp, b, &tid, &beg, &end);
    if (r < -1)
        return r;
    if (r >= 0 && (r = ss_io_check_record(b, c->n_targets, o)) < 0)
        return r;
    return -1;
}

/*
 * The contig a query's records must be on, -1 for the unplaced reads, -2 when
 * any: htslib leaves tid unset (0) for BAM's read-to-the-end iterators.
 */
static int query_contig(const hts_itr_t *itr)
{
    if (!itr->read_rest)
        return itr->tid; /* a BAM query of one contig's chunks */
    if (itr->is_cram && itr->tid == HTS_IDX_NOCOOR)
        return -1;
    return itr->is_cram && itr->tid >= 0 ? itr->tid : -2;
}

int ss_io_itr_next(samFile *fp, hts_itr_t *itr, bam1_t *b, int n_targets, ss_io_order_t *o)
{
    if (!itr || itr->multi)
        return -2;
    checked_t c = {itr->readrec, fp, n_targets, o};
    itr->readrec = checked_readrec;
    int r = hts_itr_next(fp->is_bgzf ? fp->fp.bgzf : NULL, itr, b, &c);
    itr->readrec = c.readrec;
    if (r >= 0) {
        int want = query_contig(itr);
        if (want >= -1 && b->core.tid != want)
            return SS_IO_WRONG_CONTIG;
        return r;
    }
    return r == -1 ? check_next(fp, itr, b, &c) : r;
}

/* "ctgA:1,234" style, 1-based; ids out of range by number. */
static void place(char *buf, size_t size, const sam_hdr_t *h, int tid, hts_pos_t pos)
{
    if (tid >= 0 && tid < sam_hdr_nref(h))
        snprintf(buf, size, "%s:%" PRId64, sam_hdr_tid2name(h, tid), (int64_t)pos + 1);
    else if (tid == -1)
        snprintf(buf, size, "*:%" PRId64, (int64_t)pos + 1);
    else
        snprintf(buf, size, "contig #%d:%" PRId64, tid, (int64_t)pos + 1);
}

void ss_io_bad_record_text(char *buf, size_t size, int code, const sam_hdr_t *h, const bam1_t *b,
                           const ss_io_order_t *o, int shard)
{
    char at[300], prev[300];
    const bam1_core_t *c = &b->core;
    const char *problem = "a damaged record", *fix;
    char what[720];
    place(at, sizeof(at), h, c->tid, c->pos);
    fix = "the file is corrupt: check it with samtools quickcheck and regenerate it";
    switch (code) {
    case SS_IO_BAD_TID:
        snprintf(what, sizeof(what), "a record's contig id %d is not in the header (%d contigs)",
                 c->tid, sam_hdr_nref(h));
        problem = what;
        break;
    case SS_IO_BAD_MTID:
        snprintf(what, sizeof(what),
                 "a record's mate contig id %d is not in the header (%d "
                 "contigs)",
                 c->mtid, sam_hdr_nref(h));
        problem = what;
        break;
    case SS_IO_BAD_POS:
        snprintf(what, sizeof(what),
                 "a record's position or mate position is negative (%" PRId64 ", mate %" PRId64 ")",
                 (int64_t)c->pos + 1, (int64_t)c->mpos + 1);
        problem = what;
        break;
    case SS_IO_UNSORTED:
        place(prev, sizeof(prev), h, o->tid, o->pos);
        snprintf(what, sizeof(what),
                 "records out of coordinate order: this one comes after "
                 "one at %s",
                 prev);
        problem = what;
        fix = "the file is corrupt or not sorted: check it with samtools quickcheck, sort it "
              "with samtools sort and index it with samtools index";
        break;
    case SS_IO_BAD_AUX:
        problem = "a record's optional fields run past its end or have an unknown type "
                  "(samtools view stops there: \"Corrupted aux data\")";
        fix = "the file is corrupt (samtools quickcheck reads only its ends and passes it): "
              "re-create it from its source";
        break;
    case SS_IO_WRONG_CONTIG:
        problem = "the index gave a record of another contig";
        fix = "its index does not match the file; re-index with samtools index";
        break;
    }
    snprintf(buf, size, "%s (shard %d, record %s at %s); %s", problem, shard, bam_get_qname(b), at,
             fix);
}

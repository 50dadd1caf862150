/*
 * view_copy.c -- BAM to BAM with nothing filtered: copy the input's
 * compressed blocks.
 *
 * When no record is dropped, no region asked for and no compression level
 * given, the output's records are the input's records in the input's order,
 * so its BGZF blocks can be the input's blocks; only the header is encoded
 * again, with its @PG line. samtools cat and reheader copy blocks the same
 * way. Inflating and deflating again would cost about 95% of the run for the
 * same records; `-l N` asks for that anyway.
 *
 * Shard k copies the blocks from the one holding the first record at or after
 * its start key (tid, beg) up to the block of the next shard's start key; the
 * first shard starts where the header ends, the unplaced reads' shard ends at
 * the input's EOF block. Whatever the cuts, the shards copy every data block
 * once and in order, so the output does not depend on the shard size, the
 * threads or the ranks; only a block's owner does.
 *
 * Copied blocks are still checked as samtools view checks what it reads:
 * the shard's records are decoded through htslib (CRC32 and length of every
 * block, each record's layout and CIGAR against its sequence) and pass the
 * checks every reader makes (ss_io_check_record: contig ids in range,
 * coordinate order, also against the next shard's first record), so a
 * damaged or unsorted input fails with a message instead of passing into
 * the output. Decoding costs little more than inflating, which the check
 * needs anyway: about a sixth of decoding and encoding again. The bytes
 * copied and the bytes checked are read from the same file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>

#include "../../framework/ss_framework_extra.h"
#include "../../io/ss_budget.h"
#include "../../io/ss_check.h"
#include "../../io/ss_encode.h"
#include "view.h"

struct vw_copier_s {
    int fd; /* the input, opened at first use */
};

int vw_copy_eligible(const vw_opts_t *o, const ss_common_opts_t *co)
{
    return o->fmt == VW_BAM && o->level < 0 && co->n_regions == 0 && !o->target_path &&
           !o->multi_region && !o->header_only && o->min_mapq == 0 && !o->flag_on && !o->flag_off &&
           !o->flag_anyon && !o->flag_alloff && co->n_fmt_opts == 0 && !o->count && !o->expr &&
           o->subsam_frac <= 0.0 && !o->library && !o->remove.n && !o->keep.n;
}

/* Where the header's blocks end and the EOF block starts; -1 if blocks cannot be copied. */
int vw_copy_prepare(vw_run_t *o, const char *path)
{
    o->copy_data_beg = o->copy_data_end = -1;
    samFile *fp = sam_open(path, "r");
    if (!fp)
        return -1;
    int ok = hts_get_format(fp)->format == bam && hts_get_format(fp)->compression == bgzf;
    sam_hdr_t *h = ok ? sam_hdr_read(fp) : NULL;
    int64_t after_header = h ? bgzf_tell(fp->fp.bgzf) : -1;
    if (h)
        sam_hdr_destroy(h);
    sam_close(fp);
    /* the first record must open a block of its own (htslib flushes after the header) */
    if (after_header < 0 || (after_header & 0xffff) != 0)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    uint8_t tail[sizeof(ss_bgzf_eof)];
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(tail) ||
        pread(fd, tail, sizeof(tail), st.st_size - (off_t)sizeof(tail)) != (ssize_t)sizeof(tail)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    o->copy_data_beg = after_header >> 16;
    o->copy_data_end =
        st.st_size - (memcmp(tail, ss_bgzf_eof, sizeof(tail)) == 0 ? (off_t)sizeof(tail) : 0);
    return o->copy_data_beg <= o->copy_data_end ? 0 : -1;
}

/*
 * The virtual offset of the first record at or after (tid, beg) in file
 * order, or of the EOF block when there is none; tid >= the number of contigs
 * means the unplaced reads. -1 on a read error.
 */
static int64_t voffset_of_key(samFile *fp, hts_idx_t *idx, const sam_hdr_t *h, bam1_t *b, int tid,
                              hts_pos_t beg, const vw_run_t *o)
{
    int n_ref = sam_hdr_nref(h);
    uint64_t from = 0;
    for (int t = tid; t < n_ref; t++) { /* a safe place to start reading: the first query hit */
        hts_itr_t *itr = sam_itr_queryi(idx, t, t == tid ? beg : 0, HTS_POS_MAX);
        if (itr && !itr->finished && itr->n_off > 0)
            from = itr->off[0].u;
        hts_itr_destroy(itr);
        if (from)
            break;
    }
    if (!from) { /* the unplaced reads: after the last mapped read, or after the header */
        tid = n_ref;
        if (hts_idx_get_n_no_coor(idx) == 0)
            return o->copy_data_end << 16;
        hts_itr_t *itr = sam_itr_queryi(idx, HTS_IDX_NOCOOR, 0, 0);
        if (!itr)
            return -1;
        from = itr->curr_off;
        hts_itr_destroy(itr);
        if (!from)
            from = (uint64_t)o->copy_data_beg << 16;
    }
    if (bgzf_seek(fp->fp.bgzf, (int64_t)from, SEEK_SET) < 0)
        return -1;
    for (;;) {
        int64_t at = bgzf_tell(fp->fp.bgzf);
        int r = bam_read1(fp->fp.bgzf, b);
        if (r == -1)
            return o->copy_data_end << 16;
        if (r < -1)
            return -1;
        int t = b->core.tid < 0 ? n_ref : b->core.tid;
        if (t > tid || (t == tid && (t == n_ref || b->core.pos >= beg)))
            return at;
    }
}

vw_copier_t *vw_copier_init(void)
{
    vw_copier_t *cp = calloc(1, sizeof(*cp));
    if (cp)
        cp->fd = -1;
    return cp;
}

void vw_copier_destroy(vw_copier_t *cp)
{
    if (!cp)
        return;
    if (cp->fd >= 0)
        close(cp->fd);
    free(cp);
}

/*
 * The copied records, for an index built from the shards: where htslib's
 * reader stands after each, its block address moved from the input's to the
 * shard's (the copy from vbeg's block lands at byte `at` of the shard). A
 * record may end in the next shard's first block: the offset then lies past
 * this shard's bytes, where that block is. NULL so when nothing is indexed.
 */
typedef struct {
    ss_out_t *so;
    int64_t vbeg;
    uint64_t at;
} index_ctx_t;

/* A note that fails (out of memory) leaves the index to be built from the file. */
static void note_copied(const index_ctx_t *x, const bam1_t *b, int64_t end)
{
    if (!x)
        return;
    uint64_t coff = (uint64_t)(end >> 16) - (uint64_t)(x->vbeg >> 16) + x->at;
    (void)ss_out_index_copied(x->so, b, coff << 16 | (uint64_t)(end & 0xffff));
}

/*
 * Decode the records from vbeg up to vend, and the one after (the next
 * shard's first, so that the order check spans the cut), checking each and
 * noting it for the index (ix, or NULL).
 * Returns 0 and the count in *records, -2 when the file is damaged there
 * (a read error, or records that do not end at vend), or an SS_IO_BAD_*
 * code with the record in b and the order state in *ord.
 */
static int check_records(samFile *fp, int n_ref, bam1_t *b, int64_t vbeg, int64_t vend,
                         uint64_t *records, ss_io_order_t *ord, const index_ctx_t *ix)
{
    BGZF *z = fp->fp.bgzf;
    int r;
    ss_io_order_reset(ord);
    if (bgzf_seek(z, vbeg, SEEK_SET) < 0)
        return -2;
    while (bgzf_tell(z) < vend) {
        if ((r = bam_read1(z, b)) < 0)
            return r < -1 ? r : -2; /* also -1: the file ends before vend */
        if ((r = ss_io_check_record(b, n_ref, ord)) < 0)
            return r;
        note_copied(ix, b, bgzf_tell(z));
        (*records)++;
    }
    if (bgzf_tell(z) != vend)
        return -2; /* a record runs over the next shard's first one */
    if ((r = bam_read1(z, b)) < -1)
        return r;
    return r >= 0 ? ss_io_check_record(b, n_ref, ord) : 0;
}

int vw_copy_shard(vw_copier_t *cp, const vw_run_t *o, ss_reader_t *rd, const sam_hdr_t *h,
                  bam1_t *b, const ss_shard_t *sh, ss_out_t *so, kstring_t *out, uint64_t *records)
{
    samFile *fp = ss_reader_file(rd, 0);
    hts_idx_t *idx = ss_reader_index(rd, 0);
    const char *path = ss_reader_path(rd, 0);
    int n_ref = sam_hdr_nref(h);
    int64_t vbeg, vend;
    if (sh->tid == SS_TID_UNPLACED) {
        vbeg = voffset_of_key(fp, idx, h, b, n_ref, 0, o);
        vend = o->copy_data_end << 16;
    } else {
        int first = sh->tid == 0 && sh->beg == 0;
        int last = sh->end >= sam_hdr_tid2len(h, sh->tid);
        vbeg = first ? o->copy_data_beg << 16 : voffset_of_key(fp, idx, h, b, sh->tid, sh->beg, o);
        vend = last ? voffset_of_key(fp, idx, h, b, sh->tid + 1, 0, o)
                    : voffset_of_key(fp, idx, h, b, sh->tid, sh->end, o);
    }
    *records = 0;
    if (vbeg < 0 || vend < 0 || vbeg > vend)
        return -2;
    if (vbeg == vend)
        return 0;
    if (cp->fd < 0 && (cp->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        if (ss_io_fds_exhausted(errno)) {
            ss_io_error_fds(path, errno);
            return -1;
        }
        ss_error("%s: cannot open: %s; check the file still exists and is readable", path,
                 strerror(errno));
        return -1;
    }
    index_ctx_t ix = {so, vbeg, out->l};
    if (ss_io_append_file_range(cp->fd, vbeg >> 16, (size_t)((vend >> 16) - (vbeg >> 16)), out) <
        0) {
        if (errno == EIO)
            return -2;
        ss_error("%s: cannot read bytes %lld-%lld: %s", path, (long long)(vbeg >> 16),
                 (long long)(vend >> 16), strerror(errno));
        return -1;
    }
    ss_io_order_t ord;
    int r =
        check_records(fp, n_ref, b, vbeg, vend, records, &ord, ss_out_indexing(so) ? &ix : NULL);
    if (ss_io_is_bad_record(r)) {
        char what[1024];
        ss_io_bad_record_text(what, sizeof(what), r, h, b, &ord, sh->idx);
        ss_error("%s: %s", path, what);
        return -1;
    }
    return r == -1 ? -2 : r < 0 ? r : 0;
}

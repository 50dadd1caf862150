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
 * Copied blocks are still checked as htslib checks what it reads: each is
 * inflated and its CRC32 and length compared, so a damaged input fails with
 * a message instead of passing into the output (inflating costs about a
 * sixth of decoding and encoding again).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#ifdef SS_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "view.h"

#define BGZF_HEADER 18
#define BGZF_FOOTER 8
#define BGZF_MAX 65536

struct vw_copier_s {
    int fd; /* the input, opened at first use */
#ifdef SS_HAVE_LIBDEFLATE
    struct libdeflate_decompressor *inflater;
#endif
    uint8_t scratch[BGZF_MAX];
};

static const uint8_t bgzf_eof[28] = {0x1f, 0x8b, 8, 4, 0, 0, 0, 0, 0, 0xff, 6, 0, 0x42, 0x43,
                                     2, 0, 0x1b, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0};

int vw_copy_eligible(const vw_opts_t *o, const ss_common_opts_t *co)
{
#ifndef SS_HAVE_LIBDEFLATE
    return 0; /* no way here to check the copied blocks */
#endif
    return o->fmt == VW_BAM && o->level < 0 && co->n_regions == 0 && !o->target_path &&
           !o->multi_region && !o->header_only && o->min_mapq == 0 && !o->flag_on &&
           !o->flag_off && !o->flag_anyon && !o->flag_alloff && co->n_fmt_opts == 0;
}

/* Where the header's blocks end and the EOF block starts; -1 if blocks cannot be copied. */
int vw_copy_prepare(vw_opts_t *o, const char *path)
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
    uint8_t tail[sizeof(bgzf_eof)];
    if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(tail) ||
        pread(fd, tail, sizeof(tail), st.st_size - (off_t)sizeof(tail)) != (ssize_t)sizeof(tail)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    o->copy_data_beg = after_header >> 16;
    o->copy_data_end = st.st_size - (memcmp(tail, bgzf_eof, sizeof(tail)) == 0 ? 28 : 0);
    return o->copy_data_beg <= o->copy_data_end ? 0 : -1;
}

/*
 * The file offset of the block holding the first record at or after
 * (tid, beg) in file order; tid >= the number of contigs means the unplaced
 * reads. -1 on a read error.
 */
static int64_t block_of_key(samFile *fp, hts_idx_t *idx, const sam_hdr_t *h, bam1_t *b, int tid,
                            hts_pos_t beg, const vw_opts_t *o)
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
            return o->copy_data_end;
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
            return o->copy_data_end;
        if (r < -1)
            return -1;
        int t = b->core.tid < 0 ? n_ref : b->core.tid;
        if (t > tid || (t == tid && (t == n_ref || b->core.pos >= beg)))
            return at >> 16;
    }
}

static int copy_bytes(int fd, int64_t beg, int64_t end, kstring_t *out)
{
    size_t n = (size_t)(end - beg);
    if (ks_resize(out, out->l + n + 1) < 0)
        return -1;
    while (n > 0) {
        ssize_t r = pread(fd, out->s + out->l, n, beg);
        if (r <= 0) {
            if (r == 0)
                errno = EIO; /* the file is shorter than when the run began */
            return -1;
        }
        out->l += (size_t)r;
        beg += r;
        n -= (size_t)r;
    }
    return 0;
}

vw_copier_t *vw_copier_init(void)
{
    vw_copier_t *cp = calloc(1, sizeof(*cp));
    if (!cp)
        return NULL;
    cp->fd = -1;
#ifdef SS_HAVE_LIBDEFLATE
    if (!(cp->inflater = libdeflate_alloc_decompressor())) {
        free(cp);
        return NULL;
    }
#endif
    return cp;
}

void vw_copier_destroy(vw_copier_t *cp)
{
    if (!cp)
        return;
    if (cp->fd >= 0)
        close(cp->fd);
#ifdef SS_HAVE_LIBDEFLATE
    libdeflate_free_decompressor(cp->inflater);
#endif
    free(cp);
}

static uint32_t le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Whether [p, p+n) is whole, intact BGZF blocks. */
static int blocks_intact(vw_copier_t *cp, const uint8_t *p, size_t n)
{
#ifdef SS_HAVE_LIBDEFLATE
    while (n > 0) {
        if (n < BGZF_HEADER + BGZF_FOOTER || p[0] != 31 || p[1] != 139 || p[2] != 8 ||
            !(p[3] & 4) || p[10] != 6 || p[12] != 'B' || p[13] != 'C')
            return 0;
        size_t size = (size_t)(p[16] | p[17] << 8) + 1, got;
        if (size > n || size < BGZF_HEADER + BGZF_FOOTER)
            return 0;
        uint32_t isize = le32(p + size - 4);
        if (isize > BGZF_MAX ||
            libdeflate_deflate_decompress(cp->inflater, p + BGZF_HEADER,
                                          size - BGZF_HEADER - BGZF_FOOTER, cp->scratch,
                                          BGZF_MAX, &got) != LIBDEFLATE_SUCCESS ||
            got != isize || libdeflate_crc32(0, cp->scratch, got) != le32(p + size - 8))
            return 0;
        p += size;
        n -= size;
    }
    return 1;
#else
    (void)cp, (void)p, (void)n;
    return 0;
#endif
}

int vw_copy_shard(vw_copier_t *cp, const vw_opts_t *o, ss_reader_t *rd, const sam_hdr_t *h,
                  bam1_t *b, const ss_shard_t *sh, kstring_t *out)
{
    samFile *fp = ss_reader_file(rd, 0);
    hts_idx_t *idx = ss_reader_index(rd, 0);
    const char *path = ss_reader_path(rd, 0);
    int n_ref = sam_hdr_nref(h);
    int64_t beg, end;
    if (sh->tid == VW_TID_UNPLACED) {
        beg = block_of_key(fp, idx, h, b, n_ref, 0, o);
        end = o->copy_data_end;
    } else {
        int first = sh->tid == 0 && sh->beg == 0;
        int last = sh->end >= sam_hdr_tid2len(h, sh->tid);
        beg = first ? o->copy_data_beg : block_of_key(fp, idx, h, b, sh->tid, sh->beg, o);
        end = last ? block_of_key(fp, idx, h, b, sh->tid + 1, 0, o)
                   : block_of_key(fp, idx, h, b, sh->tid, sh->end, o);
    }
    if (beg < 0 || end < 0)
        return -2;
    if (beg >= end)
        return 0;
    if (cp->fd < 0 && (cp->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        ss_error("%s: cannot open: %s; check the file still exists and is readable", path,
                 strerror(errno));
        return -1;
    }
    size_t at = out->l;
    if (copy_bytes(cp->fd, beg, end, out) < 0) {
        if (errno == EIO)
            return -2;
        ss_error("%s: cannot read bytes %lld-%lld: %s", path, (long long)beg, (long long)end,
                 strerror(errno));
        return -1;
    }
    return blocks_intact(cp, (const uint8_t *)out->s + at, out->l - at) ? 0 : -2;
}

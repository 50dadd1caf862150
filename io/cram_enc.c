/*
 * cram_enc.c -- CRAM output, one shard at a time, through htslib's own
 * CRAM encoder.
 *
 * A CRAM file is a file definition, a header container, data containers and
 * an EOF container; data containers stand alone (each carries its own
 * compression header and reference MD5s), so the data containers of several
 * CRAM files written with the same header concatenate into a valid CRAM, as
 * `samtools cat` does. Per shard, a worker writes a complete small CRAM file
 * into a scratch file (in memory where the system allows) and keeps only the
 * data containers: the file definition and header container are the same
 * bytes for every shard (checked, not assumed) and open the output once; the
 * EOF container ends it once.
 *
 * The record counter in each container counts from 0 again in each shard,
 * as after `samtools cat`; readers do not depend on it.
 *
 * Loading the reference is the costly part of CRAM encoding (htslib loads a
 * whole contig), so each worker keeps one htslib writer open on /dev/null for
 * the worker's lifetime and every shard's writer shares its reference cache
 * (CRAM_OPT_SHARED_REF): consecutive shards of a contig load it once.
 */
#define _GNU_SOURCE /* memfd_create */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <htslib/bgzf.h>
#include <htslib/cram.h>
#include <htslib/hfile.h>

#include "../base/ss_base.h"
#include "ss_budget.h"
#include "ss_encode.h"

#define CRAM_FILE_DEF_LEN 26
#define CRAM_EOF_START    0x454f46 /* "EOF": ref_seq_start of the EOF container */

struct ss_cram_enc_s {
    ss_cram_opts_t o;             /* borrowed strings: they outlive the encoder */
    const ss_cram_frame_t *frame; /* the run's, read-only */
    sam_hdr_t *hdr;               /* the worker's copy of the output header */
    int fd;                       /* scratch file: one shard's complete CRAM */
    htsFile *holder;              /* owns the shared reference cache */
    htsFile *cur;                 /* this shard's writer, or NULL */
    kstring_t check;              /* scratch for comparing the frame bytes */
};

/* ---- scratch file ---- */

static int scratch_fd(const char *tmp_dir)
{
    int fd = memfd_create("seqshard-view-cram", MFD_CLOEXEC);
    if (fd >= 0)
        return fd;
    const char *dir = tmp_dir ? tmp_dir : getenv("TMPDIR");
    kstring_t path = KS_INITIALIZE;
    ksprintf(&path, "%s/seqshard-view.XXXXXX", dir && *dir ? dir : "/tmp");
    fd = path.s ? mkstemp(path.s) : -1;
    if (fd >= 0)
        unlink(path.s); /* nameless: gone when closed, whatever happens */
    free(path.s);
    return fd;
}

/* Empty fd and open an htslib CRAM writer on it. NULL on failure. */
static htsFile *open_writer(int fd, const ss_cram_opts_t *o)
{
    if (lseek(fd, 0, SEEK_SET) < 0 || ftruncate(fd, 0) < 0)
        return NULL;
    int d = dup(fd);
    hFILE *hf = d >= 0 ? hdopen(d, "w") : NULL;
    if (!hf) {
        if (d >= 0)
            close(d);
        return NULL;
    }
    /* the name becomes the CRAM file id, as samtools' -o argument does */
    htsFile *fp = hts_hopen(hf, o->file_id ? o->file_id : "-", "wc");
    if (!fp) {
        hclose_abruptly(hf);
        return NULL;
    }
    if (o->level >= 0 && hts_set_opt(fp, HTS_OPT_COMPRESSION_LEVEL, o->level) < 0) {
        hts_close(fp);
        return NULL;
    }
    return fp;
}

/* ---- container framing (CRAM 3 spec, section 7) ---- */

/* Length in bytes of the ITF8 / LTF8 integer at p. */
static size_t itf8_len(const uint8_t *p)
{
    return p[0] < 0x80 ? 1 : p[0] < 0xc0 ? 2 : p[0] < 0xe0 ? 3 : p[0] < 0xf0 ? 4 : 5;
}

static size_t ltf8_len(const uint8_t *p)
{
    size_t n = 1;
    for (int bit = 7; bit >= 0 && (p[0] >> bit & 1); bit--)
        n++;
    return n;
}

static int32_t itf8_get(const uint8_t *p)
{
    switch (itf8_len(p)) {
    case 1:
        return p[0];
    case 2:
        return (p[0] & 0x3f) << 8 | p[1];
    case 3:
        return (p[0] & 0x1f) << 16 | p[1] << 8 | p[2];
    case 4:
        return (p[0] & 0x0f) << 24 | p[1] << 16 | p[2] << 8 | p[3];
    default:
        return (int32_t)((uint32_t)(p[0] & 0x0f) << 28 | p[1] << 20 | p[2] << 12 | p[3] << 4 |
                         (p[4] & 0x0f));
    }
}

/*
 * Size of the CRAM 3 container at p (header + blocks), its ref_seq_start in
 * *start. Returns 0 when the n bytes at p do not hold a whole container.
 */
static size_t container_size(const uint8_t *p, size_t n, int32_t *start)
{
    size_t i = 4;
    int32_t n_land = 0;
    if (n < 4)
        return 0;
    uint32_t length = p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
    /* reference id, start, span, records, record counter, bases, blocks, landmarks */
    for (int field = 0; field < 8; field++) {
        if (i + 9 > n)
            return 0; /* no room for the longest integer: not a whole container */
        if (field == 1)
            *start = itf8_get(p + i);
        if (field == 7)
            n_land = itf8_get(p + i);
        i += field == 4 || field == 5 ? ltf8_len(p + i) : itf8_len(p + i);
    }
    for (int32_t k = 0; k < n_land; k++) {
        if (i + 5 > n)
            return 0;
        i += itf8_len(p + i);
    }
    i += 4; /* CRC32 */
    return i <= n && length <= n - i ? i + length : 0;
}

/* Split a header-only CRAM into (file definition + header container, EOF). */
static int split_frame(const kstring_t *all, ss_cram_frame_t *f)
{
    const uint8_t *p = (const uint8_t *)all->s;
    int32_t start;
    if (all->l < CRAM_FILE_DEF_LEN || memcmp(p, "CRAM", 4) || p[4] != 3)
        return -1; /* htslib 1.16 writes CRAM 3.0; other versions frame differently */
    size_t hlen = container_size(p + CRAM_FILE_DEF_LEN, all->l - CRAM_FILE_DEF_LEN, &start);
    if (!hlen)
        return -1;
    hlen += CRAM_FILE_DEF_LEN;
    size_t elen = container_size(p + hlen, all->l - hlen, &start);
    if (!elen || hlen + elen != all->l || start != CRAM_EOF_START)
        return -1;
    f->head.l = f->eof.l = 0;
    if (kputsn(all->s, hlen, &f->head) < 0 || kputsn(all->s + hlen, elen, &f->eof) < 0)
        return -1;
    return 0;
}

/* Read back the header htslib wrote (with M5/UR added) from the CRAM in fd. */
static sam_hdr_t *reread_header(int fd)
{
    if (lseek(fd, 0, SEEK_SET) < 0)
        return NULL;
    int d = dup(fd);
    hFILE *hf = d >= 0 ? hdopen(d, "r") : NULL;
    if (!hf) {
        if (d >= 0)
            close(d);
        return NULL;
    }
    htsFile *fp = hts_hopen(hf, "-", "r");
    if (!fp) {
        hclose_abruptly(hf);
        return NULL;
    }
    sam_hdr_t *h = sam_hdr_read(fp);
    if (hts_close(fp) < 0 && h) {
        sam_hdr_destroy(h);
        h = NULL;
    }
    return h;
}

int ss_cram_frame_build(sam_hdr_t **hdr, const ss_cram_opts_t *o, ss_cram_frame_t *f)
{
    const char *reference = o->reference;
    kstring_t all = KS_INITIALIZE;
    sam_hdr_t *h = NULL;
    int fd = scratch_fd(NULL), ok = 0;
    htsFile *fp = fd >= 0 ? open_writer(fd, o) : NULL;
    if (!fp) {
        ss_error("cannot start the CRAM encoder: %s; check memory and --tmp-dir", strerror(errno));
        goto out;
    }
    if (reference && hts_set_fai_filename(fp, reference) < 0) {
        ss_error("%s: cannot use the reference for CRAM output; check that it exists and has "
                 "a .fai (samtools faidx)",
                 reference);
        hts_close(fp);
        goto out;
    }
    if (sam_hdr_write(fp, *hdr) < 0) {
        ss_error("cannot write the CRAM header: a reference sequence for an @SQ line is missing; "
                 "give the FASTA with -T/--reference, or set REF_PATH/REF_CACHE");
        hts_close(fp);
        goto out;
    }
    off_t size;
    if (hts_close(fp) < 0 || (size = lseek(fd, 0, SEEK_END)) < 0 ||
        ss_io_append_file_range(fd, 0, (size_t)size, &all) < 0) {
        ss_error("cannot write the CRAM header: %s", strerror(errno));
        goto out;
    }
    if (split_frame(&all, f) < 0) {
        ss_error("htslib wrote a CRAM header this build cannot frame (not CRAM 3?); "
                 "use -O bam");
        goto out;
    }
    if (!(h = reread_header(fd))) {
        ss_error("cannot re-read the CRAM header just written");
        goto out;
    }
    sam_hdr_destroy(*hdr);
    *hdr = h;
    ok = 1;
out:
    free(all.s);
    if (fd >= 0)
        close(fd);
    return ok ? 0 : -1;
}

/* ---- per worker ---- */

void ss_cram_frame_free(ss_cram_frame_t *f)
{
    if (!f)
        return;
    free(f->head.s);
    free(f->eof.s);
    f->head = f->eof = (kstring_t)KS_INITIALIZE;
}

ss_cram_enc_t *ss_cram_enc_init(const ss_cram_frame_t *frame, const ss_cram_opts_t *o,
                                sam_hdr_t *hdr, const char *tmp_dir)
{
    const char *reference = o->reference;
    ss_cram_enc_t *cw = calloc(1, sizeof(*cw));
    if (!cw) {
        ss_error("out of memory starting a CRAM writer");
        return NULL;
    }
    cw->o = *o;
    cw->frame = frame;
    cw->hdr = hdr;
    cw->fd = scratch_fd(tmp_dir);
    if (cw->fd < 0) {
        ss_error("cannot create a scratch file for CRAM output: %s; check --tmp-dir",
                 strerror(errno));
        goto fail;
    }
    /* The holder's header goes nowhere; writing it loads the reference index. */
    cw->holder = hts_open("/dev/null", "wc");
    if (!cw->holder || (reference && hts_set_fai_filename(cw->holder, reference) < 0) ||
        sam_hdr_write(cw->holder, hdr) < 0 || !cram_get_refs(cw->holder)) {
        ss_error("cannot set up the CRAM reference cache%s%s; check -T/--reference",
                 reference ? " for " : "", reference ? reference : "");
        goto fail;
    }
    return cw;
fail:
    ss_cram_enc_destroy(cw);
    return NULL;
}

void ss_cram_enc_destroy(ss_cram_enc_t *cw)
{
    if (!cw)
        return;
    ss_cram_enc_abort(cw);
    if (cw->holder)
        hts_close(cw->holder); /* its EOF goes to /dev/null */
    if (cw->fd >= 0)
        close(cw->fd);
    free(cw->check.s);
    free(cw);
}

int ss_cram_enc_begin(ss_cram_enc_t *cw)
{
    ss_cram_enc_abort(cw);
    cw->cur = open_writer(cw->fd, &cw->o);
    if (!cw->cur || hts_set_opt(cw->cur, CRAM_OPT_SHARED_REF, cram_get_refs(cw->holder)) < 0 ||
        sam_hdr_write(cw->cur, cw->hdr) < 0) {
        ss_error("cannot start a CRAM container writer: %s", strerror(errno));
        return -1;
    }
    return 0;
}

int ss_cram_enc_write(ss_cram_enc_t *cw, const bam1_t *b)
{
    if (sam_write1(cw->cur, cw->hdr, b) < 0) {
        ss_error("CRAM encoding failed at read '%s'; check the reference (-T) matches the input",
                 bam_get_qname(b));
        return -1;
    }
    return 0;
}

int ss_cram_enc_end(ss_cram_enc_t *cw, kstring_t *out, int shard_idx)
{
    const ss_cram_frame_t *f = cw->frame;
    htsFile *fp = cw->cur;
    cw->cur = NULL;
    off_t size;
    if (hts_close(fp) < 0 || (size = lseek(cw->fd, 0, SEEK_END)) < 0) {
        ss_error("CRAM encoding failed in shard %d; check the reference (-T) and --tmp-dir",
                 shard_idx);
        return -1;
    }
    size_t body = (size_t)size - f->head.l - f->eof.l;
    cw->check.l = 0;
    if ((size_t)size < f->head.l + f->eof.l ||
        ss_io_append_file_range(cw->fd, 0, f->head.l, &cw->check) < 0 ||
        ss_io_append_file_range(cw->fd, size - (off_t)f->eof.l, f->eof.l, &cw->check) < 0 ||
        memcmp(cw->check.s, f->head.s, f->head.l) ||
        memcmp(cw->check.s + f->head.l, f->eof.s, f->eof.l)) {
        ss_error("shard %d: the CRAM encoder framed the shard unexpectedly (header or EOF "
                 "differs); please report this, and use -O bam meanwhile",
                 shard_idx);
        return -1;
    }
    if (ss_io_append_file_range(cw->fd, (off_t)f->head.l, body, out) < 0) {
        ss_error("shard %d: cannot read back CRAM containers: %s", shard_idx, strerror(errno));
        return -1;
    }
    return 0;
}

/* The .crai that htslib's index builder writes for the CRAM named cram, into out. 0 or -1. */
static int crai_lines(const char *cram, int ifd, kstring_t *out)
{
    char crai[64];
    snprintf(crai, sizeof(crai), "/proc/self/fd/%d", ifd);
    if (sam_index_build3(cram, crai, 0, 0) < 0)
        return -1;
    BGZF *z = bgzf_open(crai, "r");
    if (!z)
        return -1;
    char buf[65536];
    ssize_t n;
    while ((n = bgzf_read(z, buf, sizeof(buf))) > 0)
        if (kputsn(buf, (size_t)n, out) < 0) {
            n = -1;
            break;
        }
    return bgzf_close(z) < 0 || n < 0 ? -1 : 0;
}

int ss_cram_enc_index(ss_cram_enc_t *cw, kstring_t *out)
{
    /* three descriptors for a moment (the .crai's scratch file, and htslib's second
     * opening of each), taken from the readers' budget: none spare, the file is read back */
    if (!ss_io_budget_take(3))
        return -1;
    char cram[64];
    int ifd = scratch_fd(NULL), rc = -1;
    /* the scratch files by name, for htslib's index builder (samtools index's own) */
    snprintf(cram, sizeof(cram), "/proc/self/fd/%d", cw->fd);
    if (ifd >= 0)
        rc = crai_lines(cram, ifd, out);
    if (ifd >= 0)
        close(ifd);
    ss_io_budget_give(3);
    return rc;
}

void ss_cram_enc_abort(ss_cram_enc_t *cw)
{
    if (cw && cw->cur) {
        hts_close(cw->cur); /* into the scratch file, which the next shard empties */
        cw->cur = NULL;
    }
}

/*
 * read_diag.c -- why an input could not be opened, indexed or read, told
 * the same way by every kernel and in the words samtools would use, so a
 * user can check the claim with samtools itself: a file htslib does not
 * recognise, an index given as input, an index that exists but does not
 * load, a BGZF block failing its CRC32, a record htslib refuses.
 *
 * samtools quickcheck reads only the header and the EOF block: it passes a
 * file whose blocks in between are damaged, so the advice for those is
 * 'samtools view FILE > /dev/null', which reads every block and stops at
 * the damage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <htslib/bgzf.h>
#include <htslib/hfile.h>
#include <htslib/hts.h>

#include "../base/ss_base.h"
#include "ss_diag.h"

/* What hts_detect_format2 makes of the file: its category and description. -1 if unreadable. */
static int detect(const char *path, htsFormat *fmt)
{
    hFILE *h = hopen(path, "r");
    if (!h)
        return -1;
    int r = hts_detect_format2(h, path, fmt);
    if (hclose(h) < 0)
        r = -1;
    return r;
}

void ss_io_open_error(const char *path, int err)
{
    htsFormat fmt;
    if (err != ENOEXEC || detect(path, &fmt) < 0) {
        ss_error("%s: cannot open: %s; check the file", path, strerror(err));
        return;
    }
    char *what = hts_format_description(&fmt);
    const char *desc = what ? what : "unknown";
    if (fmt.category == index_file)
        ss_error("%s: is an index (%s), not alignments (samtools view says \"Exec format "
                 "error\"); give the BAM or CRAM file it indexes",
                 path, desc);
    else if (fmt.category == unknown_category || fmt.format == unknown_format)
        ss_error("%s: is not a SAM, BAM or CRAM file: htslib does not recognise its first "
                 "bytes (samtools view says \"Exec format error\"); give a coordinate-sorted, "
                 "indexed BAM or CRAM file",
                 path);
    else
        ss_error("%s: is %s, not alignments (samtools view says \"Exec format error\"); give a "
                 "coordinate-sorted, indexed BAM or CRAM file",
                 path, desc);
    free(what);
}

/* The index htslib would load for path (hts_idx_check_local's order), or NULL if none exists. */
static const char *local_index(const char *path, char *buf, size_t size)
{
    static const char *const bam_ext[] = {".csi", ".bai"}, *const cram_ext[] = {".crai"};
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    int stem = dot && (!slash || dot > slash) ? (int)(dot - path) : (int)strlen(path);
    int is_cram = dot && strcmp(dot, ".cram") == 0;
    const char *const *ext = is_cram ? cram_ext : bam_ext;
    int n = is_cram ? 1 : 2;
    struct stat st;
    for (int i = 0; i < n; i++) {
        if ((size_t)snprintf(buf, size, "%s%s", path, ext[i]) < size && stat(buf, &st) == 0)
            return buf;
        if ((size_t)snprintf(buf, size, "%.*s%s", stem, path, ext[i]) < size && stat(buf, &st) == 0)
            return buf;
    }
    return NULL;
}

void ss_io_index_error(const char *path, int err)
{
    char buf[4200];
    const char *idx = local_index(path, buf, sizeof(buf));
    if (!idx)
        ss_error("%s: no index found (no .bai, .csi or .crai beside it); run 'samtools index %s'",
                 path, path);
    else
        ss_error("%s: its index %s does not load: %s, so it is damaged or not an index "
                 "(samtools says \"Could not load local index file\"); re-index with 'samtools "
                 "index %s'",
                 path, idx, err ? strerror(err) : "unreadable", path);
}

/* The cause of a BAM read failure, from the BGZF error flags, else from htslib's code. */
static const char *bam_cause(BGZF *z, int ret, char *buf, size_t size)
{
    int e = z ? z->errcode : 0;
    long long at = z ? (long long)z->block_address : -1;
    if (e & BGZF_ERR_CRC)
        snprintf(buf, size,
                 "the BGZF block at byte %lld fails its CRC32 checksum (samtools view "
                 "stops there: \"CRC32 checksum mismatch\", \"error reading file\")",
                 at);
    else if (e & BGZF_ERR_ZLIB)
        snprintf(buf, size,
                 "the BGZF block at byte %lld does not decompress (samtools view "
                 "stops there: \"inflate failed\", \"error reading file\")",
                 at);
    else if (e & BGZF_ERR_HEADER)
        snprintf(buf, size,
                 "the BGZF block at byte %lld has a damaged header or the file ends "
                 "inside it (samtools view stops there: \"error reading file\")",
                 at);
    else if (e & BGZF_ERR_IO)
        snprintf(buf, size, "an I/O error (%s) at byte %lld", strerror(errno ? errno : EIO), at);
    else if (ret == -4)
        snprintf(buf, size,
                 "a record is damaged: its lengths do not add up (samtools view "
                 "stops there: \"error reading file\")");
    else
        snprintf(buf, size,
                 "the file ends inside a record or is damaged there (samtools view "
                 "stops there: \"error reading file\")");
    return buf;
}

void ss_io_read_error(const char *path, samFile *fp, int ret, int shard_idx, const char *where)
{
    char cause[300], shard[32] = "";
    BGZF *z = fp && fp->is_bgzf ? fp->fp.bgzf : NULL;
    bam_cause(z, ret, cause, sizeof(cause));
    if (shard_idx >= 0)
        snprintf(shard, sizeof(shard), "shard %d ", shard_idx);
    ss_error("%s: reading %s(%s) failed: %s; the file is corrupt (samtools quickcheck "
             "reads only its ends and passes it): re-create it from its source; if 'samtools view "
             "%s > /dev/null' succeeds, the index does not match instead: re-index it with "
             "'samtools index %s'",
             path, shard, where, cause, path, path);
}

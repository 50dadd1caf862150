/*
 * crai_check.c -- does a .crai describe the CRAM beside it?
 *
 * A CRAI has no per-contig counts to check a run's records against (BAI and
 * CSI have their pseudo-bins: reader_tally.c), and a lost or changed line
 * makes queries skip containers: without its unplaced (-1) lines `view '*'`
 * printed nothing, exit 0. So at job open the file's containers are walked,
 * header to header (a seek and a read of a few bytes each, no decoding),
 * and each container holding records must be in the index at its offset,
 * with its reference id, its first position and its end; and every line of
 * the index must name a container of the file.
 */
#include <fcntl.h>
#include <htslib/bgzf.h>
#include <htslib/kstring.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ss_diag.h"

typedef struct {
    int64_t off;      /* the container's offset */
    int ref;          /* its reference id, -2 for several */
    int64_t beg, end; /* 1-based first position and end (start + span), as the CRAI gives them */
    int64_t n_rec;    /* records; the index's lines of it, as counted */
    int n_lines;
} container_t;

int ss_io_itf8(const uint8_t *p, const uint8_t *end, int32_t *v)
{
    if (p >= end)
        return -1;
    uint32_t b = p[0];
    int extra = b < 0x80 ? 0 : b < 0xc0 ? 1 : b < 0xe0 ? 2 : b < 0xf0 ? 3 : 4;
    if (end - p <= extra)
        return -1;
    uint32_t x;
    switch (extra) {
    case 0:
        x = b;
        break;
    case 1:
        x = (b & 0x3f) << 8 | p[1];
        break;
    case 2:
        x = (b & 0x1f) << 16 | (uint32_t)p[1] << 8 | p[2];
        break;
    case 3:
        x = (b & 0x0f) << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        break;
    default:
        x = (b & 0x0f) << 28 | (uint32_t)p[1] << 20 | (uint32_t)p[2] << 12 | (uint32_t)p[3] << 4 |
            (p[4] & 0x0f);
    }
    *v = (int32_t)x;
    return extra + 1;
}

/* Bytes of the ITF-8 or LTF-8 number at p (the leading 1 bits of its first byte say). */
static int skip_tf8(const uint8_t *p, int ltf8)
{
    int n = 0;
    while (n < (ltf8 ? 8 : 4) && (p[0] << n & 0x80))
        n++;
    return n + 1;
}

/*
 * The container header at off of the CRAM open as fd: ref id, start, span,
 * records, and where the next container starts. One pread of the header:
 * through htslib's handle each seek refills its read buffer (256 KiB), which
 * was most of the walk's time. 0, or -1 when it cannot be read.
 */
static int read_container(int fd, int major, int64_t off, container_t *c, int64_t *next)
{
    uint8_t buf[4096];
    ssize_t got = pread(fd, buf, sizeof(buf), (off_t)off);
    if (got < 8)
        return -1;
    const uint8_t *p = buf + 4, *end = buf + got;
    int32_t f[4], v = 0;
    for (int k = 0; k < 4; k++) {
        int used = ss_io_itf8(p, end, &f[k]);
        if (used < 0)
            return -1;
        p += used;
    }
    /* record counter (LTF-8 from CRAM 3), bases (LTF-8), blocks, landmarks */
    p += skip_tf8(p, major >= 3);
    p += end - p > 9 ? skip_tf8(p, 1) : 0;
    for (int k = 0; k < 2 && p < end; k++) {
        int used = ss_io_itf8(p, end, &v);
        if (used < 0)
            return -1;
        p += used;
    }
    for (int32_t k = 0; k < v && p < end; k++)
        p += skip_tf8(p, 0);
    p += major >= 3 ? 4 : 0; /* CRC32 */
    if (p > end - 1 || v < 0)
        return -1; /* past what was read: a damaged header (or 800 slices: not checked) */
    int32_t len;
    memcpy(&len, buf, 4);
    *next = off + (p - buf) + len;
    *c = (container_t){
        .off = off, .ref = f[0], .beg = f[1], .end = (int64_t)f[1] + f[2], .n_rec = f[3]};
    return len < 0 ? -1 : 0;
}

/* The file's containers with records, from the first data container to the end. */
static int walk(const char *path, int major, int64_t first, int64_t size, container_t **out, int *n)
{
    int m = 0, fd = open(path, O_RDONLY | O_CLOEXEC);
    *out = NULL;
    *n = 0;
    if (fd < 0)
        return -1;
    int ret = 0;
    for (int64_t off = first; off < size && ret == 0;) {
        container_t c;
        int64_t next;
        if (read_container(fd, major, off, &c, &next) < 0 || next <= off) {
            ret = -1;
            break;
        }
        if (c.n_rec > 0 && *n == m) {
            container_t *a = realloc(*out, (size_t)(m = m ? 2 * m : 64) * sizeof(*a));
            if (!a)
                ret = -1;
            else
                *out = a;
        }
        if (c.n_rec > 0 && ret == 0)
            (*out)[(*n)++] = c;
        off = next;
    }
    close(fd);
    return ret;
}

static container_t *find(container_t *c, int n, int64_t off)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (c[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && c[lo].off == off ? &c[lo] : NULL;
}

/*
 * Match the index's lines (ref, start, span, container offset, ...) with the
 * containers: 0, 1 when a line names no container or another reference, -1
 * when the index cannot be read.
 */
static int match_lines(const char *crai, container_t *c, int n, int64_t *seen_beg,
                       int64_t *seen_end)
{
    BGZF *z = bgzf_open(crai, "r");
    if (!z)
        return -1;
    kstring_t line = {0};
    int bad = 0;
    while (!bad && bgzf_getline(z, '\n', &line) >= 0) {
        long long ref, beg, span, off;
        if (sscanf(line.s, "%lld %lld %lld %lld", &ref, &beg, &span, &off) != 4) {
            bad = 1;
            break;
        }
        container_t *k = find(c, n, off);
        if (!k || (k->ref != -2 && k->ref != ref)) {
            bad = 1;
            break;
        }
        int64_t i = k - c;
        if (k->n_lines++ == 0 || beg < seen_beg[i])
            seen_beg[i] = beg;
        if (beg + span > seen_end[i])
            seen_end[i] = beg + span;
    }
    free(line.s);
    bgzf_close(z);
    return bad;
}

int ss_io_crai_problem(const char *path, int major, const char *crai, int64_t first, long long size)
{
    container_t *c;
    int n, problem = 0;
    if (walk(path, major, first, size, &c, &n) < 0) {
        free(c);
        return 0; /* a damaged file: the run's reads say so, with the shard */
    }
    int64_t *beg = calloc((size_t)n + 1, sizeof(*beg)), *end = calloc((size_t)n + 1, sizeof(*end));
    if (!beg || !end || (problem = match_lines(crai, c, n, beg, end)) < 0)
        problem = 0; /* out of memory, or unreadable: htslib loaded it, so it fails the run later */
    for (int i = 0; !problem && i < n; i++) {
        if (c[i].n_lines == 0)
            problem = 1; /* a container of records the index does not know */
        else if (c[i].ref >= 0 && (beg[i] != c[i].beg || end[i] != c[i].end))
            problem = 1; /* its slices' positions are not the container's */
    }
    free(beg);
    free(end);
    free(c);
    return problem;
}

/*
 * view_crai.c -- a CRAM input's containers, so that each shard decodes only
 * containers of its own.
 *
 * Decoding containers is most of the cost of viewing a CRAM. A region query
 * starts at the first container whose alignments overlap the region, which
 * for a shard cut inside a contig is a container its predecessor decodes too:
 * at the default shard size about one container in eight was decoded twice.
 * So for CRAM input a shard owns containers, not positions: shard [beg, end)
 * of a contig owns the containers whose first alignment starts in
 * [beg, end), and emits every record in them that lies in its region (view.c
 * says which). Each record is in one container, so it is emitted once, and
 * containers are read in file order, so records come out in file order.
 *
 * The containers come from the .crai (gzipped text: reference id, alignment
 * start, span, container offset, slice offset, slice size per slice). A
 * container that holds several references, or a contig whose containers do
 * not start in order, makes that contig use region queries as before. How
 * many records a container holds is in its header, read just before the
 * shard decodes it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>
#include <htslib/cram.h>
#include <htslib/hfile.h>

#include "../../io/ss_diag.h"
#include "view.h"

typedef struct {
    int64_t off;
    hts_pos_t beg; /* 0-based start of the slice's first alignment */
    int ref;       /* reference id; -1 unmapped */
} crai_line_t;

struct vw_crai_s {
    int n_ref;
    vw_container_t **c; /* [n_ref]: containers of each reference, in file order */
    int *n;             /* [n_ref]: how many; -1 = this reference uses region queries */
};

void vw_crai_destroy(vw_crai_t *x)
{
    if (!x)
        return;
    for (int i = 0; i < x->n_ref; i++)
        free(x->c[i]);
    free(x->c);
    free(x->n);
    free(x);
}

static int by_offset(const void *a, const void *b)
{
    const crai_line_t *p = a, *q = b;
    if (p->off != q->off)
        return p->off < q->off ? -1 : 1;
    return p->beg < q->beg ? -1 : p->beg > q->beg;
}

/* Every line of the index, or -1 when it cannot be read or parsed. */
static int read_lines(const char *path, crai_line_t **lines, size_t *n)
{
    BGZF *f = bgzf_open(path, "r"); /* reads gzip, BGZF and plain text alike */
    if (!f)
        return -1;
    kstring_t s = KS_INITIALIZE;
    size_t m = 0;
    int rc = 0;
    *lines = NULL;
    *n = 0;
    while (rc == 0 && bgzf_getline(f, '\n', &s) >= 0) {
        long long ref, start, span, off;
        if (s.l == 0)
            continue;
        if (sscanf(s.s, "%lld %lld %lld %lld", &ref, &start, &span, &off) != 4 || ref < -1 ||
            off < 0) {
            rc = -1;
            break;
        }
        if (*n == m) {
            m = m ? 2 * m : 1024;
            crai_line_t *a = realloc(*lines, m * sizeof(*a));
            if (!a) {
                rc = -1;
                break;
            }
            *lines = a;
        }
        (*lines)[(*n)++] = (crai_line_t){off, start > 0 ? start - 1 : 0, (int)ref};
    }
    free(s.s);
    if (bgzf_close(f) < 0)
        rc = -1;
    if (rc < 0) {
        free(*lines);
        *lines = NULL;
    }
    return rc;
}

static int add_container(vw_crai_t *x, int ref, int64_t off, hts_pos_t beg)
{
    int n = x->n[ref];
    if (n < 0)
        return 0;
    if (n > 0 && x->c[ref][n - 1].beg > beg) {
        x->n[ref] = -1; /* not in coordinate order: region queries */
        return 0;
    }
    if ((n & (n - 1)) == 0) { /* 0, 1, 2, 4, ...: grow by doubling */
        vw_container_t *a = realloc(x->c[ref], (size_t)(n ? 2 * n : 1) * sizeof(*a));
        if (!a)
            return -1;
        x->c[ref] = a;
    }
    x->c[ref][n] = (vw_container_t){off, beg};
    x->n[ref] = n + 1;
    return 0;
}

/* Group the slices by container; single-reference containers join their reference's list. */
static int build(vw_crai_t *x, crai_line_t *l, size_t n)
{
    qsort(l, n, sizeof(*l), by_offset);
    for (size_t i = 0, j; i < n; i = j) {
        int mixed = 0;
        for (j = i + 1; j < n && l[j].off == l[i].off; j++)
            mixed |= l[j].ref != l[i].ref;
        for (size_t k = i; k < j; k++)
            if (l[k].ref >= x->n_ref)
                return -1; /* the index of another file */
        if (mixed) {
            for (size_t k = i; k < j; k++)
                if (l[k].ref >= 0)
                    x->n[l[k].ref] = -1;
        } else if (l[i].ref >= 0 && add_container(x, l[i].ref, l[i].off, l[i].beg) < 0) {
            return -1;
        }
    }
    return 0;
}

vw_crai_t *vw_crai_load(const char *cram_path, const char *index_path, int n_ref)
{
    kstring_t def = KS_INITIALIZE;
    if (!index_path) {
        ksprintf(&def, "%s.crai", cram_path);
        index_path = def.s;
    }
    crai_line_t *lines = NULL;
    size_t n = 0;
    vw_crai_t *x = NULL;
    if (index_path && n_ref > 0 && read_lines(index_path, &lines, &n) == 0 &&
        (x = calloc(1, sizeof(*x))) != NULL) {
        x->n_ref = n_ref;
        x->c = calloc((size_t)n_ref, sizeof(*x->c));
        x->n = calloc((size_t)n_ref, sizeof(*x->n));
        if (!x->c || !x->n || build(x, lines, n) < 0) {
            vw_crai_destroy(x);
            x = NULL;
        }
    }
    free(lines);
    free(def.s);
    return x;
}

int vw_crai_containers(const vw_crai_t *x, int tid, const vw_container_t **c)
{
    if (!x || tid < 0 || tid >= x->n_ref || x->n[tid] <= 0)
        return 0;
    *c = x->c[tid];
    return x->n[tid];
}

int vw_crai_first_at(const vw_container_t *c, int n, hts_pos_t pos)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (c[mid].beg < pos)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int vw_crai_records(htsFile *fp, int64_t off, int64_t *nrec)
{
    /* CRAM 2 and 3 containers: int32 length, then ITF-8 ref id, start, span, record count */
    if (hts_get_format(fp)->version.major > 3)
        return -1;
    hFILE *hf = cram_fd_get_fp(fp->fp.cram);
    uint8_t buf[4 + 4 * 5];
    if (hseek(hf, off, SEEK_SET) < 0)
        return -1;
    ssize_t got = hread(hf, buf, sizeof(buf));
    if (got < 4)
        return -1;
    const uint8_t *p = buf + 4, *end = buf + got;
    int32_t v = 0;
    for (int field = 0; field < 4; field++) {
        int used = ss_io_itf8(p, end, &v);
        if (used < 0)
            return -1;
        p += used;
    }
    if (v < 0)
        return -1;
    *nrec = v;
    return 0;
}

int vw_crai_seek(htsFile *fp, hts_idx_t *idx, const vw_container_t *c)
{
    /*
     * A query is htslib's public way to drop the container being decoded and
     * any range limit; "from the start" sets no limit, so the caller counts
     * the records. Then the seek to c.
     */
    hts_itr_t *itr = sam_itr_queryi(idx, HTS_IDX_START, 0, 0);
    if (!itr)
        return -1;
    hts_itr_destroy(itr);
    return cram_seek(fp->fp.cram, c->off, SEEK_SET) == 0 ? 0 : -1;
}

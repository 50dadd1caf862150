/*
 * resume_manifest.c -- the resume manifest's file format (resume.h): a text
 * header, so `head` shows what a manifest belongs to, then fixed-size binary
 * records, appended in batches after the output's bytes were synced.
 *
 *   seqshard-resume 2
 *   nonce 0123456789abcdef
 *   <identity lines: kernel, output, options, plan, header, input ...>
 *   end 89abcdef              <- crc32 of every byte before "end"
 *   <record><record>...       <- SS_RESUME_REC_SIZE bytes each
 *
 * A record carries a crc32 of its own first 124 bytes, so a record torn by a
 * kill or a crash reads as bad and ends the list: only whole records count.
 * The byte order is the host's; a manifest from another kind of machine fails
 * its checksums and is ignored, as a missing one would be.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#if SS_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#include "resume.h"

#define MAGIC_LINE "seqshard-resume 2\n"
#define REC_MAGIC  0x43525353u /* "SSRC" */
#define HEADER_MAX (1 << 20)   /* a header is a few hundred bytes per input */

uint32_t ss_resume_crc32(uint32_t crc, const void *buf, size_t len)
{
#if SS_HAVE_LIBDEFLATE
    return libdeflate_crc32(crc, buf, len); /* several times zlib's speed (PCLMUL) */
#else
    return (uint32_t)crc32_z(crc, buf, len);
#endif
}

/* ---- records ---- */

static unsigned char *put64(unsigned char *p, uint64_t v)
{
    memcpy(p, &v, 8);
    return p + 8;
}

static unsigned char *put32(unsigned char *p, uint32_t v)
{
    memcpy(p, &v, 4);
    return p + 4;
}

static const unsigned char *get64(const unsigned char *p, uint64_t *v)
{
    memcpy(v, p, 8);
    return p + 8;
}

static const unsigned char *get32(const unsigned char *p, uint32_t *v)
{
    memcpy(v, p, 4);
    return p + 4;
}

void ss_resume_rec_encode(const ss_resume_rec_t *r, unsigned char *out)
{
    unsigned char *p = out;
    p = put32(p, REC_MAGIC);
    p = put32(p, r->idx);
    p = put64(p, r->off);
    p = put64(p, r->size);
    p = put32(p, r->crc);
    p = put64(p, r->reads);
    p = put64(p, r->bases);
    for (int i = 0; i < SS_KERNEL_COUNTERS; i++)
        p = put64(p, r->counts[i]);
    for (int i = 0; i < SS_SUMMARY_N; i++)
        p = put64(p, r->summary[i]);
    /* the record's own checksum ends it */
    put32(p, (uint32_t)crc32(0, out, (uInt)(p - out)));
}

int ss_resume_rec_decode(const unsigned char *in, ss_resume_rec_t *r)
{
    uint32_t magic, sum;
    const unsigned char *p = get32(in, &magic);
    if (magic != REC_MAGIC)
        return -1;
    memset(r, 0, sizeof(*r));
    p = get32(p, &r->idx);
    p = get64(p, &r->off);
    p = get64(p, &r->size);
    p = get32(p, &r->crc);
    p = get64(p, &r->reads);
    p = get64(p, &r->bases);
    for (int i = 0; i < SS_KERNEL_COUNTERS; i++)
        p = get64(p, &r->counts[i]);
    for (int i = 0; i < SS_SUMMARY_N; i++)
        p = get64(p, &r->summary[i]);
    get32(p, &sum);
    return sum == (uint32_t)crc32(0, in, (uInt)(p - in)) ? 0 : -1;
}

/* ---- reading ---- */

/*
 * The whole file into *buf (NUL-terminated); 0, -1 missing, -2 unreadable. A
 * manifest is trusted only as a regular file of ours: one another user put
 * beside the output (a link, or a forged one) counts as unreadable.
 */
static int slurp(const char *path, char **buf, size_t *len)
{
    int fd = ss_output_open_own(path, O_RDONLY);
    if (fd < 0)
        return errno == ENOENT ? -1 : -2;
    struct stat st;
    char *b = NULL;
    if (fstat(fd, &st) != 0 || !(b = malloc((size_t)st.st_size + 1))) {
        close(fd);
        return -2;
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = pread(fd, b + got, (size_t)st.st_size - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    b[got] = '\0';
    *buf = b;
    *len = got;
    return 0;
}

/* Where the header's "end" line is, checked; the records start at *rec_at. 0 or -2. */
static int check_header(const char *b, size_t len, size_t *end_at, size_t *rec_at)
{
    size_t ml = sizeof(MAGIC_LINE) - 1;
    if (len < ml || memcmp(b, MAGIC_LINE, ml) != 0)
        return -2;
    const char *e = NULL, *p = b;
    while (p < b + len && p - b < HEADER_MAX) {
        const char *nl = memchr(p, '\n', (size_t)(b + len - p));
        if (!nl)
            break;
        if (nl - p == 12 && memcmp(p, "end ", 4) == 0) {
            e = p;
            break;
        }
        p = nl + 1;
    }
    if (!e)
        return -2;
    unsigned long want = strtoul(e + 4, NULL, 16);
    if (want != crc32(0, (const unsigned char *)b, (uInt)(e - b)))
        return -2;
    *end_at = (size_t)(e - b);
    *rec_at = *end_at + 13;
    return 0;
}

int ss_resume_read(const char *path, uint64_t *nonce, char **identity, ss_resume_rec_t **recs,
                   int *n)
{
    char *b;
    size_t len, end_at, rec_at;
    *identity = NULL, *recs = NULL, *n = 0;
    int r = slurp(path, &b, &len);
    if (r < 0)
        return r;
    const char *nl = strchr(b + sizeof(MAGIC_LINE) - 1, '\n');
    if (check_header(b, len, &end_at, &rec_at) < 0 || !nl ||
        sscanf(b + sizeof(MAGIC_LINE) - 1, "nonce %" SCNx64, nonce) != 1) {
        free(b);
        return -2;
    }
    size_t id_len = end_at - (size_t)(nl + 1 - b);
    size_t max = (len - rec_at) / SS_RESUME_REC_SIZE;
    if (!(*identity = malloc(id_len + 1)) || (max && !(*recs = malloc(max * sizeof(**recs))))) {
        free(*identity), free(b);
        *identity = NULL;
        return -2;
    }
    memcpy(*identity, nl + 1, id_len);
    (*identity)[id_len] = '\0';
    for (size_t i = 0; i < max; i++) {
        const unsigned char *p = (const unsigned char *)b + rec_at + i * SS_RESUME_REC_SIZE;
        if (ss_resume_rec_decode(p, &(*recs)[*n]) < 0)
            break; /* a torn or damaged record: what follows was never synced after it */
        (*n)++;
    }
    free(b);
    return 0;
}

/* Line i of text and its length, or NULL past the end. */
static const char *line_at(const char *text, int i, size_t *len)
{
    const char *p = text;
    for (; i > 0 && p; i--)
        if ((p = strchr(p, '\n')))
            p++;
    if (!p || !*p)
        return NULL;
    *len = strcspn(p, "\n");
    return p;
}

/* Copy a line (maybe NULL) for a message, cut to fit. */
static void show_line(char *buf, size_t size, const char *l, size_t len)
{
    snprintf(buf, size, "%.*s", l ? (int)(len < size ? len : size - 1) : 0, l ? l : "");
}

int ss_resume_identity_diff(const char *was, const char *now, ss_resume_diff_t *d)
{
    for (int i = 0;; i++) {
        size_t la = 0, lb = 0;
        const char *a = line_at(was, i, &la), *b = line_at(now, i, &lb);
        if (!a && !b)
            return 0;
        if (a && b && la == lb && memcmp(a, b, la) == 0)
            continue;
        show_line(d->was, sizeof(d->was), a, la);
        show_line(d->now, sizeof(d->now), b, lb);
        const char *l = a ? a : b;
        size_t kl = strcspn(l, " \n");
        snprintf(d->key, sizeof(d->key), "%.*s",
                 (int)(kl < sizeof(d->key) ? kl : sizeof(d->key) - 1), l);
        return 1;
    }
}

/* ---- writing ---- */

/* Encoded records waiting to be appended. */
typedef struct {
    unsigned char *p;
    size_t n, m; /* bytes */
} recbuf_t;

/*
 * Locking: `lock` guards q, stop and failed (the main thread adds while the
 * syncer takes); `io` is held by whoever syncs and appends (the syncer, or a
 * caller of ss_resume_log_flush), so two appends never interleave and the
 * buffer being written (spare) is never swapped under the writer.
 */
struct ss_resume_log_s {
    int fd, data_fd;
    char *path;
    pthread_mutex_t lock, io;
    pthread_cond_t cv; /* wakes the syncer to stop (monotonic clock) */
    recbuf_t q, spare; /* q: being filled; spare: being written, under io */
    int stop, failed;
    int started; /* the syncer thread runs */
    pthread_t syncer;
};

static int write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w, len -= (size_t)w;
    }
    return 0;
}

/* The header text into *ks: magic, nonce, identity, end + crc. 0 or -1. */
static int header_text(uint64_t nonce, const char *identity, kstring_t *ks)
{
    if (ksprintf(ks, MAGIC_LINE "nonce %016" PRIx64 "\n%s", nonce, identity ? identity : "") < 0)
        return -1;
    uint32_t c = (uint32_t)crc32(0, (const unsigned char *)ks->s, (uInt)ks->l);
    return ksprintf(ks, "end %08x\n", c) < 0 ? -1 : 0;
}

/* Write header + records to path.new, sync, rename over path; fd stays open for appends. */
static int create_file(ss_resume_log_t *l, uint64_t nonce, const char *identity,
                       const ss_resume_rec_t *init, int n)
{
    kstring_t ks = KS_INITIALIZE;
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof(tmp), "%s.new", l->path);
    int ok = header_text(nonce, identity, &ks) == 0;
    for (int i = 0; ok && i < n; i++) {
        unsigned char rec[SS_RESUME_REC_SIZE];
        ss_resume_rec_encode(&init[i], rec);
        ok = kputsn((const char *)rec, sizeof(rec), &ks) >= 0;
    }
    /* never through what someone else put at path.new; the rename replaces what is at path */
    if (ok && (l->fd = ss_output_create_own(tmp, O_WRONLY)) < 0) {
        ss_output_own_error(l->path, tmp, errno);
        free(ks.s);
        return -1;
    }
    ok = ok && write_all(l->fd, ks.s, ks.l) == 0 && fdatasync(l->fd) == 0;
    ok = ok && rename(tmp, l->path) == 0;
    free(ks.s);
    if (!ok) {
        ss_error("%s: cannot write the resume manifest: %s; check free space beside the output",
                 l->path, strerror(errno));
        if (l->fd >= 0)
            unlink(tmp);
        return -1;
    }
    return 0;
}

/*
 * Append what was queued: the shards' bytes first (a record must never name
 * bytes that a crash could still lose), then the records, then their sync.
 * 0, or -1 after ss_error() (which stops the run: a worker sees it).
 */
static int drain(ss_resume_log_t *l)
{
    int rc = 0;
    pthread_mutex_lock(&l->io);
    pthread_mutex_lock(&l->lock);
    recbuf_t t = l->q;
    l->q = l->spare;
    l->spare = t;
    l->q.n = 0;
    pthread_mutex_unlock(&l->lock);
    if (l->spare.n == 0)
        goto out;
    if (l->data_fd >= 0 && fdatasync(l->data_fd) != 0 && errno != EINVAL) {
        ss_error("%s: cannot sync the output: %s; check free space on its file system", l->path,
                 strerror(errno));
        rc = -1;
    } else if (write_all(l->fd, l->spare.p, l->spare.n) < 0 || fdatasync(l->fd) != 0) {
        ss_error("%s: cannot append to the resume manifest: %s; check free space beside the "
                 "output",
                 l->path, strerror(errno));
        rc = -1;
    }
    l->spare.n = 0;
out:
    pthread_mutex_unlock(&l->io);
    return rc;
}

static struct timespec after(double s)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)s;
    t.tv_nsec += (long)((s - (double)(long)s) * 1e9);
    if (t.tv_nsec >= 1000000000L)
        t.tv_sec++, t.tv_nsec -= 1000000000L;
    return t;
}

/*
 * The syncer: every SS_RESUME_SYNC_S it appends what was queued. A thread of
 * its own, so the writer (the main thread) never waits for the disk; it
 * calls no MPI.
 */
static void *syncer_main(void *arg)
{
    ss_resume_log_t *l = arg;
    pthread_mutex_lock(&l->lock);
    while (!l->stop && !l->failed) {
        struct timespec t = after(SS_RESUME_SYNC_S);
        while (!l->stop && pthread_cond_timedwait(&l->cv, &l->lock, &t) != ETIMEDOUT)
            ;
        if (l->stop)
            break;
        pthread_mutex_unlock(&l->lock);
        int r = drain(l);
        pthread_mutex_lock(&l->lock);
        l->failed |= r < 0;
    }
    pthread_mutex_unlock(&l->lock);
    return NULL;
}

static int start_syncer(ss_resume_log_t *l)
{
    pthread_condattr_t ca;
    int ok = pthread_mutex_init(&l->lock, NULL) == 0 && pthread_mutex_init(&l->io, NULL) == 0;
    ok = ok && pthread_condattr_init(&ca) == 0;
    ok = ok && pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0;
    ok = ok && pthread_cond_init(&l->cv, &ca) == 0;
    ok = ok && pthread_create(&l->syncer, NULL, syncer_main, l) == 0;
    if (!ok) {
        ss_error("%s: cannot start the thread that writes the resume manifest; check ulimit -u",
                 l->path);
        return -1;
    }
    l->started = 1;
    return 0;
}

ss_resume_log_t *ss_resume_log_create(const char *path, uint64_t nonce, const char *identity,
                                      int data_fd, const ss_resume_rec_t *init, int n)
{
    ss_resume_log_t *l = calloc(1, sizeof(*l));
    if (!l || !(l->path = strdup(path))) {
        free(l);
        ss_error("out of memory writing the resume manifest");
        return NULL;
    }
    l->fd = -1;
    l->data_fd = data_fd;
    if (create_file(l, nonce, identity, init, n) < 0 || start_syncer(l) < 0) {
        ss_resume_log_close(l);
        return NULL;
    }
    return l;
}

int ss_resume_log_add(ss_resume_log_t *l, const ss_resume_rec_t *r)
{
    int rc = 0;
    pthread_mutex_lock(&l->lock);
    if (l->failed) {
        rc = -1; /* said already */
    } else if (l->q.n + SS_RESUME_REC_SIZE > l->q.m) {
        size_t m = l->q.m ? 2 * l->q.m : 64 * SS_RESUME_REC_SIZE;
        unsigned char *p = realloc(l->q.p, m);
        if (p)
            l->q.p = p, l->q.m = m;
        else
            rc = -1;
    }
    if (rc == 0) {
        ss_resume_rec_encode(r, l->q.p + l->q.n);
        l->q.n += SS_RESUME_REC_SIZE;
    }
    int failed = l->failed;
    pthread_mutex_unlock(&l->lock);
    if (rc < 0 && !failed)
        ss_error("out of memory queueing a resume record");
    return rc;
}

int ss_resume_log_flush(ss_resume_log_t *l)
{
    return l ? drain(l) : 0;
}

void ss_resume_log_close(ss_resume_log_t *l)
{
    if (!l)
        return;
    if (l->started) {
        pthread_mutex_lock(&l->lock);
        l->stop = 1;
        pthread_cond_signal(&l->cv);
        pthread_mutex_unlock(&l->lock);
        pthread_join(l->syncer, NULL);
        pthread_mutex_destroy(&l->lock);
        pthread_mutex_destroy(&l->io);
        pthread_cond_destroy(&l->cv);
    }
    if (l->fd >= 0)
        close(l->fd);
    free(l->q.p);
    free(l->spare.p);
    free(l->path);
    free(l);
}

/*
 * ref.c -- a worker's reference sequences, by window.
 *
 * samtools mpileup (mplp_get_ref) holds whole contigs, the current and the
 * previous one; a worker here would then hold up to two of the largest
 * contigs (chr1: 250 MB each), and memory would follow the genome instead
 * of the shard (DESIGN.md, bounded memory). So each contig gets its length
 * in reserved address space (no memory behind it), and only the window a
 * shard uses is read in: ss_ref_cover() loads the positions asked for and
 * ss_ref_release() gives the pages back. htslib's BAQ and MAPQ-cap code
 * index the sequence by contig position, which stays valid: the pointer is
 * to the whole contig's address range. Outside the window the pages are
 * inaccessible, so a position used without being covered fails loudly in
 * the tests instead of reading as a wrong base.
 *
 * As in samtools, the last two contigs are kept, the tid is only a cache key
 * and the sequence is looked up by name, with the worker's own faidx handle
 * (faidx_t is not thread-safe).
 */
#include <errno.h>
#include <htslib/faidx.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../base/ss_base.h"
#include "ss_budget.h"
#include "ss_ref.h"

/* Windows grow by at least this much: reads moving along a shard fetch once per 64 kb. */
#define GROW_BP ((hts_pos_t)1 << 16)

typedef struct {
    int tid;   /* -1: empty slot */
    char *map; /* len + 1 bytes of address space; NULL: contig not in the FASTA */
    size_t map_size;
    hts_pos_t len;
    hts_pos_t wb, we; /* the readable window, whole pages (we may stop at len) */
    char *name;
} ref_slot_t;

struct ss_ref_s {
    faidx_t *fai; /* NULL: no reference */
    char *path;
    size_t page;
    ref_slot_t slot[2]; /* slot[0] most recently used */
};

ss_ref_t *ss_ref_init(const char *fasta)
{
    ss_ref_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->slot[0].tid = r->slot[1].tid = -1;
    long page = sysconf(_SC_PAGESIZE);
    r->page = page > 0 ? (size_t)page : 4096;
    /* no FAI_CREATE: ss_job_open checked the .fai exists, and workers must not write one */
    errno = 0;
    if (fasta && (!(r->path = strdup(fasta)) || !(r->fai = fai_load3(fasta, NULL, NULL, 0)))) {
        if (ss_io_fds_exhausted(errno))
            ss_io_error_fds(fasta, errno);
        else if (errno == ENOMEM)
            ss_error("%s: out of memory loading the reference index; lower -@ or give the "
                     "run more memory",
                     fasta);
        else
            ss_error("%s: cannot load the reference index; run 'samtools faidx %s'", fasta, fasta);
        free(r->path);
        free(r);
        return NULL;
    }
    return r;
}

static void slot_clear(ref_slot_t *s)
{
    if (s->map)
        munmap(s->map, s->map_size);
    free(s->name);
    *s = (ref_slot_t){.tid = -1};
}

/*
 * Reserve the address range of contig `name` in slot s. 0 (the contig may be
 * missing from the FASTA: then s->map stays NULL), or -1 after ss_error(): a
 * contig the FASTA has must never print as N because memory ran out.
 */
static int slot_open(ss_ref_t *ref, ref_slot_t *s, int tid, const char *name)
{
    slot_clear(s);
    s->tid = tid;
    /* faidx_has_seq first: a missing contig is an answer, not an htslib error line */
    if (!faidx_has_seq(ref->fai, name))
        return 0;
    /* htslib 1.16 has no 64-bit length call: contigs must stay under 2^31 bp here */
    hts_pos_t len = faidx_seq_len(ref->fai, name);
    if (len < 0) {
        ss_error("%s: cannot read the length of contig '%s' from its .fai; rebuild it with "
                 "samtools faidx",
                 ref->path, name);
        goto fail;
    }
    s->map_size = (size_t)len + 1; /* one more byte: an empty contig still has an address */
    void *m =
        mmap(NULL, s->map_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED || !(s->name = strdup(name))) {
        if (m != MAP_FAILED)
            munmap(m, s->map_size);
        ss_error("%s: out of memory for contig '%s' (%lld bp of address space); lower -@ or "
                 "give the run more memory",
                 ref->path, name, (long long)len);
        goto fail;
    }
    s->map = m;
    s->len = len;
    return 0;
fail:
    slot_clear(s); /* not cached: the next call tries again, and fails again if it must */
    return -1;
}

const char *ss_ref_get(ss_ref_t *ref, int tid, const char *name, hts_pos_t *len)
{
    *len = 0;
    if (!ref || !ref->fai || !name || tid < 0)
        return NULL;
    if (ref->slot[0].tid != tid) {
        ref_slot_t t = ref->slot[1];
        ref->slot[1] = ref->slot[0];
        ref->slot[0] = t;
        if (ref->slot[0].tid != tid && slot_open(ref, &ref->slot[0], tid, name) < 0) {
            *len = -1;
            return NULL;
        }
    }
    *len = ref->slot[0].map ? ref->slot[0].len : 0;
    return ref->slot[0].map;
}

static ref_slot_t *slot_of(ss_ref_t *ref, int tid)
{
    for (int i = 0; ref && i < 2; i++)
        if (ref->slot[i].tid == tid && tid >= 0 && ref->slot[i].map)
            return &ref->slot[i];
    return NULL;
}

/* Read [b, e) of the contig into its place. 0 or -1. */
static int fetch(ss_ref_t *ref, ref_slot_t *s, hts_pos_t b, hts_pos_t e)
{
    if (b >= e)
        return 0;
    hts_pos_t got = 0;
    errno = 0;
    char *seq = faidx_fetch_seq64(ref->fai, s->name, b, e - 1, &got);
    int ok = seq && got == e - b, err = errno;
    if (ok)
        memcpy(s->map + b, seq, (size_t)got);
    free(seq);
    if (!ok && !seq && err == ENOMEM) /* htslib's buffer for the bases: not a bad FASTA */
        ss_error("%s: out of memory reading %s:%lld-%lld; lower -@ or give the run more "
                 "memory",
                 ref->path, s->name, (long long)b + 1, (long long)e);
    else if (!ok)
        ss_error("%s: cannot read %s:%lld-%lld; check the FASTA and its .fai (samtools faidx)",
                 ref->path, s->name, (long long)b + 1, (long long)e);
    return ok ? 0 : -1;
}

int ss_ref_cover(ss_ref_t *ref, int tid, hts_pos_t lo, hts_pos_t hi)
{
    ref_slot_t *s = slot_of(ref, tid);
    if (!s)
        return 0;
    lo = lo < 0 ? 0 : lo;
    hi = hi > s->len ? s->len : hi;
    if (lo >= hi || (lo >= s->wb && hi <= s->we))
        return 0;
    hts_pos_t pg = (hts_pos_t)ref->page;
    hts_pos_t nb = lo, ne = hi + GROW_BP;
    if (s->we > s->wb) { /* one window: fill any gap too, it stays within the shard */
        nb = nb < s->wb ? nb : s->wb;
        ne = ne > s->we ? ne : s->we;
    }
    nb -= nb % pg;
    ne = ne % pg ? ne + pg - ne % pg : ne;
    hts_pos_t map_end = (hts_pos_t)s->map_size;
    ne = ne > map_end ? map_end : ne;
    if (mprotect(s->map + nb, (size_t)(ne - nb), PROT_READ | PROT_WRITE) != 0) {
        ss_error("%s: out of memory mapping %s:%lld-%lld; lower -@ or give the run more "
                 "memory",
                 ref->path, s->name, (long long)nb + 1, (long long)ne);
        return -1;
    }
    hts_pos_t fe = ne < s->len ? ne : s->len;
    /* read only what the window lacks: before it and after it, or all when empty */
    if (s->we > s->wb) {
        if (fetch(ref, s, nb, s->wb) < 0 || fetch(ref, s, s->we, fe) < 0)
            return -1;
    } else if (fetch(ref, s, nb, fe) < 0) {
        return -1;
    }
    s->wb = nb;
    s->we = ne;
    return 0;
}

void ss_ref_release(ss_ref_t *ref)
{
    for (int i = 0; ref && i < 2; i++) {
        ref_slot_t *s = &ref->slot[i];
        if (!s->map || s->we <= s->wb)
            continue;
        /* the pages go back to the system; touching them again needs a new cover */
        madvise(s->map + s->wb, (size_t)(s->we - s->wb), MADV_DONTNEED);
        mprotect(s->map + s->wb, (size_t)(s->we - s->wb), PROT_NONE);
        s->wb = s->we = 0;
    }
}

void ss_ref_destroy(ss_ref_t *ref)
{
    if (!ref)
        return;
    slot_clear(&ref->slot[0]);
    slot_clear(&ref->slot[1]);
    if (ref->fai)
        fai_destroy(ref->fai);
    free(ref->path);
    free(ref);
}

static int check_contigs(const char *fasta, const sam_hdr_t *hc, int lengths_only,
                         const unsigned char *only, ss_ref_mismatch_t *m)
{
    sam_hdr_t *h = (sam_hdr_t *)hc; /* the lookups take non-const; they only read */
    *m = (ss_ref_mismatch_t){.tid = -1, .fa_len = -1};
    errno = 0;
    faidx_t *fai = fai_load3(fasta, NULL, NULL, 0); /* never writes a .fai */
    if (!fai && errno == ENOMEM) {
        ss_error("%s: out of memory loading the reference index; give the run more memory", fasta);
        return -2;
    }
    if (!fai)
        return -1;
    for (int t = 0; t < sam_hdr_nref(h); t++) {
        if (only && !only[t])
            continue;
        const char *name = sam_hdr_tid2name(h, t);
        hts_pos_t len = faidx_has_seq(fai, name) ? faidx_seq_len(fai, name) : -1;
        if (len == sam_hdr_tid2len(h, t) || (lengths_only && len < 0))
            continue;
        if (m->n++ == 0) {
            m->tid = t;
            m->fa_len = len;
        }
    }
    fai_destroy(fai);
    return m->n;
}

int ss_ref_check_contigs(const char *fasta, const sam_hdr_t *h, int lengths_only,
                         ss_ref_mismatch_t *m)
{
    return check_contigs(fasta, h, lengths_only, NULL, m);
}

int ss_ref_check_only(const char *fasta, const sam_hdr_t *h, const unsigned char *only,
                      ss_ref_mismatch_t *m)
{
    return check_contigs(fasta, h, 0, only, m);
}

void ss_ref_describe_mismatch(const char *fasta, const sam_hdr_t *hc, const char *input,
                              const ss_ref_mismatch_t *m, char *buf, size_t size)
{
    sam_hdr_t *h = (sam_hdr_t *)hc;
    const char *name = sam_hdr_tid2name(h, m->tid);
    long long len = (long long)sam_hdr_tid2len(h, m->tid);
    int off = m->fa_len < 0 ? snprintf(buf, size, "%s has no contig %s (%lld bp in %s)", fasta,
                                       name, len, input)
                            : snprintf(buf, size, "contig %s is %lld bp in %s but %lld bp in %s",
                                       name, (long long)m->fa_len, fasta, len, input);
    if (m->n > 1 && off > 0 && (size_t)off < size)
        snprintf(buf + off, size - (size_t)off, " (and %d more contigs differ)", m->n - 1);
}

/*
 * mp_ref.c -- a worker's reference window: the shard's contig bound for a
 * pass (mp_bind_ref), and the stretches of it loaded as the reads, BAQ and
 * the indel code reach them (mp_ref_need), through io/ref.c.
 */
#include <errno.h>

#include "base/ss_exact_fp.h"
#include "mp_ref.h"
#include "mp_worker.h"

int mp_bind_ref(mp_worker_t *w, int tid)
{
    ss_ref_release(w->refs); /* memory follows the shard, not the contig */
    w->rs = (mp_ref_t){.src = w->refs, .tid = tid};
    w->ref = NULL;
    w->ref_len = 0;
    hts_pos_t len;
    const char *seq = ss_ref_get(w->refs, tid, sam_hdr_tid2name(w->hdr, tid), &len);
    if (len < 0)
        return -1;
    /* NULL: not in the FASTA, so no reference there, as in bcftools */
    w->rs.seq = w->ref = seq;
    w->rs.len = w->ref_len = seq ? len : 0;
    return 0;
}

int mp_ref_need(mp_ref_t *r, hts_pos_t lo, hts_pos_t hi)
{
    lo = lo < 0 ? 0 : lo;
    if (hi > r->len) { /* up to the contig's end: the NUL after it is readable too */
        hi = r->len + 1;
        lo = lo < r->len ? lo : r->len > 0 ? r->len - 1 : 0;
    }
    if (r->hi > r->lo && lo >= r->lo && hi <= r->hi)
        return 0;
    if (ss_ref_cover(r->src, r->tid, lo, hi < r->len ? hi : r->len) < 0) {
        errno = ENOMEM; /* the shard fails: see mp_ref.h */
        return -1;
    }
    /* io/ref.c keeps one window per contig, gaps filled: the hull of what was asked */
    if (r->hi > r->lo) {
        r->lo = lo < r->lo ? lo : r->lo;
        r->hi = hi > r->hi ? hi : r->hi;
    } else {
        r->lo = lo, r->hi = hi;
    }
    return 0;
}

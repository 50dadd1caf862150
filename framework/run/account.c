/*
 * account.c -- a whole-file run accounts for every record, whatever its
 * index says (DESIGN.md, contract 9).
 *
 * Shards read through the index, so a damaged bin, chunk or linear-index
 * entry loses records with exit 0; the checks at job open (index_check.c)
 * compare only the index's ends with the file. Here every reader counts the
 * records its shards own as it returns them (io/reader_tally.c), the workers
 * add their readers' tallies at exit, the ranks sum them, and each contig's
 * total must equal what the BAM indexes count for it (their pseudo-bins,
 * samtools idxstats' numbers), and the records that reach past a shard's
 * end must be the ones the next shard was given. A mismatch fails the run before the output
 * is renamed, with one line that says to re-index. It costs a compare per
 * record returned and one reduction of (contigs + 1) x 2 counters (and per
 * input when small) at the end.
 *
 * Only runs that read whole contigs are checked: no regions, no -l BED, not
 * standard input; a contig is left out when some shard of it did not query
 * every BAM input (view's block copy) or was kept by --resume, and the
 * unplaced reads when the plan has no shard for them.
 *
 * Threads: workers call ss_acct_add once each, under the lock; the main
 * thread does the rest. ss_acct_check is collective.
 */
#include <pthread.h>
#include <stdlib.h>

#include "../../io/ss_diag.h"
#include "../comm/comm.h"
#include "../plan/plan.h"
#include "engine.h"

struct ss_acct_s {
    const ss_job_t *job;
    int n_contigs;
    size_t len;       /* ss_io_tally_len counters, then one: a reader's tally was lost */
    uint64_t *got;    /* [len + 1], under lock while workers run */
    int has_unplaced; /* the plan reads the unplaced reads */
    pthread_mutex_t lock;
};

/* Whether this run reads whole contigs of indexed BAM inputs. */
static int reads_whole_file(const ss_job_t *job)
{
    const ss_common_opts_t *o = ss_job_opts(job);
    const ss_io_inputs_t *in = ss_job_inputs(job);
    return o->n_regions == 0 && !o->no_regions && !o->bed && !in->stream && in->is_cram &&
           ss_job_tally_want(job);
}

int ss_acct_init(ss_acct_t **ap, const ss_job_t *job, const ss_shard_t *shards, int n)
{
    *ap = NULL;
    if (!reads_whole_file(job))
        return 0;
    ss_acct_t *a = calloc(1, sizeof(*a));
    int nc = sam_hdr_nref(ss_job_header(job));
    size_t len = ss_io_tally_len(nc, ss_job_inputs(job)->n);
    if (!a || !(a->got = calloc(len + 1, sizeof(*a->got)))) {
        free(a);
        ss_error("out of memory for the record tally of %d contigs", nc);
        return -1;
    }
    a->job = job;
    a->n_contigs = nc;
    a->len = len;
    for (int i = 0; i < n; i++)
        a->has_unplaced |= shards[i].tid == SS_TID_UNPLACED;
    pthread_mutex_init(&a->lock, NULL);
    *ap = a;
    return 0;
}

void ss_acct_shard(const ss_acct_t *a, ss_reader_t *rd, const ss_shard_t *shards, int idx)
{
    if (!a)
        return;
    const ss_shard_t *sh = &shards[idx], *prev = idx > 0 ? &shards[idx - 1] : NULL;
    if (sh->tid == SS_TID_UNPLACED) {
        ss_reader_own(rd, SS_IO_UNPLACED, 0, 0, 0);
        return;
    }
    /* the contig's last shard reads past its end (engine.c add_halo), and owns what is there */
    hts_pos_t len = sam_hdr_tid2len(ss_job_header(a->job), sh->tid);
    int after = prev && prev->tid == sh->tid && prev->end == sh->beg;
    ss_reader_own(rd, sh->tid, sh->beg, sh->end >= len ? HTS_POS_MAX : sh->end,
                  after ? prev->beg : sh->beg);
}

void ss_acct_add(ss_acct_t *a, const ss_reader_t *rd)
{
    if (!a || !rd)
        return;
    pthread_mutex_lock(&a->lock);
    if (ss_reader_tally_add(rd, a->got) < 0)
        a->got[a->len] = 1;
    pthread_mutex_unlock(&a->lock);
}

/* Slots this rank cannot vouch for: shards kept by --resume, the unplaced reads unplanned. */
static void mark_unread(ss_acct_t *a, const engine_t *e)
{
    size_t slots = (size_t)a->n_contigs + 1;
    if (!a->has_unplaced)
        a->got[slots]++;
    for (int i = 0; e->resume && i < e->n_shards; i++)
        if (ss_resume_kept(e->resume, i))
            a->got[slots + (size_t)(e->shards[i].tid + 1)]++;
}

int ss_acct_check(ss_acct_t *a, const engine_t *e, int rc)
{
    if (!a)
        return rc;
    mark_unread(a, e);
    /* every rank sums, whatever its rc: the others are in the same reduction */
    if (ss_comm_sum_u64(a->got, a->len + 1) < 0) {
        ss_error("cannot add up the records the ranks read (MPI failed)");
        return -1;
    }
    if (rc != 0 || a->got[a->len] != 0)
        return rc; /* failed already, or a tally was lost to memory: nothing to compare */
    char msg[8192];
    if (ss_io_tally_check(ss_job_inputs(a->job), ss_job_header(a->job), a->got,
                          ss_job_tally_want(a->job), msg, sizeof(msg)) == 0)
        return 0;
    if (ss_comm_rank() == 0) /* every rank found it: one says so */
        ss_error("%s", msg);
    return -1;
}

int ss_acct_records(const ss_acct_t *a, uint64_t *n)
{
    if (!a || a->got[a->len])
        return 0;
    const ss_io_inputs_t *in = ss_job_inputs(a->job);
    for (int i = 0; i < in->n; i++)
        if (in->is_cram[i]) /* a CRAI has no counts: CRAM inputs are not tallied */
            return 0;
    size_t slots = (size_t)a->n_contigs + 1;
    uint64_t sum = 0;
    for (size_t k = 0; k < slots; k++) {
        if (a->got[slots + k]) /* a slot not read whole (view's block copy, --resume) */
            return 0;
        sum += a->got[k];
    }
    *n = sum;
    return 1;
}

void ss_acct_destroy(ss_acct_t *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->lock);
    free(a->got);
    free(a);
}

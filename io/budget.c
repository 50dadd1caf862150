/*
 * budget.c -- how many file descriptors readers may hold open across shards.
 *
 * A worker that holds an input open saves an open + header + index load per
 * shard, but with many inputs and many workers the process would run out of
 * descriptors. So the soft RLIMIT_NOFILE (ulimit -n) L is split three ways:
 *
 *   reserve  = the descriptors open when the budget is set (stdin, stdout,
 *              stderr, the signal pipe, the job's first input kept for
 *              planning, MPI's sockets and pipes: counted in /proc/self/fd)
 *            + SS_IO_FDS_LATER (the output file, opened after the budget is
 *              set, and the multi-rank store's spill file);
 *   workers  = SS_IO_FDS_PER_WORKER per worker, never held: the one input a
 *              worker opens per use, its index while it loads, the reference
 *              FASTA htslib opens for a CRAM (when the job shares one
 *              reference among the CRAM handles, that is one FASTA for the
 *              process, counted with the later ones instead), and the
 *              kernel's own (pileup's two reference caches; view's raw-copy
 *              handle or its CRAM writer's reference and scratch file);
 *   budget   = L - reserve - workers: what readers may hold across shards,
 *              lowered (never raised) by SEQSHARD_MAX_OPEN_FILES; a CRAM
 *              writer's .crai (cram_enc.c) borrows three from it for a moment
 *              at a shard's end, or its output is indexed by reading it back.
 *
 * An input not granted is opened per use (reader.c), so a run needs only
 * reserve + workers descriptors whatever the number of inputs; below that
 * ss_io_budget_init says so before any work. Example: 30 BAMs at ulimit -n
 * 20, -@ 2: reserve 6 + 2 = 8, workers 2 x 5 = 10, budget 2.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "../base/ss_base.h"
#include "ss_budget.h"

/* Open when stdio and the planning input are all we know of (no /proc). */
#define FDS_OPEN_GUESS 6

static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static int budget_max = -1; /* -1: not initialised yet; under budget_lock */
static int budget_used;     /* under budget_lock */

/*
 * Descriptors open now that take one of the numbers below limit (the limit
 * caps the numbers open() may return, so an inherited descriptor 251 costs
 * nothing at ulimit -n 20), or FDS_OPEN_GUESS if /proc cannot say.
 */
static int fds_open_now(long limit)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return FDS_OPEN_GUESS;
    int n = 0, self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        n += e->d_name[0] != '.' && *end == '\0' && fd != self && fd < limit;
    }
    closedir(d);
    return n;
}

/* SEQSHARD_MAX_OPEN_FILES as a number, or -1 when unset (the CLI refused bad values). */
static long env_cap(void)
{
    const char *s = getenv("SEQSHARD_MAX_OPEN_FILES");
    if (!s || !*s)
        return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end == '\0' && v >= 0 ? v : -1;
}

/* The soft limit, or LONG_MAX when there is none to respect. */
static long fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur > (rlim_t)INT_MAX)
        return LONG_MAX;
    return (long)rl.rlim_cur;
}

/*
 * A shared CRAM reference (the job's) is one FASTA handle for the process,
 * which htslib may close and reopen under its lock, instead of one per
 * worker's CRAM handle: it moves from the workers' share to the later ones.
 */
static int per_worker(int shared_ref)
{
    return SS_IO_FDS_PER_WORKER - (shared_ref != 0);
}

int ss_io_budget_need(int n_workers, int shared_ref)
{
    return fds_open_now(fd_limit()) + SS_IO_FDS_LATER + (shared_ref != 0) +
           n_workers * per_worker(shared_ref);
}

int ss_io_budget_init(int n_inputs, int n_workers, int shared_ref)
{
    long limit = fd_limit(), need = ss_io_budget_need(n_workers, shared_ref), cap = env_cap();
    if (limit < need) {
        ss_error("%d input%s need%s at least %d open files per worker (-@ %d: %ld in all) but "
                 "the limit is %ld (ulimit -n); raise it with ulimit -n %ld or use fewer "
                 "threads",
                 n_inputs, n_inputs == 1 ? "" : "s", n_inputs == 1 ? "s" : "",
                 per_worker(shared_ref), n_workers, need, limit, need);
        return -1;
    }
    long max = limit == LONG_MAX ? 1 << 20 : limit - need;
    if (cap >= 0 && cap < max)
        max = cap;
    pthread_mutex_lock(&budget_lock);
    budget_max = (int)(max > INT_MAX ? INT_MAX : max);
    budget_used = 0;
    int r = budget_max;
    pthread_mutex_unlock(&budget_lock);
    return r;
}

int ss_io_budget_take(int n)
{
    pthread_mutex_lock(&budget_lock);
    int granted = budget_max >= 0 && n >= 0 && budget_used <= budget_max - n;
    if (granted)
        budget_used += n;
    pthread_mutex_unlock(&budget_lock);
    return granted;
}

void ss_io_budget_give(int n)
{
    pthread_mutex_lock(&budget_lock);
    budget_used -= n;
    if (budget_used < 0)
        budget_used = 0;
    pthread_mutex_unlock(&budget_lock);
}

int ss_io_budget_used(void)
{
    pthread_mutex_lock(&budget_lock);
    int used = budget_used;
    pthread_mutex_unlock(&budget_lock);
    return used;
}

int ss_io_fds_exhausted(int err)
{
    return err == EMFILE || err == ENFILE;
}

void ss_io_error_fds(const char *path, int err)
{
    long limit = fd_limit();
    if (err == ENFILE || limit == LONG_MAX)
        ss_error("%s: too many open files (the system's file table is full); close other "
                 "programs' files or use fewer threads (-@)",
                 path);
    else
        ss_error("%s: too many open files (the limit is %ld, ulimit -n); raise it with "
                 "ulimit -n %ld or use fewer threads (-@)",
                 path, limit, 2 * limit);
}

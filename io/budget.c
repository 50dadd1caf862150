/*
 * budget.c -- how many file descriptors readers may hold open across shards.
 *
 * A worker that holds its inputs open saves an open + header + index load
 * per shard, but with many inputs and many workers the process would run out
 * of descriptors. Readers ask once; the ones refused reopen per shard.
 * The budget is half the soft RLIMIT_NOFILE, leaving the rest to htslib,
 * the output and MPI, unless SEQSHARD_MAX_OPEN_FILES says otherwise.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "ss_io.h"

static pthread_mutex_t budget_lock = PTHREAD_MUTEX_INITIALIZER;
static int budget_max = -1; /* -1: not initialised yet; under budget_lock */
static int budget_used;     /* under budget_lock */

static int budget_from_env(void)
{
    const char *s = getenv("SEQSHARD_MAX_OPEN_FILES");
    if (s && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (*end == '\0' && v >= 0 && v <= INT_MAX)
            return (int)v;
    }
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 1 << 20; /* no limit to respect */
    rlim_t half = rl.rlim_cur / 2;
    return half > (rlim_t)INT_MAX ? INT_MAX : (int)half;
}

int ss_io_budget_init(void)
{
    pthread_mutex_lock(&budget_lock);
    budget_max = budget_from_env();
    budget_used = 0;
    int max = budget_max;
    pthread_mutex_unlock(&budget_lock);
    return max;
}

int ss_io_budget_take(int n)
{
    pthread_mutex_lock(&budget_lock);
    if (budget_max < 0)
        budget_max = budget_from_env();
    int granted = n >= 0 && budget_used <= budget_max - n;
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

/*
 * runlog.c -- the lines a batch log gets: when stderr is not a terminal,
 * rank 0 says when the run started and what it runs, and always ends with
 * one line saying how it ended, so a job log answers "what ran, did it
 * finish, how big was it" without a --report. Progress lines in between
 * come from progress.c, with the same timestamp (ss_log_stamp).
 *
 * On a terminal the live progress line already says all this; under
 * --quiet only the failure's own message (error.c) is printed.
 *
 * State: one run per process, main thread only (cli.c opens it, the engine
 * adds what it planned, whoever finishes first closes it).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../base/ss_base.h"
#include "run.h"

static struct {
    int on;         /* a batch log on rank 0, not quiet: the started line too */
    int final;      /* rank 0, not quiet: the final line, on a terminal as in a log */
    int ended;      /* the final line was printed */
    double t0;      /* monotonic start */
    double t0_wall; /* the same moment, epoch seconds */
    char kernel[32];
} lg;

double ss_wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void ss_log_stamp_at(char *buf, size_t size, double t)
{
    struct tm tm;
    time_t sec = (time_t)t;
    if (!gmtime_r(&sec, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, size, "?");
}

void ss_log_stamp(char *buf, size_t size)
{
    ss_log_stamp_at(buf, size, ss_wall_now());
}

double ss_log_opened_wall(void)
{
    return lg.t0_wall;
}

double ss_log_opened(void)
{
    return lg.t0;
}

void ss_log_open(const char *kernel, int quiet, int is_rank0)
{
    memset(&lg, 0, sizeof(lg));
    lg.on = !quiet && is_rank0 && !isatty(STDERR_FILENO);
    lg.final = !quiet && is_rank0;
    lg.t0 = ss_now();
    lg.t0_wall = ss_wall_now();
    snprintf(lg.kernel, sizeof(lg.kernel), "%s", kernel ? kernel : "?");
}

void ss_log_start(int n_inputs, int threads, int ranks, int shards)
{
    if (!lg.on)
        return;
    char ts[32];
    ss_log_stamp(ts, sizeof(ts));
    fprintf(stderr, "seqshard: %s %s started: %d input%s, %d thread%s x %d rank%s, %d shard%s\n",
            ts, lg.kernel, n_inputs, n_inputs == 1 ? "" : "s", threads, threads == 1 ? "" : "s",
            ranks, ranks == 1 ? "" : "s", shards, shards == 1 ? "" : "s");
    fflush(stderr);
}

/* 950, 12.3 k, 1.14 M, 2.05 G: decimal, as the final line shows counts and sizes. */
static void fmt_si(char *buf, size_t size, double v, const char *unit)
{
    static const char *const pre[] = {"", "k", "M", "G", "T"};
    int i = 0;
    while (v >= 1000 && i < 4)
        v /= 1000, i++;
    if (i == 0)
        snprintf(buf, size, "%.0f%s%s", v, *unit ? " " : "", unit);
    else
        snprintf(buf, size, "%.*f %s%s", v < 10 ? 2 : v < 100 ? 1 : 0, v, pre[i], unit);
}

void ss_log_done(int shards, uint64_t reads, uint64_t bytes, int64_t peak_rss, int reused)
{
    if (!lg.final || lg.ended)
        return;
    lg.ended = 1;
    char ts[32], r[32], b[32], m[32];
    ss_log_stamp(ts, sizeof(ts));
    fmt_si(r, sizeof(r), (double)reads, "");
    fmt_si(b, sizeof(b), (double)bytes, "B");
    fmt_si(m, sizeof(m), peak_rss > 0 ? (double)peak_rss : 0, "B");
    char res[80] = "";
    if (reused >= 0)
        snprintf(res, sizeof(res), "; resumed: %d of %d shard%s reused", reused, shards,
                 shards == 1 ? "" : "s");
    fprintf(stderr,
            "seqshard: %s done in %.1f s: %d shard%s, %s reads, %s written, "
            "peak RSS %s%s\n",
            ts, ss_now() - lg.t0, shards, shards == 1 ? "" : "s", r, b, m, res);
    fflush(stderr);
}

void ss_log_failed(const char *why)
{
    if (!lg.final || lg.ended)
        return;
    lg.ended = 1;
    char ts[32];
    ss_log_stamp(ts, sizeof(ts));
    /* this process's own error was just printed: the final line points to it rather than
     * print it twice; a reason from another rank is given here */
    if (why && strncmp(why, "seqshard: ", 10) == 0)
        why += 10;
    fprintf(stderr, "seqshard: %s %s failed after %.1f s: %s\n", ts, lg.kernel, ss_now() - lg.t0,
            why && *why         ? why
            : ss_error_raised() ? "the reason is the line above; no output written"
                                : "another rank failed (its message is above); no output written");
    fflush(stderr);
}

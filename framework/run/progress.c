/*
 * progress.c -- the progress line on stderr, printed by the main thread of
 * the printing rank only (so MPI runs print one line, not one per rank).
 *
 * On a terminal: one line redrawn in place at most 4 times a second. In a log
 * file (batch jobs): a full line every 30 s, or every SEQSHARD_PROGRESS_INTERVAL
 * seconds, with a UTC timestamp, so logs stay short but show a run is alive
 * and when; the start and final lines of such a log come from runlog.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run.h"

#define TTY_INTERVAL 0.25
#define LOG_INTERVAL 30.0

struct ss_progress_s {
    int n_shards;
    uint64_t total_work;
    int tty;
    double interval, t0, last;
    int shards;
    uint64_t work, reads;
    int live; /* a live line is on the terminal and needs a newline at the end */
};

double ss_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

ss_progress_t *ss_progress_start(int n_shards, uint64_t total_work, int quiet, int is_rank0)
{
    if (quiet || !is_rank0)
        return NULL;
    ss_progress_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL; /* progress is a nicety: run without it */
    p->n_shards = n_shards;
    p->total_work = total_work;
    p->tty = isatty(STDERR_FILENO);
    p->interval = p->tty ? TTY_INTERVAL : LOG_INTERVAL;
    const char *env = getenv("SEQSHARD_PROGRESS_INTERVAL");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        if (*end == '\0' && v > 0)
            p->interval = v;
    }
    p->t0 = p->last = ss_now();
    return p;
}

/* Human-readable rate: 950, 12.3k, 1.23M. */
static void fmt_rate(char *buf, size_t size, double v)
{
    if (v >= 1e6)
        snprintf(buf, size, "%.2fM", v / 1e6);
    else if (v >= 1e3)
        snprintf(buf, size, "%.1fk", v / 1e3);
    else
        snprintf(buf, size, "%.0f", v);
}

static void fmt_time(char *buf, size_t size, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

static void print_line(ss_progress_t *p, double now)
{
    double el = now - p->t0;
    double frac = p->total_work ? (double)p->work / (double)p->total_work
                                : (p->n_shards ? (double)p->shards / p->n_shards : 1);
    if (frac > 1)
        frac = 1;
    if (p->shards < p->n_shards && frac > 0.999) /* shards of no estimated work still run */
        frac = 0.999;
    char rate[32], eta[32];
    fmt_rate(rate, sizeof(rate), el > 0 ? (double)p->reads / el : 0);
    if (frac > 0.001 && el > 0)
        fmt_time(eta, sizeof(eta), el * (1 - frac) / frac);
    else
        snprintf(eta, sizeof(eta), "?");
    /* a log line carries its time, so a job log shows when the run slowed or stalled */
    char ts[40] = "";
    if (!p->tty) {
        ss_log_stamp(ts, sizeof(ts) - 1);
        strcat(ts, " ");
    }
    fprintf(stderr, "%sseqshard: %s%d/%d shards, %.1f%% of est. work, %s reads/s, ETA %s%s",
            p->tty ? "\r" : "", ts, p->shards, p->n_shards, 100 * frac, rate, eta,
            p->tty ? "\033[K" : "\n");
    fflush(stderr);
    p->live = p->tty;
    p->last = now;
}

void ss_progress_update(ss_progress_t *p, int shards_done, uint64_t work_done, uint64_t reads)
{
    if (!p)
        return;
    p->shards = shards_done;
    p->work = work_done;
    p->reads = reads;
    double now = ss_now();
    if (now - p->last >= p->interval)
        print_line(p, now);
}

int ss_progress_due(const ss_progress_t *p)
{
    return p && ss_now() - p->last >= p->interval;
}

void ss_progress_finish(ss_progress_t *p, int ok)
{
    if (!p)
        return;
    if (p->tty) {
        if (ok)
            print_line(p, ss_now());
        if (p->live)
            fputc('\n', stderr);
    }
    free(p);
}

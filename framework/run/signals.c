/*
 * signals.c -- what a terminating signal does: remove this process's
 * temporary files, say in one line which signal ended the run, and exit
 * 128 + the signal number, as shells and Slurm report a signal death. The
 * resumable -o temporary is never registered here: it stays, with its
 * manifest, for --resume, and the line says so (ss_signals_resumable).
 *
 * The handler may run on any thread at any moment, so it only reads state
 * that was complete before it was published (a slot's path is written
 * before its armed flag is set, and lock-free atomics are safe in a handler)
 * and only makes async-signal-safe calls: unlink, write, _exit.
 *
 * SIGXFSZ under a file-size limit names it (ulimit -f) and -o: a rerun needs the limit
 * raised. Without a limit, kill(1) sent it, and it is a signal like the others.
 *
 * SIGPIPE is quiet (status 141): the reader of our pipe went away, which
 * `seqshard ... | head` does on purpose. Signals ignored when we started
 * (nohup's SIGHUP, a background job's SIGINT) stay ignored. The fault
 * signals (SIGSEGV, SIGBUS, SIGABRT, ...) are left alone: they keep their
 * core dumps and MPI's backtraces, and a temporary name never looks final.
 */
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "run.h"

/* Files one process may have to remove: the output and its index names (4), a
 * guarded rank-0 output and its (4), the report and its (4). */
#define N_SLOTS 64 /* 4 per output file (itself, .tbi, .csi, .crai), side streams too */

static char slot_path[N_SLOTS][PATH_MAX];
static atomic_int slot_armed[N_SLOTS];
static atomic_int quiet_, direct_, resumable_;
static char output_[PATH_MAX]; /* -o, for the message; set before output_set_ */
static atomic_int output_set_;
static rlim_t fsize_limit_ = RLIM_INFINITY; /* RLIMIT_FSIZE at install: SIGXFSZ names it */

static const struct {
    int sig;
    const char *name;
} caught[] = {
    {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},     {SIGTERM, "SIGTERM"},
    {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"}, {SIGALRM, "SIGALRM"},     {SIGPIPE, "SIGPIPE"},
    {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}, {SIGVTALRM, "SIGVTALRM"},
};
#define N_CAUGHT (sizeof(caught) / sizeof(caught[0]))

/* Append s at *len in buf (of cap bytes). Async-signal-safe. */
static void append(char *buf, size_t cap, size_t *len, const char *s)
{
    while (*s && *len < cap)
        buf[(*len)++] = *s++;
}

/* Append v in decimal. Async-signal-safe. */
static void append_u(char *buf, size_t cap, size_t *len, unsigned long long v)
{
    char d[24];
    int i = 24;
    d[--i] = '\0';
    do
        d[--i] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    append(buf, cap, len, d + i);
}

/* SIGXFSZ: the cause is the file-size limit, which the user must raise before a rerun. */
static void say_file_size(char *line, size_t cap, size_t *len)
{
    append(line, cap, len, "seqshard: ");
    if (atomic_load(&output_set_)) {
        append(line, cap, len, output_);
        append(line, cap, len, ": writing it or its temporary files");
    } else {
        append(line, cap, len, "writing the output (standard output or a file of the run)");
    }
    append(line, cap, len, " passed the file-size limit (ulimit -f: ");
    append_u(line, cap, len, (unsigned long long)fsize_limit_);
    append(line, cap, len, " bytes; SIGXFSZ)");
    if (atomic_load(&direct_))
        append(line, cap, len,
               "; the output is incomplete; raise the limit (ulimit -f "
               "unlimited) and run again\n");
    else if (atomic_load(&resumable_))
        append(line, cap, len,
               "; no output written; raise the limit (ulimit -f unlimited) "
               "and rerun the same command with --resume to continue\n");
    else
        append(line, cap, len,
               "; no output written; raise the limit (ulimit -f unlimited) "
               "and run again\n");
}

static void say_interrupted(int sig)
{
    char line[PATH_MAX + 400];
    size_t len = 0;
    const char *name = "a signal";
    for (size_t i = 0; i < N_CAUGHT; i++)
        if (caught[i].sig == sig)
            name = caught[i].name;
    if (sig == SIGXFSZ && fsize_limit_ != RLIM_INFINITY) { /* else kill(1) sent it */
        say_file_size(line, sizeof(line) - 1, &len);
        ssize_t w = write(STDERR_FILENO, line, len);
        (void)w; /* nowhere left to report a failure to */
        return;
    }
    append(line, sizeof(line), &len, "seqshard: interrupted by ");
    append(line, sizeof(line), &len, name);
    if (atomic_load(&direct_))
        append(line, sizeof(line), &len, "; the output is incomplete\n");
    else if (atomic_load(&resumable_))
        append(line, sizeof(line), &len,
               "; no output written; rerun the same command with --resume to continue\n");
    else
        append(line, sizeof(line), &len, "; no output written\n");
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w; /* nowhere left to report a failure to */
}

static void remove_armed(void);

static void on_signal(int sig)
{
    remove_armed();
    if (sig != SIGPIPE && !atomic_load(&quiet_))
        say_interrupted(sig);
    _exit(128 + sig);
}

static void remove_armed(void)
{
    for (int i = 0; i < N_SLOTS; i++)
        if (atomic_load(&slot_armed[i]))
            unlink(slot_path[i]);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SS_CRASH_CLEANUP 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SS_CRASH_CLEANUP 0
#endif
#endif
#ifndef SS_CRASH_CLEANUP
#define SS_CRASH_CLEANUP 1
#endif

/* SA_RESETHAND put the default action back: raising again dies of the signal. */
static void on_crash(int sig)
{
    remove_armed();
    raise(sig);
}

static void install_crash_handlers(void)
{
    static const int crash[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    if (!SS_CRASH_CLEANUP)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_crash;
    sa.sa_flags = SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(crash) / sizeof(crash[0]); i++)
        sigaction(crash[i], &sa, NULL);
}

void ss_signals_install(int quiet)
{
    atomic_store(&quiet_, quiet);
    struct rlimit fs;
    if (getrlimit(RLIMIT_FSIZE, &fs) == 0)
        fsize_limit_ = fs.rlim_cur;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    /* one handler at a time per thread: a second signal waits for the _exit */
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_CAUGHT; i++)
        sigaddset(&sa.sa_mask, caught[i].sig);
    for (size_t i = 0; i < N_CAUGHT; i++)
        if (sigaction(caught[i].sig, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(caught[i].sig, &sa, NULL);
    install_crash_handlers();
}

int ss_signals_remove_on_exit(const char *path)
{
    if (strlen(path) >= PATH_MAX)
        return -1;
    for (int i = 0; i < N_SLOTS; i++) {
        if (atomic_load(&slot_armed[i]))
            continue;
        memcpy(slot_path[i], path, strlen(path) + 1);
        atomic_store(&slot_armed[i], 1); /* after the path: the handler never sees half */
        return i;
    }
    return -1;
}

void ss_signals_forget(int slot)
{
    if (slot >= 0 && slot < N_SLOTS)
        atomic_store(&slot_armed[slot], 0);
}

void ss_signals_run_failed(void)
{
    atomic_store(&quiet_, 1);
}

void ss_signals_output_direct(int on)
{
    atomic_store(&direct_, on);
}

void ss_signals_resumable(int on)
{
    atomic_store(&resumable_, on);
}

void ss_signals_output_name(const char *path)
{
    if (!path || strlen(path) >= sizeof(output_) || atomic_load(&output_set_))
        return;
    memcpy(output_, path, strlen(path) + 1);
    atomic_store(&output_set_, 1); /* after the path: the handler never sees half */
}

void ss_signals_block(sigset_t *saved)
{
    sigset_t block;
    sigemptyset(&block);
    for (size_t i = 0; i < N_CAUGHT; i++)
        sigaddset(&block, caught[i].sig);
    pthread_sigmask(SIG_BLOCK, &block, saved);
}

void ss_signals_restore(const sigset_t *saved)
{
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

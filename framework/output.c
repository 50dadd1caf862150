/*
 * output.c -- the output file: written under a temporary name in the same
 * directory and renamed into place only when the whole run succeeded, so a
 * failed or interrupted run never leaves a FILE that looks complete (and an
 * existing FILE stays untouched). Without -o, or when FILE is not a regular
 * file (/dev/stdout, a FIFO), bytes go straight there: there is nothing to
 * rename, and renaming over a device would replace it.
 *
 * SIGINT/SIGTERM while a temporary file exists: the handler unlinks it and
 * the index that may be being built beside it (the paths were stored before
 * the handler was armed; unlink and _exit are async-signal-safe) and exits
 * with status 1. A crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) unlinks
 * them too, then dies of the same signal, so the crash is still seen as one
 * (not under the sanitizers, whose own handlers report it). In a multi-rank run the other ranks guard rank 0's
 * temporary file the same way (ss_output_guard): when one rank dies, mpirun
 * sends SIGTERM to the rest, and the dead one may be rank 0.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ss_internal.h"

const unsigned char ss_bgzf_eof[28] = {
    0x1f, 0x8b, 0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x06, 0x00, 0x42, 0x43,
    0x02, 0x00, 0x1b, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
};

struct ss_output_s {
    int fd;
    char *path;     /* final name, NULL for stdout */
    char *tmp;      /* temporary name, NULL when writing in place */
    uint64_t bytes;
    const char *index_ext; /* ".tbi"/".csi" once an index of tmp exists */
};

/* Signal state: one temporary file per process at a time, and its possible indexes. */
#define SIG_N_PATHS 3
static char sig_paths[SIG_N_PATHS][PATH_MAX + 8]; /* tmp, tmp.tbi, tmp.csi */
static volatile sig_atomic_t sig_armed;
static int sig_installed;
static struct sigaction old_int, old_term;

static void remove_tmp_paths(void)
{
    if (sig_armed)
        for (int i = 0; i < SIG_N_PATHS; i++)
            unlink(sig_paths[i]);
}

static void on_signal(int sig)
{
    (void)sig;
    remove_tmp_paths();
    _exit(SS_EXIT_FAIL);
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

static const int crash_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
#define N_CRASH_SIGS ((int)(sizeof(crash_sigs) / sizeof(crash_sigs[0])))
static struct sigaction old_crash[N_CRASH_SIGS];

/* SA_RESETHAND put the default action back: raising again dies of the signal. */
static void on_crash(int sig)
{
    remove_tmp_paths();
    raise(sig);
}

static void crash_handlers(int on)
{
    if (!SS_CRASH_CLEANUP)
        return;
    for (int i = 0; i < N_CRASH_SIGS; i++) {
        if (!on) {
            sigaction(crash_sigs[i], &old_crash[i], NULL);
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_crash;
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(crash_sigs[i], &sa, &old_crash[i]);
    }
}

/* Store the paths the handler removes. 0, or -1 when tmp is too long. Not while armed. */
static int set_signal_paths(const char *tmp)
{
    static const char *ext[SIG_N_PATHS] = { "", ".tbi", ".csi" };
    if (strlen(tmp) >= PATH_MAX)
        return -1;
    for (int i = 0; i < SIG_N_PATHS; i++)
        snprintf(sig_paths[i], sizeof(sig_paths[i]), "%s%s", tmp, ext[i]);
    return 0;
}

static void arm_signals(void)
{
    if (!sig_installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        crash_handlers(1);
        sig_installed = 1;
    }
    sig_armed = 1;
}

static void disarm_signals(void)
{
    sig_armed = 0;
    if (!sig_installed)
        return;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    crash_handlers(0);
    sig_installed = 0;
}

static int open_tmp(ss_output_t *o, const char *path)
{
    char tmp[PATH_MAX];
    int len = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    if (len < 0 || (size_t)len >= sizeof(tmp)) {
        ss_error("%s: output path too long", path);
        return -1;
    }
    if ((o->fd = mkstemp(tmp)) < 0) {
        ss_error("%s: cannot create a temporary file next to it: %s; check the -o directory "
                 "exists and is writable", path, strerror(errno));
        return -1;
    }
    if (!(o->tmp = strdup(tmp))) {
        unlink(tmp);
        ss_error("out of memory opening the output");
        return -1;
    }
    set_signal_paths(tmp);
    arm_signals();
    /* mkstemp makes 0600; the final file gets what open(..., 0666) would under the umask */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(o->fd, 0666 & ~mask) != 0)
        ss_warn("%s: cannot set permissions: %s", o->tmp, strerror(errno));
    return 0;
}

ss_output_t *ss_output_open(const char *path)
{
    ss_output_t *o = calloc(1, sizeof(*o));
    if (!o) {
        ss_error("out of memory opening the output");
        return NULL;
    }
    o->fd = -1;
    if (!path || strcmp(path, "-") == 0) {
        o->fd = STDOUT_FILENO;
        return o;
    }
    if (!(o->path = strdup(path))) {
        ss_error("out of memory opening the output");
        free(o);
        return NULL;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            ss_error("%s: is a directory; give -o a file name", path);
            goto fail;
        }
        if ((o->fd = open(path, O_WRONLY)) < 0) {
            ss_error("%s: cannot open for writing: %s", path, strerror(errno));
            goto fail;
        }
        return o;
    }
    if (open_tmp(o, path) < 0)
        goto fail;
    return o;
fail:
    free(o->path);
    free(o);
    return NULL;
}

int ss_output_write(ss_output_t *o, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(o->fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ss_error("%s: write failed: %s; check free space on its file system",
                     o->path ? o->path : "standard output",
                     w < 0 ? strerror(errno) : "no progress");
            return -1;
        }
        p += w;
        len -= (size_t)w;
        o->bytes += (uint64_t)w;
    }
    return 0;
}

uint64_t ss_output_bytes(const ss_output_t *o)
{
    return o ? o->bytes : 0;
}

const char *ss_output_tmp_path(const ss_output_t *o)
{
    return o ? o->tmp : NULL;
}

int ss_output_index_tabix(ss_output_t *o, int csi)
{
    const char *file = o->tmp ? o->tmp : o->path;
    if (!file) {
        ss_error("an index needs -o FILE, not standard output");
        return -1;
    }
    if (fsync(o->fd) != 0 && errno != EINVAL) {
        ss_error("%s: cannot flush the output before indexing: %s", o->path, strerror(errno));
        return -1;
    }
    if (ss_tabix_index(file, o->path, csi) < 0)
        return -1;
    o->index_ext = csi ? ".csi" : ".tbi";
    return 0;
}

/* Rename or remove tmp+ext beside the output. */
static int move_index(ss_output_t *o, int keep)
{
    if (!o->index_ext || !o->tmp)
        return 0;
    char from[PATH_MAX + 8], to[PATH_MAX + 8];
    snprintf(from, sizeof(from), "%s%s", o->tmp, o->index_ext);
    snprintf(to, sizeof(to), "%s%s", o->path, o->index_ext);
    if (!keep)
        return unlink(from);
    if (rename(from, to) != 0) {
        ss_error("%s: cannot rename the index into place: %s", to, strerror(errno));
        unlink(from);
        return -1;
    }
    return 0;
}

static void output_free(ss_output_t *o)
{
    free(o->path);
    free(o->tmp);
    free(o);
}

int ss_output_commit(ss_output_t *o)
{
    int rc = 0;
    if (o->fd == STDOUT_FILENO) {
        output_free(o);
        return 0;
    }
    if (close(o->fd) != 0) {
        ss_error("%s: error finishing the output: %s; check free space", o->path, strerror(errno));
        o->fd = -1;
        ss_output_abort(o);
        return -1;
    }
    o->fd = -1;
    if (o->tmp) {
        /* no signal between the rename and disarming, or the handler would unlink nothing */
        sigset_t block, saved;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &block, &saved);
        if (rename(o->tmp, o->path) != 0) {
            ss_error("%s: cannot rename %s into place: %s", o->path, o->tmp, strerror(errno));
            unlink(o->tmp);
            move_index(o, 0);
            rc = -1;
        } else if (move_index(o, 1) < 0) {
            rc = -1;
        }
        disarm_signals();
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
    }
    output_free(o);
    return rc;
}

int ss_output_guard(const char *tmp_path)
{
    if (sig_armed || set_signal_paths(tmp_path) < 0)
        return -1;
    arm_signals();
    return 0;
}

void ss_output_unguard(void)
{
    disarm_signals();
}

void ss_output_abort(ss_output_t *o)
{
    if (!o)
        return;
    if (o->fd >= 0 && o->fd != STDOUT_FILENO)
        close(o->fd);
    if (o->tmp) {
        unlink(o->tmp);
        move_index(o, 0);
        disarm_signals();
    }
    output_free(o);
}

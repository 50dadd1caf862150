/*
 * error.c -- the one error of a run, and warnings. Below every other module
 * (io/, alloc/, framework/, kernels/ all report through it), so it knows
 * nothing of MPI: the framework sets the "rank N: " prefix once it knows.
 *
 * The first error wins: workers that fail after another worker stopped the
 * run would only repeat the cause with less context, so their messages are
 * dropped. Every message is one line on stderr, written with a single
 * write(2) so lines from different threads never interleave.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ss_base.h"

#define MSG_MAX 2048

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int err_raised;       /* read without the lock by workers polling */
static char err_first[MSG_MAX];     /* under err_lock */
static int err_deferred;            /* under err_lock: keep, print at ss_error_flush */
static char err_prefix[32];         /* "rank 3: " in a multi-rank run; set before threads */

/* Format "seqshard: [kind]message\n" into buf as one line: control characters become spaces. */
static size_t format_line(char *buf, size_t size, const char *kind, const char *fmt, va_list ap)
{
    int n = snprintf(buf, size, "seqshard: %s", kind);
    if (n < 0)
        n = 0;
    size_t len = (size_t)n < size ? (size_t)n : size - 1;
    int m = vsnprintf(buf + len, size - len, fmt, ap);
    if (m > 0)
        len += (size_t)m < size - len ? (size_t)m : size - len - 1;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)buf[i] < ' ')
            buf[i] = ' ';
    while (len > 0 && buf[len - 1] == ' ')
        len--;
    buf[len++] = '\n';
    buf[len] = '\0';
    return len;
}

static void write_stderr(const char *s, size_t len)
{
    while (len > 0) {
        ssize_t w = write(STDERR_FILENO, s, len);
        if (w <= 0)
            return; /* nowhere left to report to */
        s += w;
        len -= (size_t)w;
    }
}

void ss_error(const char *fmt, ...)
{
    char line[MSG_MAX + 32];
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_line(line, sizeof(line) - 1, err_prefix, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&err_lock);
    int first = !atomic_load(&err_raised);
    if (first) {
        snprintf(err_first, sizeof(err_first), "%.*s", (int)len - 1, line);
        atomic_store(&err_raised, 1);
        if (!err_deferred)
            write_stderr(line, len);
    }
    pthread_mutex_unlock(&err_lock);
}

void ss_error_set_prefix(const char *prefix)
{
    snprintf(err_prefix, sizeof(err_prefix), "%s", prefix ? prefix : "");
}

void ss_error_defer(int on)
{
    pthread_mutex_lock(&err_lock);
    err_deferred = on;
    pthread_mutex_unlock(&err_lock);
}

void ss_error_flush(void)
{
    pthread_mutex_lock(&err_lock);
    if (atomic_load(&err_raised)) {
        write_stderr(err_first, strlen(err_first));
        write_stderr("\n", 1);
    }
    pthread_mutex_unlock(&err_lock);
}

int ss_error_raised(void)
{
    return atomic_load_explicit(&err_raised, memory_order_relaxed);
}

const char *ss_error_message(void)
{
    return atomic_load(&err_raised) ? err_first : "";
}

void ss_error_reset(void)
{
    pthread_mutex_lock(&err_lock);
    err_first[0] = '\0';
    atomic_store(&err_raised, 0);
    pthread_mutex_unlock(&err_lock);
}

void ss_warn(const char *fmt, ...)
{
    char line[MSG_MAX + 32];
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_line(line, sizeof(line) - 1, "warning: ", fmt, ap);
    va_end(ap);
    write_stderr(line, len);
}

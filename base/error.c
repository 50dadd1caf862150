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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ss_base.h"

#define MSG_MAX 2048

static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int err_raised;   /* read without the lock by workers polling */
static char err_first[MSG_MAX]; /* under err_lock */
static int err_deferred;        /* under err_lock: keep, print at ss_error_flush */
static int err_shown;           /* under err_lock: the first error was printed, or need not be */
static char err_prefix[32];     /* "rank 3: " in a multi-rank run; set before threads */

/* Bytes saved by cutting every word of buf[0..len) longer than cap down to cap. */
static size_t saved_at(const char *buf, size_t len, size_t cap)
{
    size_t saved = 0;
    for (size_t i = 0, j; i < len; i = j + 1) {
        for (j = i; j < len && buf[j] != ' ';)
            j++;
        if (j - i > cap)
            saved += j - i - cap;
    }
    return saved;
}

/*
 * Bring buf[0..len) within max bytes by cutting the middle of its long words (paths, as a
 * rule) to "...", every one to the same length and never below KEEP, each keeping its
 * start and more of its end (the file's name). So a long path costs its middle, never
 * the advice after it. Returns the new length (still above max if that was not enough).
 */
#define KEEP 48
static size_t shorten_words(char *buf, size_t len, size_t max)
{
    if (len <= max || saved_at(buf, len, KEEP) == 0)
        return len;
    size_t lo = KEEP, hi = len; /* the largest cap that saves enough, or KEEP */
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (saved_at(buf, len, mid) >= len - max)
            lo = mid;
        else
            hi = mid - 1;
    }
    size_t cap = lo, head = (cap - 3) / 3, tail = cap - 3 - head;
    for (size_t i = 0, j; i < len; i = j + 1) {
        for (j = i; j < len && buf[j] != ' ';)
            j++;
        if (j - i <= cap)
            continue;
        memcpy(buf + i + head, "...", 3);
        memmove(buf + i + head + 3, buf + j - tail, len - (j - tail));
        len -= j - i - cap;
        j = i + cap;
    }
    return len;
}

/*
 * Format "seqshard: [kind]message\n" into buf (size > MSG_MAX) as one line of at most
 * MSG_MAX bytes: control characters become spaces, a message longer than that loses the
 * middles of its longest words (shorten_words), and only then its end.
 */
static size_t format_line(char *buf, size_t size, const char *kind, const char *fmt, va_list ap)
{
    char stack[8192], *line = stack;
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(stack, sizeof(stack), fmt, ap);
    if (n >= (int)sizeof(stack) && (line = malloc((size_t)n + 1)) != NULL)
        n = vsnprintf(line, (size_t)n + 1, fmt, again);
    va_end(again);
    if (!line)
        line = stack; /* out of memory: the start of the message, cut as it was */
    size_t mlen = n < 0 ? 0 : strlen(line);
    for (size_t i = 0; i < mlen; i++)
        if ((unsigned char)line[i] < ' ')
            line[i] = ' ';
    while (mlen > 0 && line[mlen - 1] == ' ')
        mlen--;
    size_t pre = (size_t)snprintf(buf, size, "seqshard: %s", kind);
    if (pre >= size)
        pre = size - 1;
    /* a message that names its rank itself, under the "rank N: " prefix, says it once */
    size_t klen = strlen(kind);
    if (klen && mlen >= klen && strncmp(line, kind, klen) == 0)
        memmove(line, line + klen, (mlen -= klen) + 1);
    size_t room = (MSG_MAX < size - 1 ? MSG_MAX : size - 1) - pre - 1; /* the newline */
    mlen = shorten_words(line, mlen, room);
    if (mlen > room)
        mlen = room;
    memcpy(buf + pre, line, mlen);
    size_t len = pre + mlen;
    buf[len++] = '\n';
    buf[len] = '\0';
    if (line != stack)
        free(line);
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
        if (!err_deferred) {
            write_stderr(line, len);
            err_shown = 1;
        }
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
    if (atomic_load(&err_raised) && !err_shown) {
        write_stderr(err_first, strlen(err_first));
        write_stderr("\n", 1);
        err_shown = 1;
    }
    pthread_mutex_unlock(&err_lock);
}

void ss_error_quiet(void)
{
    pthread_mutex_lock(&err_lock);
    err_shown = 1;
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
    err_shown = 0;
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

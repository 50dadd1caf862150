/*
 * env.c -- the environment variables that change a run (SEQSHARD_*, and
 * mosdepth's MOSDEPTH_PRECISION), checked once before a run.
 *
 * Each is read where it is used (io/budget.c, engine.c, plan.c, out_run.c,
 * progress.c, cli.c, pileup's BAQ, mosdepth's options); those readers take a
 * value they cannot parse as unset, so a typo such as
 * SEQSHARD_MAX_OPEN_FILES=abc would silently mean the default. This check
 * runs first and refuses such a value with the variable and what it accepts:
 * every variable a reader parses must be in the table below. An empty value
 * means unset, as everywhere else.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef enum { ENV_COUNT, ENV_SIZE, ENV_SECONDS, ENV_FLAG, ENV_CHOICE, ENV_PRECISION } env_kind_t;

typedef struct {
    const char *name;
    env_kind_t kind;
    long max;             /* ENV_COUNT: the largest accepted; ENV_SIZE: the smallest */
    const char *accepted; /* for the message */
    const char *choices;  /* ENV_CHOICE: the accepted words, each followed by a space */
} env_var_t;

#define SHARD_MAX ((1L << 30) - 1)
static const env_var_t env_vars[] = {
    {"SEQSHARD_MAX_OPEN_FILES", ENV_COUNT, INT_MAX, "a whole number of files, 0 or more", 0},
    {"SEQSHARD_STORE_MEM", ENV_SIZE, 0,
     "a size in bytes, 0 or more, with an optional k, m "
     "or g (e.g. 512m)",
     0},
    {"SEQSHARD_SHARD_OUTPUT", ENV_SIZE, 1,
     "a size in bytes above 0, with an optional k, m or "
     "g (e.g. 256m)",
     0},
    {"SEQSHARD_SPILL_AT", ENV_SIZE, 64000,
     "a size in bytes of at least 64k, with an optional "
     "k, m or g (e.g. 512m)",
     0},
    {"SEQSHARD_PROGRESS_INTERVAL", ENV_SECONDS, 0, "a number of seconds above 0 (e.g. 0.5)", 0},
    {"SEQSHARD_HTS_LOG", ENV_FLAG, 0, "1 (show htslib's log lines) or 0", 0},
    {"SEQSHARD_STDOUT_DIRECT", ENV_FLAG, 0,
     "1 (rank 0 writes to mpirun's standard output itself) or 0 (through mpirun)", 0},
    {"SEQSHARD_BAQ_PATH", ENV_CHOICE, 0,
     "scalar, sse2, avx2 or htslib (unset: the best this "
     "CPU runs)",
     "scalar sse2 avx2 htslib "},
    {"MOSDEPTH_PRECISION", ENV_PRECISION, 0,
     "a whole number of decimals from -1 to 32, as "
     "mosdepth 0.3.3 reads it (-1: six, as C's %f)",
     0},
    {"SEQSHARD_FAIL_SHARD", ENV_COUNT, SHARD_MAX, "a shard number, 0 or more", 0},
    {"SEQSHARD_FAIL_PLAN", ENV_FLAG, 0, "1 (planning fails, a testing hook) or 0", 0},
    {"SEQSHARD_KILL_SHARD", ENV_COUNT, SHARD_MAX, "a shard number, 0 or more", 0},
    {"SEQSHARD_STALL_SHARD", ENV_COUNT, SHARD_MAX, "a shard number, 0 or more", 0},
    {"SEQSHARD_KILL_RANK", ENV_COUNT, SHARD_MAX, "a rank number, 0 or more", 0},
    {"SEQSHARD_TEST_SHARD_DELAY_MS", ENV_COUNT, 60000, "milliseconds, 0 to 60000", 0},
};

/*
 * Nim's parseInt, as mosdepth reads MOSDEPTH_PRECISION: an optional sign, then digits with
 * '_' allowed after any digit ("1_0" is 10), nothing else (no spaces). 0, or -1.
 */
static int nim_int(const char *s, long *v)
{
    int neg = *s == '-';
    if (*s == '-' || *s == '+')
        s++;
    if (*s < '0' || *s > '9')
        return -1;
    long n = 0;
    for (; *s; s++) {
        if (*s == '_')
            continue;
        if (*s < '0' || *s > '9' || n > 1000000)
            return -1;
        n = 10 * n + (*s - '0');
    }
    *v = neg ? -n : n;
    return 0;
}

static int in_choices(const char *choices, const char *s)
{
    size_t n = strlen(s);
    for (const char *c = choices; *c; c = strchr(c, ' ') + 1)
        if (n && strncmp(c, s, n) == 0 && c[n] == ' ')
            return 1;
    return 0;
}

static int valid(const env_var_t *v, const char *s)
{
    char *end;
    errno = 0;
    switch (v->kind) {
    case ENV_COUNT: {
        long n = strtol(s, &end, 10);
        return errno == 0 && end != s && *end == '\0' && n >= 0 && n <= v->max;
    }
    case ENV_SIZE: {
        hts_pos_t n;
        return ss_parse_size(s, &n) == 0 && n >= v->max;
    }
    case ENV_SECONDS: {
        double d = strtod(s, &end);
        return errno == 0 && end != s && *end == '\0' && d > 0 && isfinite(d);
    }
    case ENV_FLAG:
        return strcmp(s, "0") == 0 || strcmp(s, "1") == 0;
    case ENV_CHOICE:
        return in_choices(v->choices, s);
    case ENV_PRECISION: {
        long n;
        return nim_int(s, &n) == 0 && n >= -1 && n <= 32;
    }
    }
    return 0;
}

int ss_env_precision(const char *name, int dflt)
{
    const char *s = getenv(name);
    long n;
    return s && *s && nim_int(s, &n) == 0 && n >= -1 && n <= 32 ? (int)n : dflt;
}

int ss_env_check(void)
{
    for (size_t i = 0; i < sizeof(env_vars) / sizeof(env_vars[0]); i++) {
        const env_var_t *v = &env_vars[i];
        const char *s = getenv(v->name);
        if (s && *s && !valid(v, s)) {
            ss_error("%s='%s' is not valid: give %s, or unset it", v->name, s, v->accepted);
            return -1;
        }
    }
    return 0;
}

size_t ss_env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    for (size_t i = 0; s && *s && i < sizeof(env_vars) / sizeof(env_vars[0]); i++) {
        hts_pos_t v;
        if (strcmp(env_vars[i].name, name) == 0 && env_vars[i].kind == ENV_SIZE &&
            valid(&env_vars[i], s) && ss_parse_size(s, &v) == 0)
            return (size_t)v;
    }
    return dflt;
}

int ss_env_on(const char *name)
{
    const char *s = getenv(name);
    return s && strcmp(s, "1") == 0;
}

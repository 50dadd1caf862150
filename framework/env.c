/*
 * env.c -- the SEQSHARD_* environment variables, checked once before a run.
 *
 * Each is read where it is used (io/budget.c, engine.c, progress.c, cli.c);
 * those readers take a value they cannot parse as unset, so a typo such as
 * SEQSHARD_MAX_OPEN_FILES=abc would silently mean the default. This check
 * runs first and refuses such a value with the variable and what it accepts.
 * An empty value means unset, as everywhere else.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ss_internal.h"

typedef enum { ENV_COUNT, ENV_SIZE, ENV_SECONDS, ENV_FLAG } env_kind_t;

typedef struct {
    const char *name;
    env_kind_t kind;
    long max;             /* ENV_COUNT: the largest accepted */
    const char *accepted; /* for the message */
} env_var_t;

static const env_var_t env_vars[] = {
    { "SEQSHARD_MAX_OPEN_FILES", ENV_COUNT, INT_MAX, "a whole number of files, 0 or more" },
    { "SEQSHARD_STORE_MEM", ENV_SIZE, 0, "a size in bytes, 0 or more, with an optional k, m "
                                         "or g (e.g. 512m)" },
    { "SEQSHARD_PROGRESS_INTERVAL", ENV_SECONDS, 0, "a number of seconds above 0 (e.g. 0.5)" },
    { "SEQSHARD_HTS_LOG", ENV_FLAG, 0, "1 (show htslib's log lines) or 0" },
    { "SEQSHARD_FAIL_SHARD", ENV_COUNT, (1L << 30) - 1, "a shard number, 0 or more" },
    { "SEQSHARD_KILL_SHARD", ENV_COUNT, (1L << 30) - 1, "a shard number, 0 or more" },
    { "SEQSHARD_KILL_RANK", ENV_COUNT, (1L << 30) - 1, "a rank number, 0 or more" },
    { "SEQSHARD_TEST_SHARD_DELAY_MS", ENV_COUNT, 60000, "milliseconds, 0 to 60000" },
};

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
        return ss_parse_size(s, &n) == 0 && n >= 0;
    }
    case ENV_SECONDS: {
        double d = strtod(s, &end);
        return errno == 0 && end != s && *end == '\0' && d > 0 && isfinite(d);
    }
    case ENV_FLAG:
        return strcmp(s, "0") == 0 || strcmp(s, "1") == 0;
    }
    return 0;
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

int ss_env_on(const char *name)
{
    const char *s = getenv(name);
    return s && strcmp(s, "1") == 0;
}

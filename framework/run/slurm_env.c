/*
 * slurm_env.c -- defaults taken from the Slurm allocation when the user gave
 * no option: worker threads from the CPUs the task was given, temporary
 * files on the node-local scratch Slurm provides. Outside Slurm both return
 * "no opinion", and the plain defaults apply.
 */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../base/ss_base.h"
#include "run.h"

int ss_slurm_cpus(int cores)
{
    const char *s = getenv("SLURM_CPUS_PER_TASK");
    if (!s || !*s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || v < 1 || v > 4096) {
        ss_warn("SLURM_CPUS_PER_TASK='%s' is not a CPU count; using the cores we may run on", s);
        return 0;
    }
    /* never more workers than cores in our binding: hyperthreads share a core */
    return cores > 0 && v > cores ? cores : (int)v;
}

static int usable_dir(const char *d)
{
    struct stat st;
    return d && *d && stat(d, &st) == 0 && S_ISDIR(st.st_mode) && access(d, W_OK | X_OK) == 0;
}

const char *ss_slurm_tmpdir(void)
{
    const char *d = getenv("SLURM_TMPDIR");
    if (usable_dir(d))
        return d;
    /* TMPDIR is node-local scratch only inside a job; elsewhere keep "beside the output" */
    d = getenv("TMPDIR");
    if (getenv("SLURM_JOB_ID") && usable_dir(d))
        return d;
    return NULL;
}

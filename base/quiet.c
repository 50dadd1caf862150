/*
 * quiet.c -- standard error sent to /dev/null for a while: a rank other than
 * 0 parsing the command line (its usage errors would repeat rank 0's), view's
 * -e probes (htslib prints its parse complaints there). The descriptor itself
 * is swapped, so htslib's lines and ss_error()'s go too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "ss_base.h"

int ss_quiet_begin(void)
{
    fflush(stderr);
    int saved = dup(STDERR_FILENO), null = open("/dev/null", O_WRONLY);
    if (saved >= 0 && null >= 0)
        dup2(null, STDERR_FILENO);
    if (null >= 0)
        close(null);
    return saved;
}

void ss_quiet_end(int saved)
{
    if (saved < 0)
        return;
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
}

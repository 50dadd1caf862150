/*
 * launcher.c -- rank 0's standard output without the launcher's forwarding.
 *
 * Under mpirun, a rank's standard output is a pseudo-terminal (or a pipe)
 * that the launcher reads and copies to its own standard output, in small
 * pieces: for hundreds of MB
 * that costs several times the run (docs/benchmarks.md). When rank 0 is a
 * child of the launcher on the launcher's node, rank 0 can write to the
 * launcher's own standard output instead: the same open file (pidfd_getfd
 * duplicates the launcher's descriptor, so a shell's redirect keeps its
 * offset), or /dev/null when that is where it goes. Nothing else changes: a
 * rank elsewhere, a launcher that tags or files its output, or a kernel that
 * refuses the duplication (ptrace rules), and the pipe stays.
 *
 * No MPI here: only what the launcher left in the environment and /proc.
 * Main thread of rank 0, before anything is written to standard output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "comm.h"

/* Launcher options that change what its standard output receives: keep the pipe. */
static int launcher_rewrites(void)
{
    static const char *const vars[] = {"OMPI_MCA_orte_tag_output", "OMPI_MCA_orte_timestamp_output",
                                       "OMPI_MCA_orte_output_filename", "OMPI_MCA_orte_xml_output",
                                       "OMPI_MCA_ompi_tag_output"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && *v && strcmp(v, "0") != 0 && strcmp(v, "false") != 0)
            return 1;
    }
    return 0;
}

/* Is the parent an Open MPI launcher (mpirun, mpiexec, orterun, prterun)? */
static int parent_is_launcher(pid_t ppid)
{
    char path[64], name[64] = "";
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)ppid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    int ok = fgets(name, sizeof(name), fp) != NULL;
    fclose(fp);
    name[strcspn(name, "\n")] = '\0';
    return ok && (!strcmp(name, "mpirun") || !strcmp(name, "mpiexec") || !strcmp(name, "orterun") ||
                  !strcmp(name, "prterun"));
}

/* Our standard output's pipe ("pipe:[INO]") or pseudo-terminal number; 0, or -1 for neither. */
static int our_stdout(char *pipe, size_t size, long *pts)
{
    char link[PATH_MAX];
    ssize_t n = readlink("/proc/self/fd/1", link, sizeof(link) - 1);
    if (n <= 0)
        return -1;
    link[n] = '\0';
    *pts = -1;
    if (strncmp(link, "pipe:[", 6) == 0)
        return snprintf(pipe, size, "%s", link) < (int)size ? 0 : -1;
    char *end;
    if (strncmp(link, "/dev/pts/", 9) != 0 || (*pts = strtol(link + 9, &end, 10)) < 0 || *end)
        return -1;
    *pipe = '\0';
    return 0;
}

/* Is the parent's descriptor fd the master of pseudo-terminal pts? */
static int is_master_of(pid_t ppid, int fd, long pts)
{
    char path[64], line[128];
    snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", (int)ppid, fd);
    FILE *fp = fopen(path, "r");
    int yes = 0;
    while (fp && !yes && fgets(line, sizeof(line), fp))
        yes = strncmp(line, "tty-index:", 10) == 0 && strtol(line + 10, NULL, 10) == pts;
    if (fp)
        fclose(fp);
    return yes;
}

/*
 * Does the parent read our standard output (Open MPI gives a local rank a
 * pseudo-terminal, or a pipe)? Then it is the launcher that forwards it.
 */
static int parent_reads_our_stdout(pid_t ppid)
{
    char want[64], path[64], link[64];
    long pts;
    if (our_stdout(want, sizeof(want), &pts) < 0)
        return 0;
    for (int fd = 0; fd < 4096; fd++) {
        snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)ppid, fd);
        ssize_t n = readlink(path, link, sizeof(link) - 1);
        if (n <= 0)
            continue;
        link[n] = '\0';
        if (pts < 0 ? strcmp(link, want) == 0
                    : strstr(link, "ptmx") != NULL && is_master_of(ppid, fd, pts))
            return 1;
    }
    return 0;
}

/* The parent's standard output as a descriptor of ours, or -1. */
static int parent_stdout(pid_t ppid)
{
#if defined(SYS_pidfd_open) && defined(SYS_pidfd_getfd)
    int pfd = (int)syscall(SYS_pidfd_open, ppid, 0);
    if (pfd >= 0) {
        int fd = (int)syscall(SYS_pidfd_getfd, pfd, STDOUT_FILENO, 0);
        close(pfd);
        if (fd >= 0)
            return fd;
    }
#endif
    /* not allowed to duplicate it: /dev/null at least needs no shared offset */
    char path[64];
    struct stat st, null;
    snprintf(path, sizeof(path), "/proc/%d/fd/1", (int)ppid);
    if (stat(path, &st) == 0 && stat("/dev/null", &null) == 0 && S_ISCHR(st.st_mode) &&
        st.st_rdev == null.st_rdev)
        return open("/dev/null", O_WRONLY | O_CLOEXEC);
    return -1;
}

/*
 * Can the parent write its standard output? 0 yes (or we cannot tell), -1
 * when its descriptor 1 is closed or open only for reading. A launcher
 * started with standard output closed (`>&-`) silently drops what a rank
 * writes, and its descriptor 1 is then whatever it opened next (one end of
 * its own pipe): neither may receive the run's output.
 */
static int parent_stdout_writable(pid_t ppid)
{
    char path[64], line[128];
    snprintf(path, sizeof(path), "/proc/%d/fdinfo/1", (int)ppid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return errno == ENOENT ? -1 : 0;
    int ok = 0;
    while (fgets(line, sizeof(line), fp))
        if (strncmp(line, "flags:", 6) == 0)
            ok = (strtol(line + 6, NULL, 8) & O_ACCMODE) == O_RDONLY ? -1 : 0;
    fclose(fp);
    return ok;
}

int ss_comm_stdout_direct(void)
{
    const char *off = getenv("SEQSHARD_STDOUT_DIRECT"); /* checked by env.c: 0 or 1 */
    if (ss_comm_rank() != 0 || launcher_rewrites())
        return 0;
    pid_t ppid = getppid();
    if (!parent_is_launcher(ppid) || !parent_reads_our_stdout(ppid))
        return 0;
    if (parent_stdout_writable(ppid) < 0) {
        ss_error("standard output: mpirun's standard output is closed or not open for "
                 "writing, so the output has nowhere to go; run mpirun with standard output "
                 "open (redirect it: > out.txt, or a pipe) or give -o FILE");
        return -1;
    }
    if (off && strcmp(off, "0") == 0)
        return 0;
    int fd = parent_stdout(ppid);
    if (fd < 0)
        return 0;
    int ok = dup2(fd, STDOUT_FILENO) == STDOUT_FILENO;
    close(fd);
    return ok;
}

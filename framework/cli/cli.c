/*
 * cli.c -- `seqshard --help | --version | <kernel> ...`: choose the kernel,
 * let it parse its options, open the job, run the engine.
 *
 * Exit status: 0 ok (and after --help), 1 bad input or a failed run,
 * 2 bad usage (one line on stderr saying what and where to look), 128 + N
 * when signal N ended the run (signals.c).
 */
#include <fcntl.h>
#include <htslib/hts.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../alloc/ss_alloc.h"
#include "../comm/comm.h"
#include "../out/output_check.h"
#include "../run/run.h"
#include "../step/steps.h"
#include "../topology/topology.h"
#include "cli.h"

/*
 * Ranks must agree that setup worked before any collective step, or a rank
 * that failed alone would leave the others waiting. The lowest failing rank
 * prints its (deferred) message; every rank then exits 1.
 */
static int agree_setup(int failed)
{
    if (!ss_comm_parallel())
        return failed;
    int n = ss_comm_size(), me = ss_comm_rank();
    int lowest = ss_comm_max_int(failed ? n - me : 0);
    if (lowest)
        ss_signals_run_failed();
    if (lowest && n - lowest == me)
        ss_error_flush();
    ss_error_defer(0);
    return lowest != 0;
}

/*
 * A closed standard descriptor (`>&-`) would be handed to the next file we
 * open, and output meant for it written into that file. Hold each closed
 * one with /dev/null opened read-only, so writing it still fails, and says
 * so (ss_output_open checks standard output before the run).
 */
static void hold_closed_std_fds(void)
{
    for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
        if (fcntl(fd, F_GETFD) >= 0)
            continue;
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != fd) {
            dup2(null, fd);
            close(null);
        }
    }
}

/* The program's kernels, given to ss_main (kernels/main.c): the framework names none. */
static const ss_kernel_t *const *kernels;
static int n_kernels;

static const ss_kernel_t *kernel_find(const char *name)
{
    for (int i = 0; name && i < n_kernels; i++)
        if (strcmp(kernels[i]->name, name) == 0)
            return kernels[i];
    return NULL;
}

static void list_kernels(FILE *fp)
{
    for (int i = 0; i < n_kernels; i++) {
        const ss_kernel_t *k = kernels[i];
        fprintf(fp, "  %-12s %s\n", k->name, k->summary ? k->summary : "");
    }
}

static void usage(FILE *fp)
{
    fprintf(fp,
            "seqshard %s: run genomics kernels over sorted, indexed BAM/CRAM in parallel shards,\n"
            "with output identical to the reference tools.\n\n"
            "Usage: seqshard <kernel> [options] in1.bam|in1.cram [in2 ...]\n"
            "       seqshard --help | --version\n\n"
            "Kernels:\n",
            SS_VERSION);
    list_kernels(fp);
    fprintf(fp, "  %-12s %s\n", "topology", "print where workers would run (pinning, NUMA)");
    fprintf(fp, "\nExamples:\n"
                "  seqshard pileup -f ref.fa -o out.pileup.gz in.bam\n"
                "  seqshard markdup -s --write-index fixed.bam marked.bam\n"
                "  seqshard mpileup -f ref.fa -o calls.vcf.gz --write-index in.bam --call -mv\n"
                "  seqshard depth --mosdepth sample --by 1000 in.bam\n"
                "  mpirun -np 16 seqshard pileup -f ref.fa -o out.pileup.gz in.bam\n"
                "  sbatch -N 4 slurm/seqshard.sbatch pileup -f ref.fa -o out.pileup.gz in.bam\n"
                "\nRun 'seqshard <kernel> --help' for a kernel's options.\n");
}

static void version(FILE *fp)
{
    char mpi[256];
    unsigned hw = hwloc_get_api_version();
    ss_comm_version(mpi, sizeof(mpi));
    ss_alloc_info_t ai;
    memset(&ai, 0, sizeof(ai));
    ss_alloc_info(&ai);
    fprintf(fp, "seqshard %s\n", ss_build_version);
    fprintf(fp, "build: %s, %s\n", ss_build_type, ss_build_compiler);
    fprintf(fp, "htslib: %s\n", hts_version());
    fprintf(fp, "hwloc: API %u.%u.%u (compiled), %u.%u.%u (runtime)\n",
            (HWLOC_API_VERSION >> 16) & 0xff, (HWLOC_API_VERSION >> 8) & 0xff,
            HWLOC_API_VERSION & 0xff, (hw >> 16) & 0xff, (hw >> 8) & 0xff, hw & 0xff);
    fprintf(fp, "mpi: %s\n", mpi);
    fprintf(fp, "allocator: %s%s%s%s\n", ss_alloc_name(), ai.version && *ai.version ? " (" : "",
            ai.version ? ai.version : "", ai.version && *ai.version ? ")" : "");
    for (int i = 0; i < n_kernels; i++)
        if (kernels[i]->describe)
            fprintf(fp, "%s: %s\n", kernels[i]->name, kernels[i]->describe());
}

static void unknown_kernel(const char *name)
{
    fprintf(stderr, "seqshard: unknown command '%s'; kernels:", name);
    for (int i = 0; i < n_kernels; i++)
        fprintf(stderr, "%s %s", i ? "," : "", kernels[i]->name);
    fprintf(stderr, "; see 'seqshard --help'\n");
}

/* Parse, open, prepare, run one kernel. Returns the exit status. */
static int run_kernel(const ss_kernel_t *k, int argc, char **argv)
{
    ss_common_opts_t co;
    void *kopts = NULL, *run = NULL;
    ss_job_t *job = NULL;
    ss_out_spec_t spec = {.format = SS_FMT_TEXT, .level = -1};
    int rc;
    ss_common_opts_init(&co);
    ss_cli_set_command(k->name, argc, argv);
    /* seqshard says what went wrong in one line of its own; htslib's own lines
     * (several per failure, per thread) are shown only with SEQSHARD_HTS_LOG=1 */
    if (!ss_env_on("SEQSHARD_HTS_LOG"))
        hts_set_log_level(HTS_LOG_OFF);
    /* under mpirun every rank parses the same command line; only rank 0 prints
     * usage errors, so a typo gives one line, not one per rank */
    int saved = ss_comm_rank() == 0 ? -1 : ss_quiet_begin();
    int r = k->parse(argc - 1, argv + 1, &co, &kopts);
    ss_quiet_end(saved);
    /* the shared output options, which prepare may still change */
    spec.level = co.out_level;
    spec.write_index = co.write_index;
    if (ss_comm_parallel())
        ss_error_defer(1);
    if (r == 0) /* the log's clock starts before the inputs open */
        ss_log_open(k->name, co.quiet, ss_comm_rank() == 0);
    if (r == -1)
        rc = SS_EXIT_OK; /* --help was printed */
    else if (r != 0)
        /* usage messages are printed directly; ss_error() means a bad input (a -b list
         * naming a missing file), which is status 1 like any other unusable input */
        rc = ss_error_raised() ? SS_EXIT_FAIL : SS_EXIT_USAGE;
    else if (ss_env_check() < 0)
        rc = SS_EXIT_USAGE;
    else if (!(job = ss_job_open(&co, k)))
        rc = SS_EXIT_FAIL;
    else if (ss_job_steps_prepare(job) < 0)
        rc = SS_EXIT_FAIL;
    else if (k->prepare && k->prepare(kopts, job, &run, &spec) < 0)
        rc = SS_EXIT_FAIL;
    /* every path the run will write, before any work */
    else if (ss_outputs_check(&co, &spec) < 0)
        rc = SS_EXIT_FAIL;
    else
        rc = -1;
    if (agree_setup(rc != -1 && rc != SS_EXIT_OK) && rc == -1)
        rc = SS_EXIT_FAIL;
    if (rc == -1) {
        /* several ranks: a run-time message waits until the rank knows it is the first
         * to fail (engine_par.c), so ranks that fail together print one line; what is
         * left unprinted at the end, and not reported by another rank, is printed here */
        ss_error_defer(ss_comm_parallel());
        rc = ss_engine_run(k, kopts, run, &spec, job) == SS_EXIT_OK ? SS_EXIT_OK : SS_EXIT_FAIL;
        ss_error_defer(0);
        ss_error_flush();
    }
    if (rc == SS_EXIT_FAIL)
        ss_log_failed(NULL); /* a no-op when the log is off or the engine already said so */
    if (spec.header)
        sam_hdr_destroy(spec.header); /* the run did not take it: setup failed before */
    if (run && k->run_free)
        k->run_free(run);
    ss_job_close(job);
    if (kopts && k->opts_free)
        k->opts_free(kopts);
    ss_common_opts_free(&co);
    return rc;
}

int ss_main(int argc, char **argv, const ss_kernel_t *const *table, int n_table,
            const ss_step_t *const *steps, int n_steps)
{
    kernels = table;
    n_kernels = n_table;
    hold_closed_std_fds();
    if (ss_steps_register(steps, n_steps) < 0)
        return SS_EXIT_FAIL;
    if (argc < 2) {
        usage(stderr);
        return SS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return SS_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        version(stdout);
        return SS_EXIT_OK;
    }
    if (strcmp(cmd, "topology") == 0)
        return ss_topology_main(argc - 1, argv + 1);
    const ss_kernel_t *k = kernel_find(cmd);
    if (!k) {
        unknown_kernel(cmd);
        return SS_EXIT_USAGE;
    }
    int comm = ss_comm_init(&argc, &argv);
    if (comm < 0)
        return comm == -2 ? SS_EXIT_USAGE : SS_EXIT_FAIL;
    if (ss_comm_parallel()) {
        /* several ranks share one terminal or log: say which one is speaking */
        char prefix[32];
        snprintf(prefix, sizeof(prefix), "rank %d: ", ss_comm_rank());
        ss_error_set_prefix(prefix);
    }
    /* after MPI_Init, whose libraries may install handlers of their own; one rank speaks */
    ss_signals_install(ss_comm_rank() != 0);
    /* before any BGZF block is read: htslib's per-block deflate state then comes from a pool */
    ss_alloc_pool_deflate();
    int rc = run_kernel(k, argc, argv);
    ss_comm_finalize();
    return rc;
}

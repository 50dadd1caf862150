/*
 * topology_cmd.c -- `seqshard topology`: show where workers would run.
 *
 * Prints the topology the process sees (after mpirun/srun/taskset bound it)
 * and one line per worker, like mpirun --report-bindings. Under a launcher
 * every rank prints its own lines, so `mpirun ... seqshard topology -@ 8`
 * checks a launch line before a long job uses it. With --check the workers
 * are really started and bound, and each reports the PU it runs on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../driver.h"
#include "../ss_framework.h"
#include "topology.h"

#define OPT_BIND      0x2001
#define OPT_SYNTHETIC 0x2002
#define OPT_RESTRICT  0x2003
#define OPT_CHECK     0x2004

static void usage(FILE *fp)
{
    fprintf(fp,
            "Usage: seqshard topology [options]\n"
            "\n"
            "Print where seqshard places its worker threads on this machine, within the CPUs\n"
            "this process may use: one line per worker, like mpirun --report-bindings.\n"
            "Under mpirun or srun every rank prints its own lines.\n"
            "\n"
            "Options:\n"
            "  -@, --threads INT    workers to place [0: one per usable core]\n"
            "      --bind MODE      auto, core, numa or none [auto]\n"
            "                       auto: one worker per core when there are enough cores,\n"
            "                       otherwise no pinning (with a warning)\n"
            "      --synthetic STR  place on an hwloc synthetic topology instead of this\n"
            "                       machine, e.g. \"pack:2 numa:2 core:8 pu:1\"\n"
            "      --restrict LIST  use only these PUs (\"8-15,24\"), as Slurm or mpirun would\n"
            "      --check          start the workers, bind them, and print the PU each\n"
            "                       runs on (this machine only)\n"
            "  -h, --help           print this help and exit\n"
            "\n"
            "See docs/locality.md for launching one rank per socket.\n");
}

/* The rank a launcher gave this process, from its environment; 0 without one. */
static int launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                       "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0')
            return atoi(v);
    }
    return 0;
}

typedef struct {
    const ss_topo_t *topo;
    const ss_placement_t *place;
    int bound; /* ss_topo_bind_self's result */
    int pu;    /* where the thread ran after binding */
    int inside;
} check_t;

/* Spin for about ms milliseconds, so the scheduler has run us where we may run. */
static void spin(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void *check_worker(void *arg)
{
    check_t *c = arg;
    c->bound = ss_topo_bind_self(c->topo, c->place);
    spin(20);
    c->pu = ss_topo_where(c->topo);
    c->inside = c->bound == 0 ? ss_topo_check_self(c->topo, c->place) : -1;
    return NULL;
}

/* Start n threads, bind each to its placement, print where each ran. Returns 0 or -1. */
static int check_bindings(const ss_topo_t *topo, const ss_placement_t *pl, int n, int rank)
{
    check_t *c = calloc((size_t)n, sizeof(*c));
    pthread_t *th = calloc((size_t)n, sizeof(*th));
    int started = 0, bad = 0;
    if (c == NULL || th == NULL) {
        ss_error("topology: out of memory; use fewer threads");
        bad = 1;
        goto done;
    }
    for (; started < n; started++) {
        c[started] = (check_t){.topo = topo, .place = &pl[started], .pu = -1, .inside = -1};
        int rc = pthread_create(&th[started], NULL, check_worker, &c[started]);
        if (rc != 0) {
            ss_error("topology: cannot start worker %d (%s); use fewer threads", started,
                     strerror(rc));
            bad = 1;
            break;
        }
    }
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < started; i++) {
        char line[256];
        ss_topo_format(&pl[i], line, sizeof(line));
        const char *verdict = c[i].bound < 0     ? "binding FAILED"
                              : c[i].bound == 1  ? "not bound"
                              : c[i].inside == 1 ? "ok"
                              : c[i].inside == 0 ? "OUTSIDE its placement"
                                                 : "cannot tell";
        if (c[i].bound < 0 || c[i].inside == 0)
            bad = 1;
        printf("rank %d worker %d: %s -- ran on PU %d: %s\n", rank, i, line, c[i].pu, verdict);
    }
done:
    free(c);
    free(th);
    return bad ? -1 : 0;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < 0 || v > 65536)
        return -1;
    *out = (int)v;
    return 0;
}

int ss_topology_main(int argc, char **argv)
{
    static const struct option longopts[] = {{"threads", required_argument, NULL, '@'},
                                             {"bind", required_argument, NULL, OPT_BIND},
                                             {"synthetic", required_argument, NULL, OPT_SYNTHETIC},
                                             {"restrict", required_argument, NULL, OPT_RESTRICT},
                                             {"check", no_argument, NULL, OPT_CHECK},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    int threads = 0, check = 0, c;
    ss_bind_mode_t mode = SS_BIND_AUTO;
    const char *synthetic = NULL, *restrict_set = NULL;

    optind = 0; /* glibc: start afresh, whoever parsed before us */
    opterr = 0; /* our own one-line messages */
    while ((c = getopt_long(argc, argv, "@:h", longopts, NULL)) != -1) {
        switch (c) {
        case '@':
            if (parse_int(optarg, &threads) < 0) {
                ss_error("topology: -@ '%s' is not a thread count; give 0 to 65536", optarg);
                return SS_EXIT_USAGE;
            }
            break;
        case OPT_BIND:
            if (ss_bind_mode_parse(optarg, &mode) < 0) {
                ss_error("topology: --bind '%s' is unknown; use auto, core, numa or none", optarg);
                return SS_EXIT_USAGE;
            }
            break;
        case OPT_SYNTHETIC:
            synthetic = optarg;
            break;
        case OPT_RESTRICT:
            restrict_set = optarg;
            break;
        case OPT_CHECK:
            check = 1;
            break;
        case 'h':
            usage(stdout);
            return SS_EXIT_OK;
        default:
            if (optopt != 0 && optopt < 0x100)
                ss_error("topology: option -%c %s; see seqshard topology --help", optopt,
                         strchr("@", optopt) ? "needs a value" : "is unknown");
            else
                ss_error("topology: option %s %s; see seqshard topology --help", argv[optind - 1],
                         optopt != 0 ? "needs a value" : "is unknown");
            return SS_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        ss_error("topology: unexpected argument '%s'; see seqshard topology --help", argv[optind]);
        return SS_EXIT_USAGE;
    }
    if (check && synthetic != NULL) {
        ss_error("topology: --check binds real threads; it cannot be used with --synthetic");
        return SS_EXIT_USAGE;
    }

    ss_topo_t *topo = ss_topo_load(synthetic, restrict_set);
    if (topo == NULL)
        return SS_EXIT_FAIL;
    int rank = launcher_rank();
    if (threads == 0)
        threads = ss_topo_ncores(topo);
    ss_placement_t *pl = calloc((size_t)threads, sizeof(*pl));
    if (pl == NULL) {
        ss_error("topology: out of memory for %d workers; use fewer threads", threads);
        ss_topo_destroy(topo);
        return SS_EXIT_FAIL;
    }
    int status = SS_EXIT_OK;
    int rc = ss_topo_plan(topo, threads, mode, pl);
    if (rc < 0) {
        status = SS_EXIT_FAIL;
    } else {
        char desc[512], host[256] = "?";
        static const char *const results[] = {"as asked", "not pinned (too few cores)",
                                              "pinned, cores shared"};
        if (gethostname(host, sizeof(host)) == 0)
            host[sizeof(host) - 1] = '\0';
        ss_topo_describe(topo, desc, sizeof(desc));
        printf("rank %d on %s: %s\n", rank, host, desc);
        printf("rank %d: %d worker%s, --bind %s: %s\n", rank, threads, threads == 1 ? "" : "s",
               ss_bind_mode_name(mode), results[rc]);
        if (check) {
            if (check_bindings(topo, pl, threads, rank) < 0)
                status = SS_EXIT_FAIL;
        } else {
            ss_topo_print(stdout, rank, pl, threads);
        }
    }
    fflush(stdout);
    ss_topo_plan_free(pl, threads);
    free(pl);
    ss_topo_destroy(topo);
    return status;
}

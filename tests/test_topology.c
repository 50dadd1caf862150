/*
 * test_topology.c -- worker placement on synthetic hwloc topologies (independent of the
 * machine the tests run on), and on the real machine: the topology never widens the
 * process's binding, and a bound worker runs inside its placement.
 *
 * The synthetic machine is "pack:2 numa:2 core:8 pu:1": 2 packages x 2 NUMA nodes x 8
 * cores, PUs numbered 0-31 in order, so NUMA node j holds PUs 8j..8j+7.
 */
#define _GNU_SOURCE
#include <CUnit/Basic.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "framework/ss_framework.h"
#include "framework/topology/topology.h"
#include "ss_testutil.h"

#define SYNTH "pack:2 numa:2 core:8 pu:1"

/* The bitmap as a list string, e.g. "8-15", in a static buffer (one use per statement). */
#define SET_EQ_LIST(set, list)                                                                    \
    do {                                                                                          \
        hwloc_bitmap_t want_ = hwloc_bitmap_alloc();                                              \
        CU_ASSERT_FATAL(want_ != NULL && hwloc_bitmap_list_sscanf(want_, (list)) == 0);           \
        int ok_ = (set) != NULL && hwloc_bitmap_isequal((set), want_);                            \
        if (!ok_) {                                                                               \
            char *s_ = NULL;                                                                      \
            if ((set) == NULL || hwloc_bitmap_list_asprintf(&s_, (set)) < 0)                      \
                s_ = NULL;                                                                        \
            fprintf(stderr, "\n    %s:%d: %s is {%s}, expected {%s}\n", __FILE__, __LINE__, #set, \
                    s_ ? s_ : "(null)", (list));                                                  \
            free(s_);                                                                             \
        }                                                                                         \
        hwloc_bitmap_free(want_);                                                                 \
        CU_ASSERT(ok_);                                                                           \
    } while (0)

static ss_topo_t *load(const char *synthetic, const char *restrict_set)
{
    ss_topo_t *t = ss_topo_load(synthetic, restrict_set);
    if (t == NULL)
        fprintf(stderr, "\n    cannot load \"%s\" restricted to %s: %s\n",
                synthetic ? synthetic : "this machine", restrict_set ? restrict_set : "-",
                ss_error_message());
    return t;
}

/* No two workers on one core, and every cpuset a single PU of its core. */
static void check_distinct_single(const ss_placement_t *p, int n)
{
    for (int i = 0; i < n; i++) {
        CU_ASSERT_FATAL(p[i].cpuset != NULL);
        SS_CMP(hwloc_bitmap_weight(p[i].cpuset), ==, 1);
        SS_CMP(hwloc_bitmap_first(p[i].cpuset), ==, p[i].pu_os);
        for (int j = 0; j < i; j++)
            SS_CMP(p[i].core_logical, !=, p[j].core_logical);
    }
}

static void test_synthetic_counts(void)
{
    ss_topo_t *t = load(SYNTH, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SS_CMP(ss_topo_ncores(t), ==, 32);
    SS_CMP(ss_topo_npus(t), ==, 32);
    SS_CMP(ss_topo_nnuma(t), ==, 4);
    SS_CMP(ss_topo_is_this_system(t), ==, 0);
    ss_topo_destroy(t);
}

/* 8 workers on 4 nodes: 2 per node, contiguous ids, each on the node's first cores. */
static void test_core_grouped_per_numa(void)
{
    ss_topo_t *t = load(SYNTH, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_placement_t p[8];
    SS_CMP(ss_topo_plan(t, 8, SS_BIND_CORE, p), ==, SS_TOPO_PINNED);
    check_distinct_single(p, 8);
    for (int w = 0; w < 8; w++) {
        SS_CMP(p[w].worker, ==, w);
        SS_CMP(p[w].pinned, ==, 1);
        SS_CMP(p[w].numa_os, ==, w / 2);
        SS_CMP(p[w].group, ==, w / 2);
        SS_CMP(p[w].package_os, ==, w / 4);
        SS_CMP(p[w].pu_os, ==, (w / 2) * 8 + w % 2);
        SS_CMP(p[w].core_logical, ==, (w / 2) * 8 + w % 2);
        CU_ASSERT_FATAL(p[w].nodeset != NULL);
        SS_CMP(hwloc_bitmap_weight(p[w].nodeset), ==, 1);
        SS_CMP(hwloc_bitmap_first(p[w].nodeset), ==, w / 2);
    }
    ss_topo_plan_free(p, 8);
    SS_CMP(ss_topo_warnings(t), ==, 0);
    ss_topo_destroy(t);
}

/* AUTO with enough cores is CORE; all 32 cores used once with 32 workers. */
static void test_auto_pins_when_enough_cores(void)
{
    ss_topo_t *t = load(SYNTH, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_placement_t p[32];
    SS_CMP(ss_topo_plan(t, 32, SS_BIND_AUTO, p), ==, SS_TOPO_PINNED);
    check_distinct_single(p, 32);
    for (int w = 0; w < 32; w++)
        SS_CMP(p[w].pu_os, ==, w);
    ss_topo_plan_free(p, 32);
    SS_CMP(ss_topo_warnings(t), ==, 0);
    ss_topo_destroy(t);
}

static void test_numa_mode_cpuset_is_node(void)
{
    static const char *const nodes[] = {"0-7", "8-15", "16-23", "24-31"};
    ss_topo_t *t = load(SYNTH, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_placement_t p[8];
    SS_CMP(ss_topo_plan(t, 8, SS_BIND_NUMA, p), ==, SS_TOPO_PINNED);
    for (int w = 0; w < 8; w++) {
        SS_CMP(p[w].pinned, ==, 1);
        SS_CMP(p[w].numa_os, ==, w / 2);
        SS_CMP(p[w].core_logical, ==, -1);
        SS_CMP(p[w].pu_os, ==, -1);
        SET_EQ_LIST(p[w].cpuset, nodes[w / 2]);
        SS_CMP(hwloc_bitmap_first(p[w].nodeset), ==, w / 2);
    }
    ss_topo_plan_free(p, 8);
    ss_topo_destroy(t);
}

/* Slurm gave this rank cores 8-15 (all of NUMA node 1): nothing lands outside them. */
static void test_restricted_never_outside(void)
{
    ss_topo_t *t = load(SYNTH, "8-15");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SS_CMP(ss_topo_ncores(t), ==, 8);
    SS_CMP(ss_topo_nnuma(t), ==, 1);
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    CU_ASSERT_FATAL(allowed != NULL && hwloc_bitmap_list_sscanf(allowed, "8-15") == 0);

    ss_placement_t p[16];
    SS_CMP(ss_topo_plan(t, 8, SS_BIND_AUTO, p), ==, SS_TOPO_PINNED);
    check_distinct_single(p, 8);
    for (int w = 0; w < 8; w++) {
        CU_ASSERT(hwloc_bitmap_isincluded(p[w].cpuset, allowed));
        SS_CMP(p[w].numa_os, ==, 1);
        SS_CMP(p[w].pu_os, ==, 8 + w);
    }
    ss_topo_plan_free(p, 8);

    /* More workers than cores, core binding asked for: shared, still inside. */
    SS_CMP(ss_topo_plan(t, 16, SS_BIND_CORE, p), ==, SS_TOPO_SHARED);
    for (int w = 0; w < 16; w++)
        CU_ASSERT(hwloc_bitmap_isincluded(p[w].cpuset, allowed));
    ss_topo_plan_free(p, 16);
    SS_CMP(ss_topo_warnings(t), ==, 1);

    SS_CMP(ss_topo_plan(t, 3, SS_BIND_NUMA, p), ==, SS_TOPO_PINNED);
    for (int w = 0; w < 3; w++)
        SET_EQ_LIST(p[w].cpuset, "8-15");
    ss_topo_plan_free(p, 3);
    hwloc_bitmap_free(allowed);
    ss_topo_destroy(t);
}

/* A binding across two nodes (half of each): workers split between them. */
static void test_restricted_across_nodes(void)
{
    ss_topo_t *t = load(SYNTH, "4-11");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SS_CMP(ss_topo_ncores(t), ==, 8);
    SS_CMP(ss_topo_nnuma(t), ==, 2);
    ss_placement_t p[4];
    SS_CMP(ss_topo_plan(t, 4, SS_BIND_CORE, p), ==, SS_TOPO_PINNED);
    static const int want_pu[] = {4, 5, 8, 9}, want_node[] = {0, 0, 1, 1};
    for (int w = 0; w < 4; w++) {
        SS_CMP(p[w].pu_os, ==, want_pu[w]);
        SS_CMP(p[w].numa_os, ==, want_node[w]);
        SS_CMP(p[w].group, ==, want_node[w]);
    }
    ss_topo_plan_free(p, 4);
    SS_CMP(ss_topo_plan(t, 2, SS_BIND_NUMA, p), ==, SS_TOPO_PINNED);
    SET_EQ_LIST(p[0].cpuset, "4-7");
    SET_EQ_LIST(p[1].cpuset, "8-11");
    ss_topo_plan_free(p, 2);
    ss_topo_destroy(t);
}

/* Nodes with unequal usable cores get workers in proportion, never more than their cores. */
static void test_uneven_nodes(void)
{
    ss_topo_t *t = load("pack:1 numa:2 core:4 pu:1", "0-4"); /* node 0: 4 cores, node 1: 1 */
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_placement_t p[5];
    for (int n = 1; n <= 5; n++) {
        SS_CMP(ss_topo_plan(t, n, SS_BIND_CORE, p), ==, SS_TOPO_PINNED);
        check_distinct_single(p, n);
        for (int w = 1; w < n; w++) /* groups are contiguous and in node order */
            SS_CMP(p[w].group, >=, p[w - 1].group);
        ss_topo_plan_free(p, n);
    }
    ss_topo_destroy(t);
}

/* Two hardware threads per core: one worker per core, on the core's first PU. */
static void test_smt_one_pu_per_core(void)
{
    ss_topo_t *t = load("pack:1 numa:1 core:2 pu:2", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SS_CMP(ss_topo_ncores(t), ==, 2);
    SS_CMP(ss_topo_npus(t), ==, 4);
    ss_placement_t p[3];
    SS_CMP(ss_topo_plan(t, 2, SS_BIND_AUTO, p), ==, SS_TOPO_PINNED);
    SS_CMP(p[0].pu_os, ==, 0);
    SS_CMP(p[1].pu_os, ==, 2);
    ss_topo_plan_free(p, 2);
    /* 3 workers > 2 cores: AUTO does not pin, even though there are 4 PUs. */
    SS_CMP(ss_topo_plan(t, 3, SS_BIND_AUTO, p), ==, SS_TOPO_UNPINNED);
    ss_topo_plan_free(p, 3);
    ss_topo_destroy(t);
}

/*
 * Capture what is written to fd (stderr, or stdout) between begin and end; end returns
 * the number of lines and copies up to size-1 bytes of the text into text (if not NULL).
 */
static FILE *cap_file;
static int cap_saved = -1, cap_fd = -1;

static void capture_fd_begin(int fd)
{
    fflush(stdout);
    fflush(stderr);
    cap_fd = fd;
    cap_file = tmpfile();
    CU_ASSERT_PTR_NOT_NULL_FATAL(cap_file);
    cap_saved = dup(fd);
    CU_ASSERT_FATAL(cap_saved >= 0 && dup2(fileno(cap_file), fd) >= 0);
}

static int capture_fd_end(char *text, size_t size)
{
    fflush(stdout);
    fflush(stderr);
    CU_ASSERT_FATAL(dup2(cap_saved, cap_fd) >= 0);
    close(cap_saved);
    int lines = 0, c;
    size_t len = 0;
    rewind(cap_file);
    while ((c = fgetc(cap_file)) != EOF) {
        lines += c == '\n';
        if (text != NULL && len + 1 < size)
            text[len++] = (char)c;
    }
    if (text != NULL && size > 0)
        text[len] = '\0';
    fclose(cap_file);
    return lines;
}

static void capture_begin(void)
{
    capture_fd_begin(STDERR_FILENO);
}
static int capture_end(void)
{
    return capture_fd_end(NULL, 0);
}

/* Fewer cores than workers: AUTO does not pin, and warns once however often it plans. */
static void test_auto_too_few_cores(void)
{
    ss_topo_t *t = load(SYNTH, "0-3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_placement_t p[8];
    capture_begin();
    for (int round = 0; round < 3; round++) {
        SS_CMP(ss_topo_plan(t, 8, SS_BIND_AUTO, p), ==, SS_TOPO_UNPINNED);
        for (int w = 0; w < 8; w++) {
            SS_CMP(p[w].pinned, ==, 0);
            CU_ASSERT_PTR_NULL(p[w].cpuset);
            CU_ASSERT_PTR_NULL(p[w].nodeset);
            SS_CMP(ss_topo_bind_self(t, &p[w]), ==, 1);
        }
        ss_topo_plan_free(p, 8);
        SS_CMP(ss_topo_warnings(t), ==, 1);
    }
    SS_CMP(capture_end(), ==, 1);
    ss_topo_destroy(t);

    /* Quiet (--quiet): counted, not printed. */
    t = load(SYNTH, "0-3");
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_topo_set_quiet(t, 1);
    capture_begin();
    SS_CMP(ss_topo_plan(t, 8, SS_BIND_AUTO, p), ==, SS_TOPO_UNPINNED);
    SS_CMP(capture_end(), ==, 0);
    ss_topo_plan_free(p, 8);
    SS_CMP(ss_topo_warnings(t), ==, 1);
    ss_topo_destroy(t);
}

static void test_none_mode(void)
{
    ss_topo_t *t = load(SYNTH, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_placement_t p[64];
    SS_CMP(ss_topo_plan(t, 64, SS_BIND_NONE, p), ==, SS_TOPO_PINNED);
    for (int w = 0; w < 64; w++)
        SS_CMP(p[w].pinned, ==, 0);
    ss_topo_plan_free(p, 64);
    SS_CMP(ss_topo_warnings(t), ==, 0);
    ss_topo_destroy(t);
}

static void test_bad_input(void)
{
    CU_ASSERT_PTR_NULL(ss_topo_load("pack:two", NULL));
    CU_ASSERT(strstr(ss_error_message(), "synthetic") != NULL);
    ss_error_reset();
    CU_ASSERT_PTR_NULL(ss_topo_load(SYNTH, "eight"));
    CU_ASSERT(strstr(ss_error_message(), "eight") != NULL);
    ss_error_reset();
    ss_topo_t *t = load(SYNTH, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_placement_t p[1];
    SS_CMP(ss_topo_plan(t, 0, SS_BIND_AUTO, p), ==, -1);
    ss_error_reset();
    ss_topo_destroy(t);
    ss_topo_destroy(NULL);

    ss_bind_mode_t m = SS_BIND_NONE;
    SS_CMP(ss_bind_mode_parse("numa", &m), ==, 0);
    SS_CMP(m, ==, SS_BIND_NUMA);
    SS_CMP(ss_bind_mode_parse("socket", &m), ==, -1);
    SS_STR_EQ(ss_bind_mode_name(SS_BIND_AUTO), "auto");
}

static void test_format(void)
{
    ss_topo_t *t = load(SYNTH, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    ss_placement_t p[8];
    char buf[128];
    SS_CMP(ss_topo_plan(t, 8, SS_BIND_CORE, p), ==, SS_TOPO_PINNED);
    ss_topo_format(&p[1], buf, sizeof(buf));
    SS_STR_EQ(buf, "core 1 (PU 1) numa 0 package 0");
    ss_topo_format(&p[7], buf, sizeof(buf));
    SS_STR_EQ(buf, "core 25 (PU 25) numa 3 package 1");
    ss_topo_plan_free(p, 8);
    SS_CMP(ss_topo_plan(t, 4, SS_BIND_NUMA, p), ==, SS_TOPO_PINNED);
    ss_topo_format(&p[1], buf, sizeof(buf));
    SS_STR_EQ(buf, "numa 1 (PUs 8-15) package 0");
    ss_topo_plan_free(p, 4);
    SS_CMP(ss_topo_plan(t, 4, SS_BIND_NONE, p), ==, SS_TOPO_PINNED);
    ss_topo_format(&p[0], buf, sizeof(buf));
    SS_STR_EQ(buf, "not bound");
    ss_topo_plan_free(p, 4);

    char *text = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&text, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    SS_CMP(ss_topo_plan(t, 2, SS_BIND_CORE, p), ==, SS_TOPO_PINNED);
    ss_topo_print(fp, 3, p, 2);
    fclose(fp);
    SS_STR_EQ(text, "rank 3 worker 0: core 0 (PU 0) numa 0 package 0\n"
                    "rank 3 worker 1: core 8 (PU 8) numa 1 package 0\n");
    free(text);
    ss_topo_plan_free(p, 2);
    ss_topo_destroy(t);
}

/* `seqshard topology`: the plan for a synthetic machine, and usage errors. */
static void test_topology_command(void)
{
    char out[4096];
    char *ok_argv[] = {"topology", "--synthetic", SYNTH, "-@", "4", "--bind", "core", NULL};
    capture_fd_begin(STDOUT_FILENO);
    int rc = ss_topology_main(7, ok_argv);
    int lines = capture_fd_end(out, sizeof(out));
    SS_CMP(rc, ==, 0);
    SS_CMP(lines, ==, 6); /* topology, plan summary, 4 workers */
    CU_ASSERT(strstr(out, "rank 0 worker 3: core 24 (PU 24) numa 3 package 1\n") != NULL);
    CU_ASSERT(strstr(out, "32 cores") != NULL);

    char *numa_argv[] = {"topology", "--synthetic", SYNTH,  "--restrict",
                         "8-15",     "--bind",      "numa", NULL};
    capture_fd_begin(STDOUT_FILENO);
    rc = ss_topology_main(7, numa_argv);
    lines = capture_fd_end(out, sizeof(out));
    SS_CMP(rc, ==, 0);
    SS_CMP(lines, ==, 10); /* -@ 0: one worker per usable core */
    CU_ASSERT(strstr(out, "rank 0 worker 7: numa 1 (PUs 8-15) package 0\n") != NULL);

    char *help_argv[] = {"topology", "--help", NULL};
    capture_fd_begin(STDOUT_FILENO);
    SS_CMP(ss_topology_main(2, help_argv), ==, 0);
    CU_ASSERT(capture_fd_end(out, sizeof(out)) > 5);
    CU_ASSERT(strncmp(out, "Usage: seqshard topology", 24) == 0);

    char *bad[][4] = {{"topology", "--bind", "socket", NULL},
                      {"topology", "-@", "many", NULL},
                      {"topology", "--check", "--synthetic", SYNTH},
                      {"topology", "stray", NULL, NULL}};
    int bad_argc[] = {3, 3, 4, 2};
    for (int i = 0; i < 4; i++) {
        capture_begin();
        rc = ss_topology_main(bad_argc[i], bad[i]);
        SS_CMP(capture_end(), ==, 1); /* one line saying what is wrong */
        SS_CMP(rc, ==, 2);
        ss_error_reset();
    }
}

/* ---- the real machine ---- */

/* The machine's topology is limited to the CPUs this thread may use (taskset/mpirun). */
static void test_machine_never_widens(void)
{
    cpu_set_t orig, one;
    CU_ASSERT_FATAL(sched_getaffinity(0, sizeof(orig), &orig) == 0);
    ss_topo_t *t = load(NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SS_CMP(ss_topo_is_this_system(t), ==, 1);
    SS_CMP(ss_topo_npus(t), ==, CPU_COUNT(&orig));
    ss_topo_destroy(t);
    if (CPU_COUNT(&orig) < 2) {
        printf("\n    (one CPU only: narrowing the binding not tested) ");
        return;
    }
    /* Narrow the binding to one CPU, as `taskset -c N` would; the test is single-threaded. */
    int cpu = 0;
    while (!CPU_ISSET(cpu, &orig))
        cpu++;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    CU_ASSERT_FATAL(sched_setaffinity(0, sizeof(one), &one) == 0);
    t = load(NULL, NULL);
    CU_ASSERT(sched_setaffinity(0, sizeof(orig), &orig) == 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    SS_CMP(ss_topo_npus(t), ==, 1);
    SS_CMP(ss_topo_ncores(t), ==, 1);
    ss_placement_t p[2];
    SS_CMP(ss_topo_plan(t, 2, SS_BIND_AUTO, p), ==, SS_TOPO_UNPINNED);
    ss_topo_plan_free(p, 2);
    SS_CMP(ss_topo_plan(t, 1, SS_BIND_CORE, p), ==, SS_TOPO_PINNED);
    SS_CMP(p[0].pu_os, ==, cpu);
    ss_topo_plan_free(p, 1);
    ss_topo_destroy(t);
}

typedef struct {
    const ss_topo_t *t;
    const ss_placement_t *p;
    int bound, pu, inside;
    char err[256];
} bind_run_t;

static void *bind_and_report(void *arg)
{
    bind_run_t *r = arg;
    r->bound = ss_topo_bind_self(r->t, r->p);
    if (r->bound < 0) {
        snprintf(r->err, sizeof(r->err), "%s", ss_error_message());
        return NULL;
    }
    /* Run a little so the scheduler has moved us onto the PU we are bound to. */
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 20000000UL; i++)
        x += i;
    r->pu = ss_topo_where(r->t);
    r->inside = ss_topo_check_self(r->t, r->p);
    return NULL;
}

/* Each worker thread, bound by ss_topo_bind_self, runs on a PU inside its placement. */
static void test_machine_bound_threads_run_inside(void)
{
    ss_topo_t *t = load(NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    int n = ss_topo_ncores(t);
    for (int mode = SS_BIND_CORE; mode <= SS_BIND_NUMA; mode++) {
        ss_placement_t *p = calloc((size_t)n, sizeof(*p));
        bind_run_t *r = calloc((size_t)n, sizeof(*r));
        pthread_t *th = calloc((size_t)n, sizeof(*th));
        CU_ASSERT_FATAL(p != NULL && r != NULL && th != NULL);
        SS_CMP(ss_topo_plan(t, n, (ss_bind_mode_t)mode, p), ==, SS_TOPO_PINNED);
        for (int w = 0; w < n; w++) {
            r[w] = (bind_run_t){.t = t, .p = &p[w], .pu = -1, .inside = -1};
            CU_ASSERT_FATAL(pthread_create(&th[w], NULL, bind_and_report, &r[w]) == 0);
        }
        for (int w = 0; w < n; w++)
            CU_ASSERT(pthread_join(th[w], NULL) == 0);
        for (int w = 0; w < n; w++) {
            if (r[w].bound < 0) {
                /* A container or policy that forbids binding: nothing to check here. */
                printf("\n    (binding refused, skipped: %s) ", r[w].err);
                ss_error_reset();
                continue;
            }
            SS_CMP(r[w].bound, ==, 0);
            if (r[w].pu < 0 || r[w].inside < 0) {
                printf("\n    (the system cannot tell where threads run: skipped) ");
                continue;
            }
            CU_ASSERT(hwloc_bitmap_isset(p[w].cpuset, (unsigned)r[w].pu));
            SS_CMP(r[w].inside, ==, 1);
        }
        ss_topo_plan_free(p, n);
        free(p);
        free(r);
        free(th);
    }
    /* Binding only ever touched the workers: this thread keeps its binding. */
    cpu_set_t now;
    CU_ASSERT(sched_getaffinity(0, sizeof(now), &now) == 0);
    SS_CMP(CPU_COUNT(&now), ==, ss_topo_npus(t));
    ss_topo_destroy(t);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "test_topology: %s\n", CU_get_error_msg());
        return 1;
    }
    CU_pSuite s = CU_add_suite("topology", NULL, NULL);
    if (s == NULL || !CU_add_test(s, "synthetic_counts", test_synthetic_counts) ||
        !CU_add_test(s, "core_grouped_per_numa", test_core_grouped_per_numa) ||
        !CU_add_test(s, "auto_pins_when_enough_cores", test_auto_pins_when_enough_cores) ||
        !CU_add_test(s, "numa_mode_cpuset_is_node", test_numa_mode_cpuset_is_node) ||
        !CU_add_test(s, "restricted_never_outside", test_restricted_never_outside) ||
        !CU_add_test(s, "restricted_across_nodes", test_restricted_across_nodes) ||
        !CU_add_test(s, "uneven_nodes", test_uneven_nodes) ||
        !CU_add_test(s, "smt_one_pu_per_core", test_smt_one_pu_per_core) ||
        !CU_add_test(s, "auto_too_few_cores", test_auto_too_few_cores) ||
        !CU_add_test(s, "none_mode", test_none_mode) ||
        !CU_add_test(s, "bad_input", test_bad_input) || !CU_add_test(s, "format", test_format) ||
        !CU_add_test(s, "topology_command", test_topology_command) ||
        !CU_add_test(s, "machine_never_widens", test_machine_never_widens) ||
        !CU_add_test(s, "machine_bound_threads_run_inside",
                     test_machine_bound_threads_run_inside)) {
        fprintf(stderr, "test_topology: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 1;
    }
    return ss_test_run();
}

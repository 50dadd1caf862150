/*
 * topology.h -- where worker threads run and where their memory lives.
 *
 * One topology per process, loaded with hwloc and restricted to the CPUs the
 * process is bound to (by mpirun, srun, taskset or a cgroup): seqshard never
 * widens a binding it was given. A plan maps workers to cores or NUMA nodes;
 * each worker thread then binds itself (CPU and memory) at start, before it
 * touches its buffers, so the pages it first touches are on its own node.
 *
 * Placement policy (docs/locality.md): workers are split among the NUMA
 * nodes in proportion to the cores the process may use on each node, in
 * contiguous blocks of worker ids: with 8 workers on 4 usable nodes of 8
 * cores, workers 0-1 are on node 0, 2-3 on node 1, and so on. Within a node,
 * workers take its cores in order, one worker per core (the first PU of the
 * core: one hardware thread per worker). A worker's block is its "group";
 * a shard is processed by one worker, so its data stays within one group.
 *
 * Threading: ss_topo_load/plan/print/destroy on the main thread;
 * ss_topo_bind_self and ss_topo_where on any thread while the topology lives.
 *
 * Private to framework/; kernels and io/ must not include it. Used by topology/,
 * cli/ (--bind, --print-binding), run/ (binding the workers) and report/ (the binding).
 */
#ifndef SS_TOPOLOGY_H
#define SS_TOPOLOGY_H

#include <hwloc.h>
#include <stdio.h>

typedef struct ss_topo_s ss_topo_t;

/* --bind: how workers are pinned. */
typedef enum {
    SS_BIND_AUTO = 0, /* one worker per core when there are enough cores, else none */
    SS_BIND_CORE,     /* one worker per core; workers share cores when there are more */
    SS_BIND_NUMA,     /* each worker may run anywhere on its NUMA node */
    SS_BIND_NONE      /* no CPU or memory binding: the OS decides */
} ss_bind_mode_t;

/* What ss_topo_plan did (values >= 0); -1 is an error. */
#define SS_TOPO_PINNED   0 /* as asked (or nothing asked: SS_BIND_NONE) */
#define SS_TOPO_UNPINNED 1 /* AUTO with fewer cores than workers: not pinned, warned */
#define SS_TOPO_SHARED   2 /* CORE with fewer cores than workers: pinned, cores shared, warned */

/*
 * Where one worker runs. Indexes are the operating system's (hwloc "P#"),
 * as taskset, /proc/PID/status and `hwloc-ls -p` show them; -1 when not
 * applicable (no pinning, or a NUMA-wide placement has no single core).
 * On Linux a core's OS index counts within its package: read it with the
 * package. core_logical is unique within the (restricted) topology.
 */
typedef struct {
    int worker;
    int pinned;              /* 1 when ss_topo_bind_self will bind this worker */
    int group;               /* block of workers on one NUMA node, 0.. in node order */
    int core_logical;        /* hwloc logical index of the core, or -1 */
    int core_os;             /* OS index of the core, or -1 */
    int pu_os;               /* OS index of the PU (core mode), or -1 */
    int numa_os;             /* OS index of the NUMA node, or -1 */
    int package_os;          /* OS index of the package, or -1 */
    hwloc_cpuset_t cpuset;   /* CPUs the worker may run on; NULL when not pinned */
    hwloc_nodeset_t nodeset; /* NUMA node(s) its memory is bound to; NULL when not pinned */
} ss_placement_t;

/*
 * Load the topology. synthetic NULL: this machine, restricted to the
 * process's CPU binding; otherwise an hwloc synthetic description such as
 * "pack:2 numa:2 core:8 pu:1" (tests, `seqshard topology --synthetic`).
 * restrict_cpuset, when not NULL, is an hwloc list string of PU OS indexes
 * ("8-15,24") that further restricts the topology, the way Slurm or mpirun
 * would. Returns NULL after ss_error() named the problem. Main thread.
 * Freed with ss_topo_destroy.
 */
ss_topo_t *ss_topo_load(const char *synthetic, const char *restrict_cpuset);
/* Accepts NULL. Main thread, after every worker stopped using it. */
void ss_topo_destroy(ss_topo_t *t);

/* Usable cores / PUs / NUMA nodes with usable cores. Any thread. */
int ss_topo_ncores(const ss_topo_t *t);
int ss_topo_npus(const ss_topo_t *t);
int ss_topo_nnuma(const ss_topo_t *t);
/* 1 when the topology is this machine's (binding possible), 0 for a synthetic one. */
int ss_topo_is_this_system(const ss_topo_t *t);
/* One line describing the topology: "this machine, PUs 0-1: 1 package, 1 NUMA node, ...". */
void ss_topo_describe(const ss_topo_t *t, char *buf, size_t size);
/*
 * Warnings ss_topo_plan and ss_topo_bind_self gave for this topology (each
 * kind once), printed or not. Any thread.
 */
int ss_topo_warnings(const ss_topo_t *t);
/*
 * quiet 1: count warnings but do not print them (--quiet: a run that asked
 * for silence still works unpinned). Errors are always printed. Main thread,
 * before planning.
 */
void ss_topo_set_quiet(ss_topo_t *t, int quiet);

/*
 * Plan n_workers placements into out[0..n_workers-1] (the caller's array;
 * bitmaps inside are allocated here, freed with ss_topo_plan_free). AUTO pins
 * one worker per core when there are at least as many usable cores as
 * workers; otherwise it pins nothing and warns (once per topology).
 * Returns SS_TOPO_PINNED, SS_TOPO_UNPINNED or SS_TOPO_SHARED, or -1 after
 * ss_error() (out is then left with no bitmaps). Main thread.
 */
int ss_topo_plan(const ss_topo_t *t, int n_workers, ss_bind_mode_t mode, ss_placement_t *out);
/* Free the bitmaps of out[0..n-1] (not the array). Accepts NULL. */
void ss_topo_plan_free(ss_placement_t *out, int n);

/*
 * Bind the calling thread to p: CPUs (thread scope, hwloc_set_cpubind) and
 * memory (thread scope, hwloc_set_membind BIND to p->nodeset). Call first
 * thing in the worker thread, before it allocates its buffers. A memory
 * binding the system refuses (no NUMA support, a container's seccomp
 * filter) is a warning, once per topology, not an error; with a single NUMA
 * node no memory binding is attempted. Returns 0 when bound, 1 when there
 * was nothing to do (p not pinned, or a synthetic topology), -1 after
 * ss_error() when the CPU binding failed. Any thread (binds itself only).
 */
int ss_topo_bind_self(const ss_topo_t *t, const ss_placement_t *p);

/*
 * OS index of the PU the calling thread last ran on, or -1 when the system
 * cannot tell (or for a synthetic topology). Any thread.
 */
int ss_topo_where(const ss_topo_t *t);
/*
 * 1 when the calling thread's CPU binding and last location lie inside
 * p->cpuset, 0 when not, -1 when the system cannot tell. Any thread.
 */
int ss_topo_check_self(const ss_topo_t *t, const ss_placement_t *p);

/*
 * Print one line per worker, like mpirun --report-bindings:
 *   "rank 0 worker 1: core 1 (PU 1) numa 0 package 0"
 *   "rank 0 worker 2: numa 1 (PUs 8-15) package 0"
 *   "rank 0 worker 3: not bound"
 */
void ss_topo_print(FILE *fp, int rank, const ss_placement_t *p, int n);
/* Format the part after "worker N: " into buf. */
void ss_topo_format(const ss_placement_t *p, char *buf, size_t size);

/* "auto", "core", "numa", "none". */
const char *ss_bind_mode_name(ss_bind_mode_t mode);
/* Parse a --bind value. Returns 0, or -1 (nothing printed) for an unknown name. */
int ss_bind_mode_parse(const char *s, ss_bind_mode_t *mode);

/* `seqshard topology ...`: print the plan for this machine; returns an exit status. */
int ss_topology_main(int argc, char **argv);

#endif

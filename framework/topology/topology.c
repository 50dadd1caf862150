/*
 * topology.c -- hwloc topology, worker placement and thread binding.
 *
 * The topology is loaded once, restricted to the process's CPU binding, and
 * summarised as a list of NUMA nodes, each with the usable cores under it.
 * Plans are computed from that summary only, so the placement logic is the
 * same for this machine and for synthetic topologies (the tests).
 *
 * Policy (see topology.h and docs/locality.md): workers are split among
 * NUMA nodes in proportion to each node's usable cores (largest remainder),
 * in contiguous blocks of worker ids; within a node, worker k takes the
 * node's k-th core (modulo the node's cores when cores are shared).
 */
#define _GNU_SOURCE
#include "topology.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "../ss_framework.h"

/* The usable cores of one NUMA node, in logical order. */
typedef struct {
    hwloc_obj_t numa; /* NULL: cores with no NUMA node above them (not seen on Linux) */
    int n_cores;
    hwloc_obj_t *cores;    /* cores (or PUs when the topology has no cores) */
    hwloc_cpuset_t cpuset; /* union of the usable cores' cpusets */
} node_cores_t;

/* Written by worker threads through a const topology: kept apart, atomic. */
typedef struct {
    int quiet; /* set before workers start, read-only afterwards */
    atomic_int warnings;
    atomic_int warned_membind;
    atomic_int warned_unpinned;
} topo_state_t;

struct ss_topo_s {
    hwloc_topology_t topo;
    int this_system;
    int n_cores, n_pus;
    int n_nodes; /* NUMA nodes with at least one usable core */
    node_cores_t *nodes;
    int membind_useful; /* more than one NUMA node in the topology */
    topo_state_t *state;
    char desc[512];
};

static const char *const mode_names[] = {"auto", "core", "numa", "none"};

const char *ss_bind_mode_name(ss_bind_mode_t mode)
{
    return (unsigned)mode < 4 ? mode_names[mode] : "?";
}

int ss_bind_mode_parse(const char *s, ss_bind_mode_t *mode)
{
    for (int i = 0; i < 4; i++)
        if (s != NULL && strcmp(s, mode_names[i]) == 0) {
            *mode = (ss_bind_mode_t)i;
            return 0;
        }
    return -1;
}

/* The first NUMA node (logical order) whose CPUs include obj's, or NULL. */
static hwloc_obj_t numa_of(hwloc_topology_t topo, hwloc_obj_t obj)
{
    hwloc_obj_t node = NULL;
    while ((node = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, node)) != NULL)
        if (node->cpuset != NULL && hwloc_bitmap_isincluded(obj->cpuset, node->cpuset))
            return node;
    return NULL;
}

static int node_index(ss_topo_t *t, hwloc_obj_t numa)
{
    for (int i = 0; i < t->n_nodes; i++)
        if (t->nodes[i].numa == numa)
            return i;
    return -1;
}

/*
 * Group the usable cores by NUMA node. Nodes come out in the order of their
 * first core, so node groups follow core order (package 0's nodes first).
 * Returns 0, or -1 on allocation failure.
 */
static int summarise(ss_topo_t *t)
{
    hwloc_topology_t topo = t->topo;
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(topo);
    int depth = hwloc_get_type_depth(topo, HWLOC_OBJ_CORE);
    if (depth < 0) /* no cores reported: one worker per PU instead */
        depth = hwloc_get_type_depth(topo, HWLOC_OBJ_PU);
    int n_objs = hwloc_get_nbobjs_by_depth(topo, (unsigned)depth);
    int n_numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);

    /* At most one entry per NUMA node, plus one for cores without a node. */
    t->nodes = calloc((size_t)n_numa + 1, sizeof(*t->nodes));
    if (t->nodes == NULL)
        return -1;
    for (int i = 0; i < n_objs; i++) {
        hwloc_obj_t core = hwloc_get_obj_by_depth(topo, (unsigned)depth, (unsigned)i);
        if (core->cpuset == NULL || !hwloc_bitmap_intersects(core->cpuset, allowed))
            continue;
        hwloc_obj_t numa = numa_of(topo, core);
        int k = node_index(t, numa);
        if (k < 0) {
            k = t->n_nodes++;
            t->nodes[k].numa = numa;
            t->nodes[k].cores = calloc((size_t)n_objs, sizeof(hwloc_obj_t));
            t->nodes[k].cpuset = hwloc_bitmap_alloc();
            if (t->nodes[k].cores == NULL || t->nodes[k].cpuset == NULL)
                return -1;
        }
        node_cores_t *nc = &t->nodes[k];
        nc->cores[nc->n_cores++] = core;
        if (hwloc_bitmap_or(nc->cpuset, nc->cpuset, core->cpuset) < 0 ||
            hwloc_bitmap_and(nc->cpuset, nc->cpuset, allowed) < 0)
            return -1;
        t->n_cores++;
    }
    hwloc_cpuset_t pus = hwloc_bitmap_dup(allowed);
    if (pus == NULL)
        return -1;
    hwloc_bitmap_and(pus, pus, hwloc_topology_get_topology_cpuset(topo));
    t->n_pus = hwloc_bitmap_weight(pus);
    hwloc_bitmap_free(pus);
    t->membind_useful = hwloc_bitmap_weight(hwloc_topology_get_topology_nodeset(topo)) > 1;
    return 0;
}

static void describe(ss_topo_t *t, const char *synthetic, const char *restrict_cpuset)
{
    char *pus = NULL;
    if (hwloc_bitmap_list_asprintf(&pus, hwloc_topology_get_allowed_cpuset(t->topo)) < 0)
        pus = NULL;
    /* Packages with usable CPUs: a restriction keeps the others as CPU-less shells. */
    int n_pack = 0;
    hwloc_obj_t pack = NULL;
    while ((pack = hwloc_get_next_obj_by_type(t->topo, HWLOC_OBJ_PACKAGE, pack)) != NULL)
        if (pack->cpuset != NULL &&
            hwloc_bitmap_intersects(pack->cpuset, hwloc_topology_get_allowed_cpuset(t->topo)))
            n_pack++;
    char where[256];
    if (synthetic != NULL)
        snprintf(where, sizeof(where), "synthetic \"%s\"%s%s", synthetic,
                 restrict_cpuset ? " restricted to PUs " : "",
                 restrict_cpuset ? restrict_cpuset : "");
    else
        snprintf(where, sizeof(where), "this machine, PUs %s", pus ? pus : "?");
    snprintf(t->desc, sizeof(t->desc),
             "%s: %d package%s, %d NUMA node%s with cores, %d core%s, %d PU%s", where, n_pack,
             n_pack == 1 ? "" : "s", t->n_nodes, t->n_nodes == 1 ? "" : "s", t->n_cores,
             t->n_cores == 1 ? "" : "s", t->n_pus, t->n_pus == 1 ? "" : "s");
    free(pus);
}

ss_topo_t *ss_topo_load(const char *synthetic, const char *restrict_cpuset)
{
    hwloc_bitmap_t set = NULL;
    ss_topo_t *t = calloc(1, sizeof(*t));
    if (t == NULL || (t->state = calloc(1, sizeof(*t->state))) == NULL) {
        ss_error("topology: out of memory; free some memory and retry");
        free(t);
        return NULL;
    }
    if (hwloc_topology_init(&t->topo) < 0) {
        ss_error("topology: hwloc_topology_init failed (%s); run with --bind none",
                 strerror(errno));
        t->topo = NULL;
        goto error;
    }
    if (synthetic != NULL) {
        if (hwloc_topology_set_synthetic(t->topo, synthetic) < 0) {
            ss_error("topology: \"%s\" is not a valid hwloc synthetic topology; write "
                     "levels down to PUs, like \"pack:2 numa:2 core:8 pu:1\"",
                     synthetic);
            goto error;
        }
    } else {
        /*
         * Only the CPUs mpirun/srun/taskset left us: a rank bound to a socket
         * sees that socket, and nothing here can widen the binding.
         */
        unsigned long flags =
            HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM | HWLOC_TOPOLOGY_FLAG_RESTRICT_TO_CPUBINDING;
        if (hwloc_topology_set_flags(t->topo, flags) < 0) {
            ss_error("topology: hwloc_topology_set_flags failed (%s); run with --bind none",
                     strerror(errno));
            goto error;
        }
        t->this_system = 1;
    }
    if (hwloc_topology_load(t->topo) < 0) {
        ss_error("topology: hwloc could not load the %s topology (%s); run with --bind none",
                 synthetic ? "synthetic" : "machine's", strerror(errno));
        goto error;
    }
    if (restrict_cpuset != NULL) {
        set = hwloc_bitmap_alloc();
        if (set == NULL || hwloc_bitmap_list_sscanf(set, restrict_cpuset) < 0 ||
            hwloc_bitmap_iszero(set)) {
            ss_error("topology: \"%s\" is not a list of PU numbers; write it like \"8-15,24\"",
                     restrict_cpuset);
            goto error;
        }
        /* Flags 0, as the restriction to the binding does: CPU-less nodes stay. */
        if (hwloc_topology_restrict(t->topo, set, 0) < 0) {
            ss_error("topology: cannot restrict to PUs %s (%s); name PUs the topology has",
                     restrict_cpuset, strerror(errno));
            goto error;
        }
    }
    if (summarise(t) < 0) {
        ss_error("topology: out of memory; free some memory and retry");
        goto error;
    }
    if (t->n_cores == 0) {
        ss_error("topology: no usable core in the %s topology; check the binding the "
                 "launcher gave (taskset -cp PID)",
                 synthetic ? "synthetic" : "machine's");
        goto error;
    }
    describe(t, synthetic, restrict_cpuset);
    hwloc_bitmap_free(set);
    return t;

error:
    hwloc_bitmap_free(set);
    ss_topo_destroy(t);
    return NULL;
}

void ss_topo_destroy(ss_topo_t *t)
{
    if (t == NULL)
        return;
    if (t->nodes != NULL)
        for (int i = 0; i < t->n_nodes; i++) {
            free(t->nodes[i].cores);
            hwloc_bitmap_free(t->nodes[i].cpuset);
        }
    free(t->nodes);
    if (t->topo != NULL)
        hwloc_topology_destroy(t->topo);
    free(t->state);
    free(t);
}

int ss_topo_ncores(const ss_topo_t *t)
{
    return t->n_cores;
}
int ss_topo_npus(const ss_topo_t *t)
{
    return t->n_pus;
}
int ss_topo_nnuma(const ss_topo_t *t)
{
    return t->n_nodes;
}
int ss_topo_is_this_system(const ss_topo_t *t)
{
    return t->this_system;
}
int ss_topo_warnings(const ss_topo_t *t)
{
    return atomic_load(&t->state->warnings);
}

void ss_topo_describe(const ss_topo_t *t, char *buf, size_t size)
{
    snprintf(buf, size, "%s", t->desc);
}

void ss_topo_set_quiet(ss_topo_t *t, int quiet)
{
    t->state->quiet = quiet;
}

/* 1 when the caller should print its warning: once per topology and flag, unless quiet. */
static int warn_once(const ss_topo_t *t, atomic_int *flag)
{
    if (atomic_exchange(flag, 1) != 0)
        return 0;
    atomic_fetch_add(&t->state->warnings, 1);
    return !t->state->quiet;
}

/*
 * Largest-remainder split of n workers among the nodes in proportion to
 * their usable cores: quota[i] = floor(n * c_i / C), then one more for the
 * largest remainders (ties to the earlier node). With n <= C no node gets
 * more workers than it has cores.
 */
static void split_workers(const ss_topo_t *t, int n, int *quota)
{
    long long total = t->n_cores;
    int given = 0;
    for (int i = 0; i < t->n_nodes; i++) {
        quota[i] = (int)((long long)n * t->nodes[i].n_cores / total);
        given += quota[i];
    }
    while (given < n) {
        int best = 0;
        long long best_rem = -1;
        for (int i = 0; i < t->n_nodes; i++) {
            /* Remainder, less what the node already got beyond its floor. */
            long long rem = (long long)n * t->nodes[i].n_cores - (long long)quota[i] * total;
            if (rem > best_rem) {
                best_rem = rem;
                best = i;
            }
        }
        quota[best]++;
        given++;
    }
}

static int package_of(hwloc_obj_t obj)
{
    hwloc_obj_t pack = obj;
    while (pack != NULL && pack->type != HWLOC_OBJ_PACKAGE)
        pack = pack->parent;
    return pack ? (int)pack->os_index : -1;
}

static void clear_placement(ss_placement_t *p, int worker)
{
    memset(p, 0, sizeof(*p));
    p->worker = worker;
    p->core_logical = p->core_os = p->pu_os = p->numa_os = p->package_os = -1;
}

/* Fill p for a worker pinned to core (mode CORE) or to node nc (mode NUMA). */
static int place(const ss_topo_t *t, const node_cores_t *nc, hwloc_obj_t core, ss_placement_t *p)
{
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(t->topo);
    p->pinned = 1;
    p->numa_os = nc->numa ? (int)nc->numa->os_index : -1;
    if (core != NULL) {
        /* One PU of the core: a worker must not hop between hyperthreads. */
        p->cpuset = hwloc_bitmap_dup(core->cpuset);
        if (p->cpuset == NULL || hwloc_bitmap_and(p->cpuset, p->cpuset, allowed) < 0 ||
            hwloc_bitmap_singlify(p->cpuset) < 0)
            return -1;
        p->core_logical = (int)core->logical_index;
        p->core_os = core->type == HWLOC_OBJ_CORE ? (int)core->os_index : -1;
        p->pu_os = hwloc_bitmap_first(p->cpuset);
        p->package_os = package_of(core);
    } else {
        p->cpuset = hwloc_bitmap_dup(nc->cpuset);
        if (p->cpuset == NULL)
            return -1;
        p->package_os = nc->n_cores > 0 ? package_of(nc->cores[0]) : -1;
        /* A node spanning packages (old machines) has no one package. */
        for (int i = 1; i < nc->n_cores; i++)
            if (package_of(nc->cores[i]) != p->package_os)
                p->package_os = -1;
    }
    if (nc->numa != NULL && (p->nodeset = hwloc_bitmap_dup(nc->numa->nodeset)) == NULL)
        return -1;
    return 0;
}

int ss_topo_plan(const ss_topo_t *t, int n_workers, ss_bind_mode_t mode, ss_placement_t *out)
{
    if (n_workers < 1) {
        ss_error("topology: %d workers planned; use -@ 1 or more", n_workers);
        return -1;
    }
    for (int w = 0; w < n_workers; w++)
        clear_placement(&out[w], w);
    if (mode == SS_BIND_NONE)
        return SS_TOPO_PINNED;
    if (mode == SS_BIND_AUTO) {
        if (n_workers > t->n_cores) {
            if (warn_once(t, &t->state->warned_unpinned))
                ss_warn("%d workers but only %d core%s usable by this process (%s); not pinning "
                        "threads. Use -@ %d, or give the rank more cores (mpirun --map-by socket "
                        "--bind-to socket, srun -c N): see docs/locality.md",
                        n_workers, t->n_cores, t->n_cores == 1 ? "" : "s", t->desc, t->n_cores);
            return SS_TOPO_UNPINNED;
        }
        mode = SS_BIND_CORE;
    }

    int *quota = calloc((size_t)t->n_nodes, sizeof(int));
    if (quota == NULL)
        goto oom;
    split_workers(t, n_workers, quota);
    int w = 0, group = 0;
    for (int i = 0; i < t->n_nodes; i++) {
        if (quota[i] == 0)
            continue;
        const node_cores_t *nc = &t->nodes[i];
        for (int k = 0; k < quota[i]; k++, w++) {
            hwloc_obj_t core = mode == SS_BIND_CORE ? nc->cores[k % nc->n_cores] : NULL;
            out[w].group = group;
            if (place(t, nc, core, &out[w]) < 0) {
                free(quota);
                goto oom;
            }
        }
        group++;
    }
    free(quota);
    if (mode == SS_BIND_CORE && n_workers > t->n_cores) {
        if (warn_once(t, &t->state->warned_unpinned))
            ss_warn("--bind core: %d workers share %d core%s (%s); expect them to slow each "
                    "other down. Use -@ %d, or --bind none",
                    n_workers, t->n_cores, t->n_cores == 1 ? "" : "s", t->desc, t->n_cores);
        return SS_TOPO_SHARED;
    }
    return SS_TOPO_PINNED;

oom:
    ss_topo_plan_free(out, n_workers);
    ss_error("topology: out of memory while planning %d workers; use fewer threads", n_workers);
    return -1;
}

void ss_topo_plan_free(ss_placement_t *out, int n)
{
    if (out == NULL)
        return;
    for (int i = 0; i < n; i++) {
        hwloc_bitmap_free(out[i].cpuset);
        hwloc_bitmap_free(out[i].nodeset);
        out[i].cpuset = out[i].nodeset = NULL;
    }
}

int ss_topo_bind_self(const ss_topo_t *t, const ss_placement_t *p)
{
    if (!p->pinned || p->cpuset == NULL || !t->this_system)
        return 1;
    if (hwloc_set_cpubind(t->topo, p->cpuset, HWLOC_CPUBIND_THREAD) < 0) {
        char *s = NULL;
        if (hwloc_bitmap_list_asprintf(&s, p->cpuset) < 0)
            s = NULL;
        ss_error("worker %d: cannot bind to PUs %s (%s); run with --bind none, and check the "
                 "binding the launcher gave (docs/locality.md)",
                 p->worker, s ? s : "?", strerror(errno));
        free(s);
        return -1;
    }
    /*
     * Not strict: the kernel prefers the node and still falls back to
     * another one when it is full, instead of failing the allocation.
     */
    if (p->nodeset != NULL && t->membind_useful &&
        hwloc_set_membind(t->topo, p->nodeset, HWLOC_MEMBIND_BIND,
                          HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) < 0 &&
        warn_once(t, &t->state->warned_membind))
        ss_warn("worker %d: memory not bound to NUMA node %d (%s); memory may be remote. "
                "Allow set_mempolicy (containers) or ignore on machines without NUMA",
                p->worker, p->numa_os, strerror(errno));
    return 0;
}

int ss_topo_where(const ss_topo_t *t)
{
    if (!t->this_system)
        return -1;
    hwloc_cpuset_t set = hwloc_bitmap_alloc();
    int pu = -1;
    if (set != NULL && hwloc_get_last_cpu_location(t->topo, set, HWLOC_CPUBIND_THREAD) == 0)
        pu = hwloc_bitmap_first(set);
    hwloc_bitmap_free(set);
    return pu;
}

int ss_topo_check_self(const ss_topo_t *t, const ss_placement_t *p)
{
    if (!t->this_system || p->cpuset == NULL)
        return -1;
    hwloc_cpuset_t bound = hwloc_bitmap_alloc(), last = hwloc_bitmap_alloc();
    int ok = -1;
    if (bound != NULL && last != NULL &&
        hwloc_get_cpubind(t->topo, bound, HWLOC_CPUBIND_THREAD) == 0 &&
        hwloc_get_last_cpu_location(t->topo, last, HWLOC_CPUBIND_THREAD) == 0)
        ok = hwloc_bitmap_isincluded(bound, p->cpuset) && hwloc_bitmap_isincluded(last, p->cpuset);
    hwloc_bitmap_free(bound);
    hwloc_bitmap_free(last);
    return ok;
}

void ss_topo_format(const ss_placement_t *p, char *buf, size_t size)
{
    char pack[32] = "", numa[32] = "";
    if (p->package_os >= 0)
        snprintf(pack, sizeof(pack), " package %d", p->package_os);
    if (p->numa_os >= 0)
        snprintf(numa, sizeof(numa), " numa %d", p->numa_os);
    if (!p->pinned || p->cpuset == NULL) {
        snprintf(buf, size, "not bound");
    } else if (p->pu_os >= 0) {
        if (p->core_os >= 0)
            snprintf(buf, size, "core %d (PU %d)%s%s", p->core_os, p->pu_os, numa, pack);
        else
            snprintf(buf, size, "PU %d%s%s", p->pu_os, numa, pack);
    } else {
        char *s = NULL;
        if (hwloc_bitmap_list_asprintf(&s, p->cpuset) < 0)
            s = NULL;
        snprintf(buf, size, "%s (PUs %s)%s", p->numa_os >= 0 ? numa + 1 : "anywhere", s ? s : "?",
                 pack);
        free(s);
    }
}

void ss_topo_print(FILE *fp, int rank, const ss_placement_t *p, int n)
{
    char line[256];
    for (int i = 0; i < n; i++) {
        ss_topo_format(&p[i], line, sizeof(line));
        fprintf(fp, "rank %d worker %d: %s\n", rank, p[i].worker, line);
    }
    fflush(fp);
}

/*
 * step.c -- record steps (ss_step.h): the program's steps, which of them a
 * run turns on, their preparation against the job, and each worker's
 * chains (one per input, nearest the file first).
 *
 * The registry is set once by ss_main, before any parsing, and read-only
 * after it; a step's options live in the run's ss_common_opts_t (step_opts,
 * step_on, by registry index). Chains belong to one worker thread.
 */
#define _GNU_SOURCE /* qsort_r */
#include <stdlib.h>
#include <string.h>

#include "../plan/plan.h"
#include "steps.h"

static const ss_step_t *registry[SS_STEPS_MAX]; /* by order: nearest the file first */
static int n_registry;

int ss_steps_register(const ss_step_t *const *steps, int n)
{
    if (n > SS_STEPS_MAX) {
        fprintf(stderr, "seqshard: %d steps registered, at most %d\n", n, SS_STEPS_MAX);
        return -1;
    }
    n_registry = 0;
    for (int i = 0; i < n; i++) { /* insertion by order: the chain's order is the table's */
        int j = n_registry++;
        while (j > 0 && registry[j - 1]->order > steps[i]->order) {
            registry[j] = registry[j - 1];
            j--;
        }
        registry[j] = steps[i];
    }
    ss_steps_build_opts();
    return 0;
}

int ss_steps_n(void)
{
    return n_registry;
}

const ss_step_t *ss_steps_get(int i)
{
    return i >= 0 && i < n_registry ? registry[i] : NULL;
}

int ss_steps_find(const char *name)
{
    for (int i = 0; name && i < n_registry; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return i;
    return -1;
}

void *ss_steps_opts(ss_common_opts_t *co, int i)
{
    static char none; /* what a step without options has for them: never freed */
    if (!registry[i]->opts_new)
        return co->step_opts[i] = &none;
    if (!co->step_opts[i] && !(co->step_opts[i] = registry[i]->opts_new()))
        fprintf(stderr, "seqshard: out of memory reading --%s's options\n", registry[i]->name);
    return co->step_opts[i];
}

void ss_steps_opts_free(ss_common_opts_t *co)
{
    for (int i = 0; i < n_registry; i++) {
        if (registry[i]->opts_free)
            registry[i]->opts_free(co->step_opts[i]);
        co->step_opts[i] = NULL;
    }
}

/* ---- the job's chain ---- */

int ss_job_n_steps(const ss_job_t *job)
{
    const ss_common_opts_t *co = ss_job_opts(job);
    int n = 0;
    for (int i = 0; i < n_registry; i++)
        n += co->step_on[i] != 0;
    return n;
}

const ss_step_t *ss_job_step(const ss_job_t *job, int k, const void **sopts)
{
    const ss_common_opts_t *co = ss_job_opts(job);
    for (int i = 0; i < n_registry; i++)
        if (co->step_on[i] && k-- == 0) {
            if (sopts)
                *sopts = co->step_opts[i];
            return registry[i];
        }
    return NULL;
}

/* A step reads its input again around each query: a stream cannot be read twice. */
static int check_streams(const ss_job_t *job, const ss_step_t *s)
{
    const ss_io_inputs_t *in = ss_job_inputs(job);
    for (int i = 0; i < in->n; i++)
        if (strcmp(in->paths[i], "-") == 0) {
            ss_error("-: --%s reads its input through the index, which standard input has "
                     "not; give a BAM or CRAM file with its index",
                     s->name);
            return -1;
        }
    return 0;
}

int ss_job_steps_prepare(ss_job_t *job)
{
    ss_step_reach_t sum = {0, 0}, *total = &sum;
    const void *so;
    const ss_step_t *s;
    for (int k = 0; (s = ss_job_step(job, k, &so)); k++) {
        ss_step_reach_t r = {0, 0};
        if (check_streams(job, s) < 0 || (s->prepare && s->prepare(so, job, &r) < 0))
            return -1;
        if (r.max_shift < 0 || r.halo < r.max_shift) {
            ss_error("--%s: its reach is inconsistent (halo %lld < max shift %lld); this is a "
                     "bug in the step",
                     s->name, (long long)r.halo, (long long)r.max_shift);
            return -1;
        }
        /* a step behind another reads the other's output around its own queries */
        total->max_shift += r.max_shift;
        total->halo += r.halo;
    }
    ss_job_set_step_reach(job, sum);
    return 0;
}

int ss_job_counter_names(const ss_job_t *job, const char *const *kernel_names, const char **out,
                         int max)
{
    int n = 0;
    for (; kernel_names && kernel_names[n] && n < max; n++)
        out[n] = kernel_names[n];
    const ss_step_t *s;
    for (int k = 0; (s = ss_job_step(job, k, NULL)); k++)
        for (int c = 0; s->counter_names && s->counter_names[c] && n < max; c++)
            out[n++] = s->counter_names[c];
    out[n < max ? n : max - 1] = NULL;
    return n;
}

/* ---- a worker's chains ---- */

struct ss_chain_s {
    int n_inputs, n_steps, first_counter;
    const ss_step_t *steps[SS_STEPS_MAX];
    const void *sopts[SS_STEPS_MAX];
    ss_source_t **src; /* [n_inputs * n_steps]: input i's sources, nearest the file first */
};

void ss_chain_close(ss_chain_t *c)
{
    if (!c)
        return;
    for (int i = 0; c->src && i < c->n_inputs * c->n_steps; i++)
        c->steps[i % c->n_steps]->close(c->src[i]);
    free(c->src);
    free(c);
}

/* Input i's chain, in front of its file in rd. 0, or -1 after ss_error(). */
static int open_input(ss_chain_t *c, const ss_job_t *job, ss_reader_t *rd, int i, hts_pos_t reach)
{
    ss_source_t *inner = ss_reader_file_source(rd, i);
    for (int k = 0; k < c->n_steps; k++)
        if (!(inner = c->src[i * c->n_steps + k] = c->steps[k]->open(c->sopts[k], job, inner)))
            return -1;
    if (ss_reader_set_front(rd, i, inner, reach) < 0) {
        ss_error("out of memory starting the steps of %s", ss_reader_path(rd, i));
        return -1;
    }
    return 0;
}

ss_chain_t *ss_chain_open(const ss_job_t *job, ss_reader_t *rd, hts_pos_t reach, int first_counter)
{
    int n_steps = ss_job_n_steps(job);
    if (n_steps == 0)
        return NULL;
    ss_chain_t *c = calloc(1, sizeof(*c));
    int n = ss_reader_n(rd);
    if (!c || !(c->src = calloc((size_t)n * (size_t)n_steps, sizeof(*c->src)))) {
        free(c);
        ss_error("out of memory starting the steps");
        return NULL;
    }
    c->n_inputs = n, c->n_steps = n_steps, c->first_counter = first_counter;
    for (int k = 0; k < n_steps; k++)
        c->steps[k] = ss_job_step(job, k, &c->sopts[k]);
    for (int i = 0; i < n; i++)
        if (open_input(c, job, rd, i, reach) < 0) {
            ss_chain_close(c);
            return NULL;
        }
    return c;
}

void ss_chain_shard(ss_chain_t *c, const ss_shard_t *sh)
{
    for (int i = 0; c && i < c->n_inputs * c->n_steps; i++)
        if (c->steps[i % c->n_steps]->shard)
            c->steps[i % c->n_steps]->shard(c->src[i], sh->beg, sh->end);
}

void ss_chain_counts(const ss_chain_t *c, uint64_t *counts, int n_counts)
{
    for (int i = 0; c && i < c->n_inputs; i++) {
        int at = c->first_counter;
        for (int k = 0; k < c->n_steps; k++) {
            const ss_step_t *s = c->steps[k];
            uint64_t mine[SS_STEP_COUNTERS] = {0};
            int n = 0;
            while (s->counter_names && n < SS_STEP_COUNTERS && s->counter_names[n])
                n++;
            if (s->counts)
                s->counts(c->src[i * c->n_steps + k], mine);
            for (int j = 0; j < n && at + j < n_counts; j++)
                counts[at + j] += mine[j];
            at += n;
        }
    }
}

/* ---- the order a step hands records out in ---- */

static int by_position(const void *pa, const void *pb, void *ctx)
{
    bam1_t *const *recs = ctx;
    int ia = *(const int *)pa, ib = *(const int *)pb;
    const bam1_t *a = recs[ia], *b = recs[ib];
    if (a->core.pos != b->core.pos)
        return a->core.pos < b->core.pos ? -1 : 1;
    if (bam_is_rev(a) != bam_is_rev(b))
        return bam_is_rev(a) ? 1 : -1;
    return (ia > ib) - (ia < ib);
}

void ss_step_sort(bam1_t *const *recs, int *order, int n)
{
    if (n > 1)
        qsort_r(order, (size_t)n, sizeof(*order), by_position, (void *)recs);
}

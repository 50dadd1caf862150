/*
 * rl_opts.c -- the realign step's options: defaults in one place, each
 * option, the checks once they are read and once the job is open, and the
 * halo they imply. The framework parses them wherever the step is (--realign
 * on any kernel that reads records, and `seqshard realign`). Main thread.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../../io/ss_ref.h"
#include "realign.h"

enum { RL_OPT_KNOWN = 0x2001, RL_OPT_MAX_MOVE, RL_OPT_MAX_ISIZE, RL_OPT_MAX_WINDOW };

void rl_opts_default(rl_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->max_move = 200;
    o->max_isize = 3000;
    o->max_window = RL_DEFAULT_WINDOW;
}

void rl_opts_free(void *sopts)
{
    rl_opts_t *o = sopts;
    if (!o)
        return;
    for (int i = 0; i < o->n_known; i++)
        free(o->known[i]);
    free(o->known);
    free(o);
}

/* The step's options, besides --realign. */
const ss_opt_t rl_step_opts[] = {
    {RL_OPT_KNOWN, 0, "known", "FILE", "indexed VCF/BCF of known indels (up to 2 files)",
     SS_VALUES_FILE},
    {RL_OPT_MAX_MOVE, 0, "max-move", "INT",
     "a read's POS moves at most INT bp, else it keeps its alignment [200]", NULL},
    {RL_OPT_MAX_ISIZE, 0, "max-isize", "INT",
     "reads whose mate is farther (or on another contig, or unmapped) keep their alignment "
     "[3000]",
     NULL},
    {RL_OPT_MAX_WINDOW, 0, "max-window", "INT",
     "windows of targets longer than INT bp are skipped and counted in --report [500]", NULL},
    SS_OPT_END};

static int add_known(rl_opts_t *o, const char *path, const char *cmd)
{
    if (o->n_known == 2) {
        fprintf(stderr,
                "seqshard %s: --known '%s': at most 2 known-sites files; merge "
                "them with bcftools concat\n",
                cmd, path);
        return -1;
    }
    char **k = realloc(o->known, (size_t)(o->n_known + 1) * sizeof(*k));
    if (!k)
        return -1;
    o->known = k;
    return (o->known[o->n_known++] = strdup(path)) ? 0 : -1;
}

int rl_opt(void *sopts, int key, const char *arg, ss_common_opts_t *co, const char *cmd)
{
    rl_opts_t *o = sopts;
    switch (key) {
    case RL_OPT_KNOWN: /* read, with its index: part of the run's identity */
        return add_known(o, arg, cmd) < 0 || ss_common_add_read(co, arg, "the --known VCF", 1) < 0
                   ? -1
                   : 0;
    case RL_OPT_MAX_MOVE:
        return ss_opt_int("--max-move", arg, 0, 100000, &o->max_move);
    case RL_OPT_MAX_ISIZE:
        return ss_opt_int("--max-isize", arg, 0, 1000000, &o->max_isize);
    case RL_OPT_MAX_WINDOW:
        return ss_opt_int("--max-window", arg, 1, 100000, &o->max_window);
    }
    return -1;
}

void *rl_opts_new(void)
{
    rl_opts_t *o = calloc(1, sizeof(*o));
    if (o)
        rl_opts_default(o);
    return o;
}

int rl_check(const void *sopts, ss_common_opts_t *co, const char *cmd)
{
    (void)sopts;
    if (!co->reference) {
        fprintf(stderr,
                "seqshard %s: realignment needs the reference the reads were aligned "
                "to (haplotypes are built from it): give %s ref.fa\n",
                cmd, co->ref_option);
        return -1;
    }
    return 0;
}

static int check_reference(const ss_job_t *job, const char *fasta)
{
    ss_ref_mismatch_t m;
    const sam_hdr_t *h = ss_job_header(job);
    int r = ss_ref_check_contigs(fasta, h, 0, &m);
    if (r == -2)
        return -1; /* out of memory: said */
    if (r < 0) {
        ss_error("%s: cannot load its .fai; run samtools faidx %s", fasta, fasta);
        return -1;
    }
    if (r > 0) {
        char buf[512];
        ss_ref_describe_mismatch(fasta, h, ss_job_inputs(job)->paths[0], &m, buf, sizeof(buf));
        ss_error("%s; give the reference the input was aligned to", buf);
        return -1;
    }
    return 0;
}

int rl_prepare(const void *sopts, const ss_job_t *job, ss_step_reach_t *reach)
{
    const rl_opts_t *o = sopts;
    const char *fasta = ss_job_opts(job)->reference;
    if (check_reference(job, fasta) < 0 || rl_known_check(o, ss_job_header(job), fasta) < 0)
        return -1;
    reach->max_shift = o->max_move;
    reach->halo = rl_halo(o);
    return 0;
}

/*
 * The halo: a read the shard owns moves at most max_move; the windows that
 * decide it, or its mate (within max_isize), start within a read span of it,
 * and the cluster scan that defines such a window reaches max_window + RL_GAP
 * further each way; the reads of a window reach one more span past it.
 */
hts_pos_t rl_halo(const rl_opts_t *o)
{
    return (hts_pos_t)o->max_move + o->max_isize + 2 * ((hts_pos_t)o->max_window + RL_GAP) +
           3 * RL_SPAN_MAX + 64;
}

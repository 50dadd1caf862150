/*
 * shift.c -- a test-only kernel that moves records: each mapped record's POS
 * goes left by hash(read name) mod 150 bases (clipped at the contig start),
 * nothing else changes. It exists to test the framework's contract for
 * records that move (ownership by final position, the halo, the sort), and
 * is registered only in the test program (tests/seqshard_test.c).
 *
 *   seqshard-test shift [-O sam|bam|cram] [-o FILE] [-@ N] [--shard-size S] in.bam
 */
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework.h"

#define SHIFT_MAX 150

typedef struct {
    ss_out_format_t format;
} shift_opts_t;

typedef struct {
    ss_reader_t *rd;
    bam1_t *b;
} shift_worker_t;

static const ss_opt_t shift_opts[] = {
    {'T', 'T', "reference", "FILE", "FASTA for CRAM input or output", SS_VALUES_FILE},
    SS_OPT_END};

static const ss_opt_group_t shift_groups[] = {{"Options", shift_opts, NULL},
                                              {"Output options", ss_opts_output_records, NULL},
                                              {"Framework options", ss_opts_run, NULL},
                                              {NULL, NULL, NULL}};

static const ss_cmd_t shift_cmd = {
    .name = "shift",
    .synopsis = "[-O sam|bam|cram] [-o FILE] in.bam",
    .summary = "a test kernel that moves every mapped read left by hash(name)",
    .description = "Moves every mapped read left by hash(name) mod 150 (a test kernel).",
    .groups = shift_groups};

static void shift_usage(FILE *fp)
{
    ss_cmd_help(&shift_cmd, fp);
}

static int shift_option(void *ctx, int key, const char *arg)
{
    (void)key; /* -T, the only one */
    return ss_opt_string(&((ss_common_opts_t *)ctx)->reference, arg);
}

static int shift_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    shift_opts_t *o = calloc(1, sizeof(*o));
    if (!(*kopts = o))
        return SS_EXIT_USAGE;
    int r = ss_cmd_parse(&shift_cmd, argc, argv, co, shift_option, co);
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    o->format = ss_out_format_from(co, SS_FMT_SAM);
    for (int i = optind; i < argc; i++)
        if (ss_common_add_input(co, argv[i]) < 0)
            return SS_EXIT_USAGE;
    co->unplaced = 1;
    return co->n_inputs == 1 ? 0 : SS_EXIT_USAGE;
}

/* FNV-1a of the read name: mates move together, any shard computes the same. */
static hts_pos_t shift_of(const bam1_t *b)
{
    uint32_t h = 2166136261u;
    for (const char *p = bam_get_qname(b); *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return (hts_pos_t)(h % SHIFT_MAX);
}

static int shift_prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    const shift_opts_t *o = kopts;
    (void)run;
    out->format = o->format;
    out->sam_header = 1;
    out->max_shift = SHIFT_MAX;
    out->halo = SHIFT_MAX;
    if (!(out->header = sam_hdr_dup(ss_job_header(job)))) {
        ss_error("out of memory copying the header");
        return -1;
    }
    return 0;
}

static int shift_worker_init(void **ws, const void *kopts, const void *run, const ss_job_t *job,
                             ss_reader_t *rd, int id)
{
    (void)kopts, (void)run, (void)job, (void)id;
    shift_worker_t *w = calloc(1, sizeof(*w));
    if (!(*ws = w) || !(w->b = bam_init1())) {
        ss_error("out of memory starting a shift worker");
        return -1;
    }
    w->rd = rd;
    return 0;
}

/* Read the shard and its halo; write every record moved. The framework keeps the shard's own. */
static int shift_process(void *ws, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    shift_worker_t *w = ws;
    ss_source_t *src = ss_reader_source(w->rd, 0);
    if (ss_source_query(src, sh->tid, sh->read_beg, sh->read_end) < 0)
        return -1;
    int r;
    while ((r = ss_source_next(src, w->b)) >= 0) {
        bam1_t *b = w->b;
        st->reads++;
        if (b->core.tid >= 0) {
            hts_pos_t pos = b->core.pos - shift_of(b);
            b->core.pos = pos > 0 ? pos : 0;
            b->core.bin = hts_reg2bin(b->core.pos, bam_endpos(b), 14, 5);
        }
        if (ss_out_record(out, b) < 0)
            return -1;
    }
    return r < -1 ? -1 : 0;
}

static void shift_worker_destroy(void *ws)
{
    shift_worker_t *w = ws;
    if (w && w->b)
        bam_destroy1(w->b);
    free(w);
}

const ss_kernel_t ss_kernel_test_shift = {
    .name = "shift",
    .summary = "test kernel: move every read left by hash(name) mod 150",
    .usage = shift_usage,
    .parse = shift_parse,
    .opts_free = free,
    .prepare = shift_prepare,
    .worker_init = shift_worker_init,
    .process = shift_process,
    .worker_destroy = shift_worker_destroy,
};

/*
 * shift.c -- a test-only record step that moves and re-flags records: each
 * mapped record's POS goes left by hash(read name) mod 150 bases (clipped at
 * the contig start), and the records whose hash is a multiple of 5 (after
 * dividing by 256) get the duplicate flag; nothing else changes. It exists
 * to test the framework's contract for steps apart from any real kernel:
 * chained in front of view, pileup and depth (`--shift`), and as the command
 * `shift` (the step in front of the record writer), whose output, indexed
 * and read by the same kernel, must give the same bytes. Registered only in
 * the test program (tests/seqshard_test.c).
 *
 *   seqshard-test shift [-O sam|bam|cram] [-o FILE] [-@ N] [--shard-size S] in.bam
 *   seqshard-test pileup --shift -f ref.fa in.bam
 */
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework_extra.h"

#define SHIFT_MAX 150

/* FNV-1a of the read name: mates move together, any shard computes the same. */
static uint32_t name_hash(const bam1_t *b)
{
    uint32_t h = 2166136261u;
    for (const char *p = bam_get_qname(b); *p; p++)
        h = (h ^ (uint8_t)*p) * 16777619u;
    return h;
}

static void transform(void *ctx, bam1_t *b)
{
    (void)ctx;
    if (b->core.tid < 0)
        return;
    uint32_t h = name_hash(b);
    hts_pos_t pos = b->core.pos - (hts_pos_t)(h % SHIFT_MAX);
    b->core.pos = pos > 0 ? pos : 0;
    b->core.bin = hts_reg2bin(b->core.pos, bam_endpos(b), 14, 5);
    if ((h >> 8) % 5 == 0)
        b->core.flag |= BAM_FDUP;
}

/* ---- the step ---- */

typedef struct {
    ss_source_t src; /* first: a ss_source_t * is a shift_source_t * */
    ss_source_t *inner;
    ss_step_recs_t *recs;
} shift_source_t;

/* A record moves left only: the ones that end up in [beg, end) start before end + SHIFT_MAX. */
static int shift_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    shift_source_t *s = (shift_source_t *)src;
    hts_pos_t hi = end < HTS_POS_MAX - SHIFT_MAX ? end + SHIFT_MAX : HTS_POS_MAX;
    return ss_step_recs_load(s->recs, s->inner, tid, beg, end, beg, hi, transform, NULL);
}

static int shift_next(ss_source_t *src, bam1_t *b)
{
    return ss_step_recs_next(((shift_source_t *)src)->recs, b);
}

static void shift_close(ss_source_t *src)
{
    shift_source_t *s = (shift_source_t *)src;
    if (s)
        ss_step_recs_destroy(s->recs);
    free(s);
}

static ss_source_t *shift_open(const void *sopts, const ss_job_t *job, ss_source_t *inner)
{
    (void)sopts, (void)job;
    shift_source_t *s = calloc(1, sizeof(*s));
    if (!s || !(s->recs = ss_step_recs_init())) {
        free(s);
        ss_error("out of memory starting the shift step");
        return NULL;
    }
    s->src = (ss_source_t){.query = shift_query, .next = shift_next, .name = inner->name};
    s->inner = inner;
    return &s->src;
}

static int shift_prepare(const void *sopts, const ss_job_t *job, ss_step_reach_t *reach)
{
    (void)sopts, (void)job;
    *reach = (ss_step_reach_t){SHIFT_MAX, SHIFT_MAX};
    return 0;
}

const ss_step_t ss_step_test_shift = {
    .name = "shift",
    .help = "move every read left by hash(name) mod 150 and mark some duplicates (a test step)",
    .order = 30,
    .title = "Test step",
    .prepare = shift_prepare,
    .open = shift_open,
    .close = shift_close,
};

/* ---- the command: the step in front of the record writer ---- */

static const ss_opt_t shift_opts[] = {
    {'T', 'T', "reference", "FILE", "FASTA for CRAM input or output", SS_VALUES_FILE}, SS_OPT_END};

static const ss_opt_group_t shift_groups[] = {{"Options", shift_opts, NULL},
                                              {"Output options", ss_opts_output_records, NULL},
                                              {"Framework options", ss_opts_run, NULL},
                                              {NULL, NULL, NULL}};

static const ss_cmd_t shift_cmd = {
    .name = "shift",
    .synopsis = "[-O sam|bam|cram] [-o FILE] in.bam",
    .summary = "a test command: the shift step in front of the record writer",
    .description = "Moves every mapped read left by hash(name) mod 150 (a test step).",
    .groups = shift_groups,
    .steps = 1,
    .step = "shift"};

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
    ss_out_format_t *fmt = calloc(1, sizeof(*fmt));
    if (!(*kopts = fmt))
        return SS_EXIT_USAGE;
    int r = ss_cmd_parse(&shift_cmd, argc, argv, co, shift_option, co);
    if (r != 0)
        return r > 0 ? -1 : SS_EXIT_USAGE;
    *fmt = ss_out_format_from(co, SS_FMT_SAM);
    for (int i = optind; i < argc; i++)
        if (ss_common_add_input(co, argv[i]) < 0)
            return SS_EXIT_USAGE;
    return co->n_inputs == 1 ? 0 : SS_EXIT_USAGE;
}

static int shift_cmd_prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    (void)run;
    out->format = *(const ss_out_format_t *)kopts;
    out->sam_header = 1;
    if (!(out->header = sam_hdr_dup(ss_job_header(job)))) {
        ss_error("out of memory copying the header");
        return -1;
    }
    return 0;
}

static int shift_worker_init(void **ws, const void *kopts, const void *run, const ss_job_t *job,
                             ss_reader_t *rd, int id)
{
    (void)kopts, (void)run, (void)id;
    return (*ws = ss_step_writer_init(job, rd)) ? 0 : -1;
}

static int shift_process(void *ws, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    return ss_step_writer_shard(ws, sh, out, st);
}

static void shift_worker_destroy(void *ws)
{
    ss_step_writer_destroy(ws);
}

const ss_kernel_t ss_kernel_test_shift = {
    .name = "shift",
    .summary = "test command: move every read left by hash(name) mod 150",
    .usage = shift_usage,
    .parse = shift_parse,
    .opts_free = free,
    .prepare = shift_cmd_prepare,
    .worker_init = shift_worker_init,
    .process = shift_process,
    .worker_destroy = shift_worker_destroy,
    .unplaced = 1,
};

/*
 * test_step.c -- record steps (framework/step/step.c, step_cmd.c): the registry
 * keeps the chain order whatever the table's; a step's options join a
 * command that reads records, are refused without its --NAME, and a command
 * that is a step has it on without the flag; a worker's chain stands in
 * front of the file (the kernel reads the outer step), each step's counters
 * land after the kernel's, counted per shard; ss_step_sort is samtools
 * sort's order.
 */
#include <sys/stat.h>

#include "../framework/step/steps.h"
#include "ss_testutil.h"

/* ---- two test steps: "tag" adds 1 to a counter per record; "late" does nothing ---- */

typedef struct {
    ss_source_t src;
    ss_source_t *inner;
    uint64_t seen;
} tag_source_t;

static int tag_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    return ss_source_query(((tag_source_t *)src)->inner, tid, beg, end);
}

static int tag_next(ss_source_t *src, bam1_t *b)
{
    tag_source_t *s = (tag_source_t *)src;
    int r = ss_source_next(s->inner, b);
    if (r >= 0) {
        s->seen++;
        b->core.qual = 7; /* what the kernel sees is the step's record */
    }
    return r;
}

static ss_source_t *tag_open(const void *so, const ss_job_t *job, ss_source_t *inner)
{
    (void)so, (void)job;
    tag_source_t *s = calloc(1, sizeof(*s));
    s->src = (ss_source_t){tag_query, tag_next, inner->name};
    s->inner = inner;
    return &s->src;
}

static void tag_close(ss_source_t *s)
{
    free(s);
}

static void tag_shard(ss_source_t *src, hts_pos_t beg, hts_pos_t end)
{
    (void)beg, (void)end;
    ((tag_source_t *)src)->seen = 0;
}

static void tag_counts(const ss_source_t *src, uint64_t *out)
{
    out[0] += ((const tag_source_t *)src)->seen;
}

static int level_seen;
static void *opts_new(void)
{
    return calloc(1, sizeof(int));
}

static int tag_opt(void *so, int key, const char *arg, ss_common_opts_t *co, const char *cmd)
{
    (void)key, (void)co, (void)cmd;
    *(int *)so = atoi(arg);
    level_seen = *(int *)so;
    return 0;
}

static const ss_opt_t tag_opts[] = {{0x2101, 0, "level", "INT", "a level", NULL}, SS_OPT_END};
static const char *const tag_names[] = {"records_tagged", NULL};

static const ss_step_t tag_step = {.name = "tag",
                                   .help = "tag records",
                                   .order = 20,
                                   .title = "Tagging",
                                   .opts = tag_opts,
                                   .opts_new = opts_new,
                                   .opts_free = free,
                                   .opt = tag_opt,
                                   .open = tag_open,
                                   .close = tag_close,
                                   .counter_names = tag_names,
                                   .shard = tag_shard,
                                   .counts = tag_counts};

static const ss_step_t late_step = {.name = "late",
                                    .help = "nothing",
                                    .order = 30,
                                    .title = "Late",
                                    .opts_new = opts_new,
                                    .opts_free = free,
                                    .open = tag_open,
                                    .close = tag_close};
static const ss_step_t early_step = {.name = "early",
                                     .help = "nothing",
                                     .order = 10,
                                     .title = "Early",
                                     .opts_new = opts_new,
                                     .opts_free = free,
                                     .open = tag_open,
                                     .close = tag_close};

static void test_registry_order(void)
{
    const ss_step_t *table[] = {&late_step, &tag_step, &early_step};
    SS_EQ_FATAL(ss_steps_register(table, 3), 0);
    SS_EQ(ss_steps_n(), 3);
    CU_ASSERT_STRING_EQUAL(ss_steps_get(0)->name, "early");
    CU_ASSERT_STRING_EQUAL(ss_steps_get(1)->name, "tag");
    CU_ASSERT_STRING_EQUAL(ss_steps_get(2)->name, "late");
    SS_EQ(ss_steps_find("late"), 2);
    SS_EQ(ss_steps_find("none"), -1);
}

/* ---- the command line ---- */

static const ss_opt_group_t groups[] = {{"Framework options", ss_opts_run, NULL},
                                        {NULL, NULL, NULL}};
static const ss_cmd_t reader_cmd = {
    .name = "reader", .synopsis = "in.bam", .summary = "s", .groups = groups, .steps = 1};
static const ss_cmd_t tag_cmd = {.name = "tagcmd",
                                 .synopsis = "in.bam",
                                 .summary = "s",
                                 .groups = groups,
                                 .steps = 1,
                                 .step = "tag"};
static const ss_cmd_t plain_cmd = {
    .name = "plain", .synopsis = "in.bam", .summary = "s", .groups = groups};
/* The kernel the jobs are opened for (reader_cmd's). */
static const ss_kernel_t reader_kernel = {.name = "reader"};

static int no_kernel_opts(void *ctx, int key, const char *arg)
{
    (void)ctx, (void)key, (void)arg;
    return -1;
}

static int parse(const ss_cmd_t *cmd, ss_common_opts_t *co, int argc, char **argv)
{
    ss_common_opts_init(co);
    return ss_cmd_parse(cmd, argc, argv, co, no_kernel_opts, NULL);
}

static void test_options(void)
{
    const ss_step_t *table[] = {&tag_step, &late_step};
    SS_EQ_FATAL(ss_steps_register(table, 2), 0);
    ss_common_opts_t co;
    char *a1[] = {"reader", "--tag", "--level", "4", "in.bam"};
    SS_EQ(parse(&reader_cmd, &co, 5, a1), 0);
    SS_EQ(co.step_on[0], 1);
    SS_EQ(co.step_on[1], 0);
    SS_EQ(level_seen, 4);
    ss_common_opts_free(&co);

    char *a2[] = {"reader", "--level", "4", "in.bam"}; /* without --tag: refused */
    SS_EQ(parse(&reader_cmd, &co, 4, a2), -1);
    ss_common_opts_free(&co);

    char *a3[] = {"tagcmd", "--level", "2", "in.bam"}; /* the command is the step */
    SS_EQ(parse(&tag_cmd, &co, 4, a3), 0);
    SS_EQ(co.step_on[0], 1);
    ss_common_opts_free(&co);
    char *a4[] = {"tagcmd", "--tag", "in.bam"}; /* ... and has no --tag */
    SS_EQ(parse(&tag_cmd, &co, 3, a4), -1);
    ss_common_opts_free(&co);

    char *a5[] = {"plain", "--tag", "in.bam"}; /* a command that does not read records */
    SS_EQ(parse(&plain_cmd, &co, 3, a5), -1);
    ss_common_opts_free(&co);
}

static void test_help_lists_steps(void)
{
    const ss_step_t *table[] = {&tag_step};
    SS_EQ_FATAL(ss_steps_register(table, 1), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    ss_cmd_help(&reader_cmd, fp);
    fclose(fp);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "Tagging:"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "--level INT"));
    /* the steps' groups come before the framework's */
    CU_ASSERT(strstr(buf, "Tagging:") < strstr(buf, "Framework options:"));
    free(buf);
}

/* ---- a worker's chain over a real file ---- */

static char dir_path[256], bam_path[320];

static int setup(void)
{
    const char *names[] = {"a"};
    hts_pos_t lens[] = {10000};
    ss_test_read_t reads[50];
    for (int i = 0; i < 50; i++)
        reads[i] = (ss_test_read_t){0, i * 150, 100};
    snprintf(dir_path, sizeof(dir_path), "%s", ss_test_path("step", ".d"));
    if (mkdir(dir_path, 0700) != 0)
        return -1;
    snprintf(bam_path, sizeof(bam_path), "%s/in.bam", dir_path);
    return ss_test_write_bam(bam_path, 1, names, lens, reads, 50, 0);
}

static int teardown(void)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir_path);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_chain_in_front(void)
{
    const ss_step_t *table[] = {&tag_step};
    SS_EQ_FATAL(ss_steps_register(table, 1), 0);
    ss_common_opts_t co;
    char *argv[] = {"reader", "--tag"};
    SS_EQ_FATAL(parse(&reader_cmd, &co, 2, argv), 0);
    SS_EQ_FATAL(ss_common_add_input(&co, bam_path), 0);
    ss_job_t *job = ss_job_open(&co, &reader_kernel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    SS_EQ(ss_job_steps_prepare(job), 0);
    SS_EQ(ss_job_n_steps(job), 1);
    const char *names[4] = {NULL};
    const char *kernel_names[] = {"mine", NULL};
    SS_EQ(ss_job_counter_names(job, kernel_names, names, 4), 2);
    CU_ASSERT_STRING_EQUAL(names[1], "records_tagged");

    ss_reader_t *rd = ss_reader_init(ss_job_inputs(job));
    ss_chain_t *ch = ss_chain_open(job, rd, 0, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ch);
    CU_ASSERT(ss_reader_source(rd, 0) != ss_reader_file_source(rd, 0));
    ss_shard_t sh = {.idx = 0, .tid = 0, .beg = 0, .end = 3000};
    SS_EQ_FATAL(ss_reader_begin(rd), 0);
    ss_chain_shard(ch, &sh);
    ss_source_t *src = ss_reader_source(rd, 0);
    bam1_t *b = bam_init1();
    int n = 0;
    SS_EQ(ss_source_query(src, 0, 0, 3000), 0);
    while (ss_source_next(src, b) >= 0) {
        SS_EQ(b->core.qual, 7);
        n++;
    }
    ss_reader_end(rd);
    uint64_t counts[SS_KERNEL_COUNTERS] = {0};
    ss_chain_counts(ch, counts, SS_KERNEL_COUNTERS);
    SS_EQ(counts[0], 0); /* the kernel's own */
    SS_EQ(counts[1], n); /* the step's, after it */
    SS_EQ(n, 20);        /* reads at 0, 150, ... 2850 */
    bam_destroy1(b);
    ss_chain_close(ch);
    ss_reader_destroy(rd);
    ss_job_close(job);
    ss_common_opts_free(&co);
}

/* ---- a query's records (step_recs.c) ---- */

/* Moves reads with an odd position 200 bases left (a reverse read: 100). */
static void move_left(void *ctx, bam1_t *b)
{
    (void)ctx;
    if (b->core.pos % 2)
        b->core.pos -= bam_is_rev(b) ? 100 : 200;
}

static void test_recs(void)
{
    ss_common_opts_t co;
    ss_common_opts_init(&co);
    SS_EQ_FATAL(ss_common_add_input(&co, bam_path), 0);
    ss_job_t *job = ss_job_open(&co, &reader_kernel);
    CU_ASSERT_PTR_NOT_NULL_FATAL(job);
    ss_reader_t *rd = ss_reader_init(ss_job_inputs(job));
    ss_step_recs_t *p = ss_step_recs_init();
    SS_EQ_FATAL(ss_reader_begin(rd), 0);
    bam1_t *b = bam_init1();
    /* reads at 0, 150, ... (100 bp, forward): those at odd POS move 200 left */
    SS_EQ(ss_step_recs_load(p, ss_reader_file_source(rd, 0), 0, 1000, 2000, 1000, 2200, move_left,
                            NULL),
          0);
    hts_pos_t prev = -1;
    int n = 0;
    uint64_t id = 0;
    while (ss_step_recs_next(p, b) >= 0) {
        CU_ASSERT(b->core.pos < 2000 && bam_endpos(b) > 1000);
        CU_ASSERT(b->core.pos >= prev); /* sorted */
        SS_EQ(b->id, id++);
        prev = b->core.pos, n++;
    }
    int want = 0; /* the reads whose moved span overlaps the range, from their positions */
    for (hts_pos_t q = 0; q < 7500; q += 150) {
        hts_pos_t f = q % 2 ? q - 200 : q;
        want += f < 2000 && f + 100 > 1000;
    }
    SS_EQ(n, want);
    ss_reader_end(rd);
    bam_destroy1(b);
    ss_step_recs_destroy(p);
    ss_reader_destroy(rd);
    ss_job_close(job);
    ss_common_opts_free(&co);
}

/* ---- the order a step hands records out in ---- */

static void test_sort(void)
{
    bam1_t *recs[4];
    hts_pos_t pos[] = {100, 50, 100, 100};
    int rev[] = {1, 0, 0, 1};
    for (int i = 0; i < 4; i++) {
        recs[i] = bam_init1();
        recs[i]->core.pos = pos[i];
        recs[i]->core.flag = rev[i] ? BAM_FREVERSE : 0;
    }
    int order[] = {0, 1, 2, 3};
    ss_step_sort(recs, order, 4);
    int want[] = {1, 2, 0, 3}; /* POS, forward first, then the index */
    for (int i = 0; i < 4; i++)
        SS_EQ(order[i], want[i]);
    for (int i = 0; i < 4; i++)
        bam_destroy1(recs[i]);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("step", setup, teardown);
    if (!s || !CU_add_test(s, "registry_order", test_registry_order) ||
        !CU_add_test(s, "options", test_options) ||
        !CU_add_test(s, "help_lists_steps", test_help_lists_steps) ||
        !CU_add_test(s, "chain_in_front", test_chain_in_front) ||
        !CU_add_test(s, "recs", test_recs) || !CU_add_test(s, "sort", test_sort))
        return 1;
    return ss_test_run();
}

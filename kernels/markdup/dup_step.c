/*
 * dup_step.c -- duplicate marking as a record step (ss_step.h): `--markdup` in
 * front of any command that reads records, which then reads what
 * `seqshard markdup` would write, in one pass. A query streams its range and
 * the halo through the machine and keeps the records a region query of the
 * marked file returns (those overlapping the range, in file order; -r's
 * duplicates gone). -S and -s are the command's alone: the step marks no
 * other alignments and prints no statistics.
 *
 * A source is owned by one worker thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "markdup.h"

/* The step's options: samtools markdup's, prefixed so no command's own collide. */
enum {
    ST_REMOVE = 0x2100,
    ST_MAX_LENGTH,
    ST_OPTICAL,
    ST_TAG,
    ST_CLEAR,
    ST_MODE,
    ST_INCLUDE_FAILS,
    ST_NO_MULTI_DUP,
    ST_BARCODE_TAG,
    ST_BARCODE_NAME,
    ST_BARCODE_RGX,
    ST_READ_COORDS,
    ST_COORDS_ORDER
};

static const ss_opt_t st_opts[] = {
    {ST_REMOVE, 0, "markdup-remove", NULL, "remove the duplicates (markdup -r)", NULL},
    {ST_MAX_LENGTH, 0, "markdup-max-length", "INT", "max read length (markdup -l) [300]", NULL},
    {ST_OPTICAL, 0, "markdup-optical", "INT", "optical distance, dt tags (markdup -d) [0]", NULL},
    {ST_TAG, 0, "markdup-tag", NULL, "do:Z tags with the original's name (markdup -t)", NULL},
    {ST_CLEAR, 0, "markdup-clear", NULL, "clear earlier duplicate marks first (markdup -c)", NULL},
    {ST_MODE, 0, "markdup-mode", "TYPE", "t (template) or s (sequence), markdup -m [t]", "t s"},
    {ST_INCLUDE_FAILS, 0, "markdup-include-fails", NULL, "include QC-failed reads", NULL},
    {ST_NO_MULTI_DUP, 0, "markdup-no-multi-dup", NULL, "markdup --no-multi-dup", NULL},
    {ST_BARCODE_TAG, 0, "markdup-barcode-tag", "STR", "markdup --barcode-tag", NULL},
    {ST_BARCODE_NAME, 0, "markdup-barcode-name", NULL, "markdup --barcode-name", NULL},
    {ST_BARCODE_RGX, 0, "markdup-barcode-rgx", "STR", "markdup --barcode-rgx", NULL},
    {ST_READ_COORDS, 0, "markdup-read-coords", "STR", "markdup --read-coords", NULL},
    {ST_COORDS_ORDER, 0, "markdup-coords-order", "STR", "markdup --coords-order [txy]", NULL},
    SS_OPT_END};

/* Each step option's key in markdup's own parser (dup_opts.c). */
static const int st_keys[] = {'r',
                              'l',
                              'd',
                              't',
                              'c',
                              'm',
                              DUP_OPT_INCLUDE_FAILS,
                              DUP_OPT_INCLUDE_FAILS + 2,
                              DUP_OPT_INCLUDE_FAILS + 5,
                              DUP_OPT_INCLUDE_FAILS + 6,
                              DUP_OPT_INCLUDE_FAILS + 7,
                              DUP_OPT_INCLUDE_FAILS + 3,
                              DUP_OPT_INCLUDE_FAILS + 4};

static void *st_new(void)
{
    dup_opts_t *o = calloc(1, sizeof(*o));
    if (o)
        o->max_length = 300;
    return o;
}

static int st_opt(void *sopts, int key, const char *arg, ss_common_opts_t *co, const char *cmd)
{
    (void)cmd;
    return dup_apply(sopts, co, st_keys[key - ST_REMOVE], arg);
}

static int st_check(const void *sopts, ss_common_opts_t *co, const char *cmd)
{
    (void)co;
    return dup_check((dup_opts_t *)sopts, cmd) == 0 ? 0 : -1;
}

static int st_prepare(const void *sopts, const ss_job_t *job, ss_step_reach_t *reach)
{
    (void)job;
    reach->max_shift = 0;
    reach->halo = dup_halo(sopts) + ((const dup_opts_t *)sopts)->max_length;
    return 0;
}

typedef struct {
    ss_source_t src; /* first: a ss_source_t * is a st_source_t * */
    const dup_opts_t *o;
    dup_run_t run;
    dup_machine_t *m;
    ss_source_t *inner;
    const sam_hdr_t *h;
    bam1_t **keep; /* the query's records, copies kept across queries */
    int n, cap, cur;
    hts_pos_t beg, end;        /* the query's range */
    int passthrough, deferred; /* the unplaced reads; the inner source's read error */
    hts_pos_t own_beg, own_end, counted_to;
    dup_counts_t counts, scratch;
} st_source_t;

/* A read leaves the machine: kept when a region query of the marked file returns it. */
static int keep_read(void *ctx, bam1_t *b, int owned)
{
    st_source_t *s = ctx;
    (void)owned;
    if (b->core.pos >= s->end || bam_endpos(b) <= s->beg ||
        (s->o->remove_dups && (b->core.flag & BAM_FDUP)))
        return 0;
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 1024;
        bam1_t **k = realloc(s->keep, (size_t)cap * sizeof(*k));
        if (!k)
            goto oom;
        memset(k + s->cap, 0, (size_t)(cap - s->cap) * sizeof(*k));
        s->keep = k, s->cap = cap;
    }
    if (!s->keep[s->n] && !(s->keep[s->n] = bam_init1()))
        goto oom;
    if (!bam_copy1(s->keep[s->n], b))
        goto oom;
    s->n++;
    return 0;
oom:
    ss_error("%s: out of memory holding marked reads; use a smaller --shard-size", s->inner->name);
    return -1;
}

/* The part of [beg, end) this query counts: in the shard's range, not counted before. */
static void counted_range(st_source_t *s, hts_pos_t beg, hts_pos_t end, hts_pos_t *lo,
                          hts_pos_t *hi)
{
    *lo = beg > s->own_beg ? beg : s->own_beg;
    if (*lo < s->counted_to)
        *lo = s->counted_to;
    *hi = end < s->own_end ? end : s->own_end;
    if (*lo >= *hi) {
        *lo = *hi = 0;
        return;
    }
    s->counted_to = *hi;
}

static int st_query(ss_source_t *src, int tid, hts_pos_t beg, hts_pos_t end)
{
    st_source_t *s = (st_source_t *)src;
    s->n = s->cur = s->deferred = 0;
    s->passthrough = tid == SS_IO_UNPLACED;
    if (s->passthrough)
        return ss_source_query(s->inner, tid, beg, end);
    hts_pos_t len = sam_hdr_tid2len(s->h, tid), L = s->o->max_length;
    hts_pos_t hi = end >= len ? end : end + dup_halo(s->o);
    hts_pos_t clo, chi;
    counted_range(s, beg, end, &clo, &chi);
    dup_span_t span = {tid, beg > L ? beg - L : 0, hi, clo, chi};
    dup_stream_t st = {s->o, s->m, s->inner, s->inner->name};
    uint64_t owned = 0;
    int err = 0;
    s->beg = beg, s->end = end;
    int r = dup_stream(&st, &span, &s->counts, NULL, keep_read, s, &owned, &err);
    if (r < -1) { /* the file's fault: the consumer explains it at its next read */
        s->deferred = r;
        return 0;
    }
    return r;
}

/* The unplaced reads pass as samtools passes them: -c clears, -r drops marked ones. */
static int passthrough(st_source_t *s, bam1_t *b)
{
    int r;
    while ((r = ss_source_next(s->inner, b)) >= 0) {
        if (s->o->clear)
            dup_clear_marks(b);
        if (!(s->o->remove_dups && (b->core.flag & BAM_FDUP)))
            break;
    }
    return r;
}

static int st_next(ss_source_t *src, bam1_t *b)
{
    st_source_t *s = (st_source_t *)src;
    if (s->passthrough)
        return passthrough(s, b);
    if (s->deferred) {
        int r = s->deferred;
        s->deferred = 0;
        return r;
    }
    if (s->cur == s->n)
        return -1;
    if (!bam_copy1(b, s->keep[s->cur])) {
        ss_error("out of memory copying a marked read");
        return SS_IO_REPORTED;
    }
    b->id = (uint64_t)s->cur++;
    return 0;
}

static void st_close(ss_source_t *src)
{
    st_source_t *s = (st_source_t *)src;
    if (!s)
        return;
    dup_machine_destroy(s->m);
    for (int i = 0; i < s->cap; i++)
        if (s->keep[i])
            bam_destroy1(s->keep[i]);
    free(s->keep);
    if (s->run.has_coords)
        regfree(&s->run.coords);
    if (s->run.has_barcode)
        regfree(&s->run.barcode);
    free(s);
}

static ss_source_t *st_open(const void *sopts, const ss_job_t *job, ss_source_t *inner)
{
    st_source_t *s = ss_alloc_private(sizeof(*s)); /* written per record */
    if (!s) {
        ss_error("out of memory starting duplicate marking");
        return NULL;
    }
    s->src = (ss_source_t){.query = st_query, .next = st_next, .name = inner->name};
    s->o = sopts, s->inner = inner, s->h = ss_job_header(job);
    if (dup_run_init(&s->run, s->o) < 0 || !(s->m = dup_machine_init(&s->run))) {
        st_close(&s->src);
        return NULL;
    }
    return &s->src;
}

static void st_shard(ss_source_t *src, hts_pos_t beg, hts_pos_t end)
{
    st_source_t *s = (st_source_t *)src;
    s->own_beg = beg, s->own_end = end, s->counted_to = beg;
    s->counts = (dup_counts_t){0};
}

/* In the order of st_counter_names. */
static void st_counts(const ss_source_t *src, uint64_t *out)
{
    const dup_counts_t *c = &((const st_source_t *)src)->counts;
    out[0] += (uint64_t)c->examined;
    out[1] += (uint64_t)c->duplicate;
    out[2] += (uint64_t)c->single_dup;
    out[3] += (uint64_t)(c->optical + c->single_optical);
}

static const char *const st_counter_names[] = {"markdup_examined", "markdup_duplicate_pairs",
                                               "markdup_duplicate_singles", "markdup_optical",
                                               NULL};

const ss_step_t ss_step_markdup = {
    .name = "markdup",
    .help = "mark duplicates, as seqshard markdup does, before the command reads them [off]",
    .order = 10, /* nearest the file: the pipelines mark duplicates before realigning */
    .title = "Duplicate marking",
    .note = "The command then reads the records `seqshard markdup` would write (samtools\n"
            "markdup's), in one pass, nothing written between; each input is marked on its\n"
            "own and must have gone through samtools fixmate -m.",
    .opts = st_opts,
    .opts_new = st_new,
    .opts_free = dup_opts_free,
    .opt = st_opt,
    .check = st_check,
    .prepare = st_prepare,
    .open = st_open,
    .close = st_close,
    .counter_names = st_counter_names,
    .shard = st_shard,
    .counts = st_counts,
};

/*
 * markdup.c -- the `markdup` kernel: each shard loads its range and a halo of
 * DUP_HALO_READS x -l either side (markdup.h says why that suffices), replays
 * samtools markdup's machine over them, and writes the records it owns (POS
 * in its range), in file order; -s's counts are reduced over the run and
 * printed by the finish hook.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework_extra.h"
#include "../../io/ss_diag.h"
#include "markdup.h"

typedef struct {
    const dup_opts_t *o;
    const dup_run_t *run;
    ss_reader_t *rd;
    const sam_hdr_t *h;
    dup_machine_t *m;
    bam1_t *b; /* the unplaced reads' record */
    /* the shard being written (NULL while gathering) */
    ss_out_t *out;
    ss_shard_stats_t *st;
    dup_counts_t c;
} dup_worker_t;

static const ss_reduce_op_t dup_ops[DUP_NCOUNTS] = {SS_REDUCE_SUM};

static int compile(regex_t *re, const char *rgx, const char *opt)
{
    int r = regcomp(re, rgx, REG_EXTENDED);
    if (r != 0) {
        char msg[256];
        regerror(r, re, msg, sizeof(msg));
        ss_error("markdup: %s '%s': %s; give a POSIX extended regular expression", opt, rgx, msg);
        return -1;
    }
    return 0;
}

static void run_free(void *run)
{
    dup_run_t *r = run;
    if (!r)
        return;
    if (r->has_coords)
        regfree(&r->coords);
    if (r->has_barcode)
        regfree(&r->barcode);
    dup_names_destroy(r->names);
    free(r);
}

/* Illumina's UMI: the eighth colon-separated field of the name. */
#define DUP_UMI_RGX "[0-9A-Za-z]+:[0-9]+:[0-9]+:[0-9]+:[0-9]+:[0-9]+:[0-9]+:([!-?A-~]+)"

int dup_run_init(dup_run_t *r, const dup_opts_t *o)
{
    memset(r, 0, sizeof(*r));
    r->o = o;
    if (o->coords_rgx && compile(&r->coords, o->coords_rgx, "--read-coords") < 0)
        return -1;
    r->has_coords = o->coords_rgx != NULL;
    if (o->barcode_name &&
        compile(&r->barcode, o->barcode_rgx ? o->barcode_rgx : DUP_UMI_RGX, "--barcode-rgx") < 0)
        return -1;
    r->has_barcode = o->barcode_name;
    return 0;
}

/* The first paired read (mate mapped) markdup examines, into b: 1, 0 none among the first n. */
static int first_pair(samFile *f, sam_hdr_t *h, bam1_t *b, const dup_opts_t *o, int n)
{
    uint16_t skip = BAM_FSECONDARY | BAM_FSUPPLEMENTARY | BAM_FUNMAP;
    if (!o->include_fails)
        skip |= BAM_FQCFAIL;
    for (int i = 0; i < n && sam_read1(f, h, b) >= 0; i++)
        if (!(b->core.flag & skip) && (b->core.flag & BAM_FPAIRED) && !(b->core.flag & BAM_FMUNMAP))
            return 1;
    return 0;
}

/*
 * Before any work: the input went through samtools fixmate -m, as far as its
 * first pairs tell (MC and ms on the first read markdup compares). A file
 * that cannot be read here is left to the run, which says why. 0, or -1 after
 * ss_error().
 */
static int check_fixmate(const char *path, const char *ref, const dup_opts_t *o)
{
    samFile *f = sam_open(path, "r");
    if (!f)
        return 0;
    if (ref)
        hts_set_fai_filename(f, ref);
    sam_hdr_t *h = sam_hdr_read(f);
    bam1_t *b = bam_init1();
    int rc = 0;
    if (h && b && first_pair(f, h, b, o, 100000)) {
        const char *tag = !bam_aux_get(b, "MC") ? "MC" : !bam_aux_get(b, "ms") ? "ms" : NULL;
        if (tag) {
            ss_error("%s: read %s has no %s tag; run samtools fixmate -m on the "
                     "name-collated input, then sort it",
                     path, bam_get_qname(b), tag);
            rc = -1;
        }
    }
    bam_destroy1(b);
    sam_hdr_destroy(h);
    sam_close(f);
    return rc;
}

static int prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    const dup_opts_t *o = kopts;
    const ss_io_inputs_t *in = ss_job_inputs(job);
    if (in->stream && o->supp) { /* -S reads the input twice: a stream once */
        ss_error("-: markdup -S reads its input twice, which standard input cannot be; give a "
                 "file, or leave out -S");
        return -1;
    }
    /* a stream is checked read by read instead (the machine names a read without MC/ms) */
    if (!in->stream && check_fixmate(in->paths[0], ss_job_opts(job)->reference, o) < 0)
        return -1;
    dup_run_t *r = calloc(1, sizeof(*r));
    if (!(*run = r)) {
        ss_error("out of memory preparing markdup");
        return -1;
    }
    if (dup_run_init(r, o) < 0)
        return -1;
    if (o->supp && !(r->names = dup_names_init())) {
        ss_error("out of memory preparing markdup -S");
        return -1;
    }
    out->gather = o->supp;
    out->header = sam_hdr_dup(ss_job_header(job));
    if (!out->header ||
        (!o->no_pg && sam_hdr_add_pg(out->header, "seqshard", "VN", ss_build_version, "CL",
                                     o->cmdline, NULL) < 0)) {
        ss_error("%s: cannot build the output header (out of memory?)",
                 ss_job_inputs(job)->paths[0]);
        return -1;
    }
    out->format = o->format;
    out->sam_header = 1;
    out->index_threads = o->threads;
    if (o->do_stats) { /* only -s/-f print them; without, --resume may reuse shards */
        out->n_values = DUP_NCOUNTS;
        out->value_ops = dup_ops;
    }
    return 0;
}

static int worker_init(void **ws, const void *kopts, const void *run, const ss_job_t *job,
                       ss_reader_t *rd, int id)
{
    (void)id;
    dup_worker_t *w = ss_alloc_private(sizeof(*w)); /* written per record */
    if (!(*ws = w) || !(w->m = dup_machine_init(run)) || !(w->b = bam_init1())) {
        ss_error("out of memory starting a markdup worker");
        return -1;
    }
    w->o = kopts, w->run = run, w->rd = rd, w->h = ss_job_header(job);
    return 0;
}

static void worker_destroy(void *ws)
{
    dup_worker_t *w = ws;
    if (!w)
        return;
    dup_machine_destroy(w->m);
    if (w->b)
        bam_destroy1(w->b);
    free(w);
}

static int read_failed(dup_worker_t *w, const ss_shard_t *sh, int r, int err)
{
    return ss_io_input_failed(w->rd, 0, r, err, sh->tid, sh->beg, sh->end, NULL, "--reference");
}

/*
 * The shard's range and its halo through the machine; the owned reads leave
 * it final, through emit. 0, or -1 after ss_error().
 */
static int stream(dup_worker_t *w, const ss_shard_t *sh, kstring_t *names, dup_emit_fn emit)
{
    hts_pos_t len = sam_hdr_tid2len(w->h, sh->tid);
    hts_pos_t hi = sh->query_end >= len ? sh->query_end : sh->end + dup_halo(w->o);
    dup_span_t span = {sh->tid, sh->beg, hi, sh->beg, sh->query_end};
    dup_stream_t st = {w->o, w->m, ss_reader_source(w->rd, 0), ss_reader_path(w->rd, 0)};
    int err = 0, r = dup_stream(&st, &span, &w->c, names, emit, w, &w->st->reads, &err);
    return r < -1 ? read_failed(w, sh, r, err) : r;
}

static void add_counts(int64_t *v, const dup_counts_t *c)
{
    const int64_t *a = &c->reading;
    for (int i = 0; i < DUP_NCOUNTS; i++)
        v[i] += a[i];
}

/*
 * -S: a supplementary, secondary or unmapped record of a duplicate becomes one
 * too, as samtools' second pass marks it.
 */
static int mark_other(const dup_worker_t *w, bam1_t *b, dup_counts_t *c)
{
    const dup_name_t *d;
    if (!w->o->supp || !(b->core.flag & (BAM_FSUPPLEMENTARY | BAM_FUNMAP | BAM_FSECONDARY)) ||
        !(d = dup_names_get(w->run->names, bam_get_qname(b))))
        return 0;
    b->core.flag |= BAM_FDUP;
    c->np_duplicate++;
    if (w->o->tag && d->ori && bam_aux_update_str(b, "do", (int)strlen(d->ori) + 1, d->ori) < 0)
        goto oom;
    if (w->o->opt_dist && bam_aux_update_str(b, "dt", 3, d->optical ? "SQ" : "LB") < 0)
        goto oom;
    c->np_opt_duplicate += w->o->opt_dist && d->optical;
    return 0;
oom:
    ss_error("%s: out of memory tagging read %s", ss_reader_path(w->rd, 0), bam_get_qname(b));
    return -1;
}

/* The unplaced unmapped reads: nothing to compare, each passes as samtools passes it. */
static int unplaced(dup_worker_t *w, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    ss_source_t *src = ss_reader_source(w->rd, 0);
    dup_counts_t c = {0};
    bam1_t *b = w->b;
    if (ss_source_query(src, sh->tid, 0, 0) < 0)
        return -1;
    int r;
    while ((errno = 0, r = ss_source_next(src, b)) >= 0) {
        st->reads++;
        c.reading++, c.excluded++;
        if (w->o->clear)
            dup_clear_marks(b);
        if (w->o->remove_dups && (b->core.flag & BAM_FDUP))
            continue;
        c.writing++; /* samtools counts what its first pass writes */
        if (mark_other(w, b, &c) < 0)
            return -1;
        if (w->o->remove_dups && (b->core.flag & BAM_FDUP))
            continue;
        if (ss_out_record(out, b) < 0)
            return -1;
    }
    if (w->o->do_stats)
        add_counts(ss_out_values(out), &c);
    return r < -1 ? read_failed(w, sh, r, errno) : 0;
}

/* A read leaves the machine: the shard writes it if it owns it, as samtools would. */
static int write_read(void *ctx, bam1_t *b, int owned)
{
    dup_worker_t *w = ctx;
    if (!owned || (w->o->remove_dups && (b->core.flag & BAM_FDUP)))
        return 0;
    if (mark_other(w, b, &w->c) < 0)
        return -1;
    if (w->o->remove_dups && (b->core.flag & BAM_FDUP))
        return 0;
    w->st->bases += (uint64_t)b->core.l_qseq;
    return ss_out_record(w->out, b);
}

static int process(void *ws, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    dup_worker_t *w = ws;
    if (sh->tid == SS_TID_UNPLACED)
        return unplaced(w, sh, out, st);
    w->out = out, w->st = st, w->c = (dup_counts_t){0};
    if (stream(w, sh, NULL, write_read) < 0)
        return -1;
    if (w->o->do_stats)
        add_counts(ss_out_values(out), &w->c);
    return 0;
}

static int skip_read(void *ctx, bam1_t *b, int owned)
{
    (void)ctx, (void)b, (void)owned;
    return 0;
}

/* -S, before the run: the names of the duplicates the shard decides. */
static int gather(void *ws, const ss_shard_t *sh, kstring_t *bytes)
{
    dup_worker_t *w = ws;
    ss_shard_stats_t st = {0};
    if (sh->tid == SS_TID_UNPLACED)
        return 0; /* nothing there is examined */
    w->out = NULL, w->st = &st, w->c = (dup_counts_t){0};
    return stream(w, sh, bytes, skip_read);
}

static int gathered(const void *run, const char *bytes, size_t len)
{
    return dup_names_take(((const dup_run_t *)run)->names, bytes, len);
}

static int finish(const void *kopts, const void *run, ss_finish_t *fin)
{
    const dup_opts_t *o = kopts;
    (void)run;
    if (!o->do_stats)
        return 0;
    dup_counts_t c;
    memcpy(&c, ss_finish_values(fin), sizeof(c));
    if (o->stats_file) {
        kstring_t *s = ss_finish_file(fin, o->stats_file);
        return s && dup_stats_text(o, &c, s) == 0 ? 0 : -1;
    }
    kstring_t s = KS_INITIALIZE;
    int r = dup_stats_text(o, &c, &s);
    if (r == 0)
        fputs(s.s, stderr);
    ks_free(&s);
    return r;
}

const ss_kernel_t ss_kernel_markdup = {
    .name = "markdup",
    .summary = "mark duplicates as samtools markdup does, the same bytes at any scale",
    .usage = dup_usage,
    .parse = dup_parse,
    .opts_free = dup_opts_free,
    .prepare = prepare,
    .run_free = run_free,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
    .unplaced = 1, /* the unplaced unmapped reads pass through, at the end */
    .stdin_ok = 1, /* "-": one pass, each contig one shard read whole (no halo needed) */
    .cram_md = 1,  /* records are written whole: a CRAM input rebuilds MD/NM as samtools does */
    .finish = finish,
    .gather = gather,
    .gathered = gathered,
};

/*
 * view.c -- the `view` kernel: samtools view 1.16, one shard at a time.
 *
 * Which shard emits a record: the one whose [beg, end) holds the record's
 * POS. The first shard of a scope (a region, or a whole contig) also emits
 * the records that start before the scope and overlap it, which is what a
 * samtools region query returns; the last shard of a scope takes everything
 * up to the scope's END as given, which for a whole contig includes records
 * placed past the contig's end. A shard of tid
 * SS_TID_UNPLACED reads the unplaced unmapped records (HTS_IDX_NOCOOR).
 * Since records are coordinate-sorted, the outputs of a scope's shards, in
 * shard order, are the scope's records in file order, each exactly once; the
 * plan puts the scopes in the order given, which is samtools' order for a
 * list of regions (each queried in turn).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework_extra.h"
#include "../../io/ss_check.h"
#include "../../io/ss_diag.h"
#include "view.h"

typedef struct {
    const vw_opts_t *o;
    const vw_run_t *run;
    ss_reader_t *rd;
    sam_hdr_t *hdr; /* the input's header (read-only): contig names, CRAM messages */
    bam1_t *b;
    const char *reference;       /* -T, or NULL */
    const char *ref_option;      /* how messages name it */
    const ss_interval_t *merged; /* -M: the job's sorted, merged regions; NULL without -M */
    int n_merged;
    vw_copier_t *copier; /* copying the input's blocks (view_copy.c), or NULL */
    hts_filter_t *expr;  /* -e compiled for this worker (its evaluation state), or NULL */
    double out_per_work; /* output bytes per byte of shard work, as last seen (+25%) */
} vw_worker_t;

/*
 * Output bytes per byte of the planner's estimate (compressed input) before a worker has
 * finished a shard. Measured on the benchmark data: BAM or CRAM out 0.6-2x (CRAM->BAM
 * 1.9x, the block copy 1.0x), SAM text 7x. Too high costs address space only (see
 * ss_ks_reserve); too low, a few copies.
 */
#define FIRST_OUT_PER_WORK(fmt) ((fmt) == VW_SAM ? 8.0 : 2.5)

/* Room for the shard's output up front: it then does not grow by copying. */
static int reserve_output(const vw_worker_t *w, const ss_shard_t *sh, ss_out_t *out)
{
    double per = w->out_per_work > 0 ? w->out_per_work : FIRST_OUT_PER_WORK(w->o->fmt);
    double want = per * (double)sh->est_work;
    return ss_out_reserve(out, want < (double)SS_RESERVE_MAX ? (size_t)want : SS_RESERVE_MAX);
}

static void learn_output_size(vw_worker_t *w, const ss_shard_t *sh, const ss_out_t *out)
{
    size_t len = ss_out_length(out);
    if (sh->est_work > 0 && len > 0)
        w->out_per_work = 1.25 * (double)len / (double)sh->est_work;
}

static void opts_free(void *kopts)
{
    vw_opts_free(kopts);
    free(kopts);
}

/* ---- prepare: output header, reference checks, CRAM framing ---- */

/* The CRAM major version of path, or 0 when it is not CRAM. */
static int input_cram_version(const char *path)
{
    htsFile *fp = hts_open(path, "r");
    int major = fp && hts_get_format(fp)->format == cram ? hts_get_format(fp)->version.major : 0;
    if (fp)
        hts_close(fp);
    return major;
}

static void run_free(void *run)
{
    vw_run_t *r = run;
    if (!r)
        return;
    ss_bed_destroy(r->targets);
    vw_crai_destroy(r->crai);
    for (int i = 0; i < r->n_lib_rgs; i++)
        free(r->lib_rgs[i]);
    free(r->lib_rgs);
    free(r);
}

/* The output header: the input's, with our @PG line, as samtools view writes it. */
static sam_hdr_t *output_header(const vw_opts_t *o, const ss_job_t *job)
{
    const char *in = ss_job_inputs(job)->paths[0];
    sam_hdr_t *h = sam_hdr_dup(ss_job_header(job));
    if (!h) {
        ss_error("%s: cannot copy the header", in);
        return NULL;
    }
    if (!o->no_pg &&
        sam_hdr_add_pg(h, "seqshard", "VN", ss_build_version, "CL", o->cmdline, NULL) < 0) {
        ss_error("%s: cannot add the @PG line to the header", in);
        sam_hdr_destroy(h);
        return NULL;
    }
    return h;
}

static const ss_out_format_t out_format[] = {
    [VW_SAM] = SS_FMT_SAM, [VW_BAM] = SS_FMT_BAM, [VW_CRAM] = SS_FMT_CRAM};

static int prepare(const void *kopts, const ss_job_t *job, void **runp, ss_out_spec_t *out)
{
    const vw_opts_t *o = kopts;
    const ss_common_opts_t *co = ss_job_opts(job);
    const char *in = ss_job_inputs(job)->paths[0];
    if (o->multi_region && co->n_regions == 0 && !o->target_path) {
        /* samtools view -M aborts too (status 1) */
        ss_error("view -M: no regions and no -L file given; give regions after the input "
                 "file, or drop -M");
        return -1;
    }
    vw_run_t *run = calloc(1, sizeof(*run));
    if (!run) {
        ss_error("out of memory preparing view");
        return -1;
    }
    *runp = run;
    run->copy_data_beg = run->copy_data_end = -1;
    const ss_io_inputs_t *ins = ss_job_inputs(job);
    /* standard input is open already and has no index: never open "-" again */
    const htsFormat *sf = ins->stream ? hts_get_format(ins->stream) : NULL;
    int cram_major = sf ? (sf->format == cram ? sf->version.major : 0) : input_cram_version(in);
    run->in_is_cram = cram_major > 0;
    /* the paths that read the file itself, past its record source: not with a step in front */
    int file_is_input = !ins->stream && ss_job_n_steps(job) == 0;
    if (file_is_input && (cram_major == 2 || cram_major == 3)) /* containers (view_crai.c) */
        run->crai = vw_crai_load(in, co->index_paths ? co->index_paths[0] : NULL,
                                 sam_hdr_nref(ss_job_header(job)));
    if (!run->in_is_cram && file_is_input && vw_copy_eligible(o, co))
        vw_copy_prepare(run, in); /* -1: the header shares a block with records; re-encode */
    if (o->target_path && !(run->targets = ss_bed_read(o->target_path)))
        return -1;
    if (o->library && vw_library_prepare(run, ss_job_header(job), o->library) < 0)
        return -1;
    if (o->count) /* one line of text at the end (summary); the shards write nothing */
        return 0;
    if (!(out->header = output_header(o, job)))
        return -1;
    if (o->fmt == VW_CRAM && vw_check_cram_output_refs(out->header, co->reference) < 0)
        return -1;
    if (co->reference && (run->in_is_cram || o->fmt == VW_CRAM) &&
        vw_check_reference_contigs(job, o->fmt == VW_CRAM) < 0)
        return -1;
    out->format = out_format[o->fmt];
    out->level = o->level;
    out->sam_header = o->with_header || o->header_only;
    out->write_index = o->write_index;
    out->index_threads = o->threads;
    return 0;
}

/* ---- workers ---- */

static void worker_destroy(void *wstate)
{
    vw_worker_t *w = wstate;
    if (!w)
        return;
    vw_copier_destroy(w->copier);
    if (w->expr)
        hts_filter_free(w->expr);
    if (w->b)
        bam_destroy1(w->b);
    free(w);
}

static int worker_init(void **wstate, const void *kopts, const void *run, const ss_job_t *job,
                       ss_reader_t *rd, int worker_id)
{
    (void)worker_id;
    const vw_opts_t *o = kopts;
    vw_worker_t *w = ss_alloc_private(sizeof(*w)); /* written per record (ss_alloc.h) */
    *wstate = w;
    if (!w || !(w->b = ss_bam_private())) {
        ss_error("out of memory starting a view worker");
        return -1;
    }
    w->o = o;
    w->run = run;
    w->rd = rd;
    w->hdr = ss_job_header(job);
    w->reference = ss_job_opts(job)->reference;
    w->ref_option = ss_job_opts(job)->ref_option;
    if (o->multi_region)
        w->merged = ss_job_regions(job, &w->n_merged);
    if (o->expr && !(w->expr = hts_filter_init(o->expr))) { /* it compiled in vw_parse */
        ss_error("out of memory compiling -e for a view worker");
        return -1;
    }
    return 0;
}

/* samtools view's filters (process_aln), for the options we support. */
static int keep(const vw_opts_t *o, const vw_run_t *run, const sam_hdr_t *h, const bam1_t *b)
{
    const bam1_core_t *c = &b->core;
    if (c->qual < o->min_mapq || (c->flag & o->flag_on) != o->flag_on || (c->flag & o->flag_off))
        return 0;
    if (o->flag_alloff && (c->flag & o->flag_alloff) == o->flag_alloff)
        return 0;
    if (o->flag_anyon && !(c->flag & o->flag_anyon))
        return 0;
    if (run->targets && (c->tid < 0 || !ss_bed_overlap(run->targets, sam_hdr_tid2name(h, c->tid),
                                                       c->pos, bam_endpos(b))))
        return 0;
    return 1;
}

/* "ctgA:1001-2000" or "unplaced unmapped reads", for messages. */
static void shard_name(const vw_worker_t *w, const ss_shard_t *sh, char *buf, size_t size)
{
    if (sh->tid == SS_TID_UNPLACED)
        snprintf(buf, size, "unplaced unmapped reads");
    else
        snprintf(buf, size, "%s:%lld-%lld", sam_hdr_tid2name(w->hdr, sh->tid),
                 (long long)sh->beg + 1, (long long)sh->end);
}

static int read_error(vw_worker_t *w, const ss_shard_t *sh, int is_cram, int ret)
{
    const char *path = ss_reader_path(w->rd, 0);
    char where[256];
    shard_name(w, sh, where, sizeof(where));
    if (is_cram)
        ss_io_cram_read_error(path, w->hdr, w->reference, w->ref_option, sh->idx, where, sh->tid);
    else
        ss_io_read_error(path, ss_reader_file(w->rd, 0), ret, sh->idx, where);
    return -1;
}

/* A record the checks refused (ss_io_check_record), or a read error. Returns -1. */
static int bad_read(vw_worker_t *w, const ss_shard_t *sh, int is_cram, int code,
                    const ss_io_order_t *ord)
{
    if (!ss_io_is_bad_record(code))
        return read_error(w, sh, is_cram, code);
    char what[1024];
    ss_io_bad_record_text(what, sizeof(what), code, w->hdr, w->b, ord, sh->idx);
    ss_error("%s: %s", ss_reader_path(w->rd, 0), what);
    return -1;
}

/*
 * Where the first shard of a region starts emitting. Without -M: every record
 * the region's query returns. With -M a record that overlaps two merged
 * regions belongs to the first, so the records that start before the end of
 * the previous region on the same contig were emitted there.
 */
static hts_pos_t region_first_pos(const vw_worker_t *w, const ss_shard_t *sh)
{
    int lo = 0, hi = w->n_merged;
    while (lo < hi) { /* the first region at or after the shard's, in (tid, beg) order */
        int mid = lo + (hi - lo) / 2;
        const ss_interval_t *r = &w->merged[mid];
        if ((unsigned)r->tid < (unsigned)sh->tid || (r->tid == sh->tid && r->beg < sh->scope_beg))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 && w->merged[lo - 1].tid == sh->tid)
        return w->merged[lo - 1].end; /* merged regions do not touch: < scope_beg */
    return HTS_POS_MIN;
}

/*
 * The POS range [*lo, *hi) this shard emits: a region's first shard from
 * where the region's query starts, its last shard up to the region's END as
 * given, as samtools' query does ("ctg" and "ctg:100" take records placed
 * past the contig's end too, "ctg:100-LEN" does not).
 */
static void shard_bounds(const vw_worker_t *w, const ss_shard_t *sh, hts_pos_t *lo, hts_pos_t *hi)
{
    *lo = sh->beg <= sh->scope_beg ? region_first_pos(w, sh) : sh->beg;
    int last = sh->end >= sh->scope_end || sh->end >= sam_hdr_tid2len(w->hdr, sh->tid);
    *hi = last ? sh->scope_end : sh->end;
}

/*
 * Filter one record the shard emits; count it (-c) or edit its tags (-x,
 * --keep-tag) and write it. 0, or -1 after ss_error().
 */
static int emit_kept(vw_worker_t *w, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    if (!keep(w->o, w->run, w->hdr, w->b) || !vw_keep_more(w->o, w->run, w->expr, w->hdr, w->b))
        return 0;
    st->bases += w->b->core.l_qseq;
    if (w->o->count) {
        st->summary[0]++;
        return 0;
    }
    if (vw_adjust_tags(w->o, w->b) < 0) {
        ss_error("%s: record %s in shard %d has malformed aux data (tags); check the file with "
                 "samtools view",
                 ss_reader_path(w->rd, 0), bam_get_qname(w->b), sh->idx);
        return -1;
    }
    return ss_out_record(out, w->b);
}

/*
 * Emit the records a region query over [qbeg, qend) returns whose POS is in
 * [lo, hi). Returns 0, or -1 after ss_error().
 */
static int read_by_query(vw_worker_t *w, const ss_shard_t *sh, hts_pos_t qbeg, hts_pos_t qend,
                         hts_pos_t lo, hts_pos_t hi, ss_out_t *out, ss_shard_stats_t *st)
{
    ss_source_t *src = ss_reader_source(w->rd, 0);
    int is_cram = hts_get_format(ss_reader_file(w->rd, 0))->format == cram;
    if (ss_source_query(src, sh->tid, qbeg, qend) < 0)
        return -1;
    int r;
    while ((r = ss_source_next(src, w->b)) >= 0) {
        st->reads++;
        if (w->b->core.pos < lo)
            continue;
        if (w->b->core.pos >= hi)
            break;
        if (emit_kept(w, sh, out, st) < 0)
            return -1;
    }
    if (r == SS_IO_REPORTED)
        return -1;
    return r < -1 ? read_error(w, sh, is_cram, r) : 0;
}

/*
 * CRAM input: the records of the containers this shard owns (view_crai.c).
 * Shard [beg, end) owns the containers that start in it; a region's first
 * shard also owns the container before, which may hold the region's first
 * records, and takes the records that start before the region and reach
 * into it from a region query; the last shard owns the containers up to the
 * region's END. Returns 0, or -1 after ss_error().
 */
static int read_by_containers(vw_worker_t *w, const ss_shard_t *sh, const vw_container_t *c, int n,
                              ss_out_t *out, ss_shard_stats_t *st)
{
    samFile *fp = ss_reader_file(w->rd, 0);
    hts_pos_t lo, hi, scope_beg = sh->scope_beg;
    shard_bounds(w, sh, &lo, &hi);
    int first = sh->beg <= scope_beg;
    if (first && scope_beg > 0 && read_by_query(w, sh, scope_beg, hi, lo, scope_beg, out, st) < 0)
        return -1;
    int i = vw_crai_first_at(c, n, first ? scope_beg : sh->beg);
    if (first && i > 0)
        i--;
    int end = vw_crai_first_at(c, n, hi);
    int64_t total = 0;
    for (int k = i; k < end; k++) {
        int64_t nrec;
        if (vw_crai_records(fp, c[k].off, &nrec) < 0) {
            ss_error("%s: cannot read the CRAM container at byte %lld: the file is truncated "
                     "or its index is stale; check it with samtools quickcheck, then run "
                     "samtools index",
                     ss_reader_path(w->rd, 0), (long long)c[k].off);
            return -1;
        }
        total += nrec;
    }
    if (total > 0 && vw_crai_seek(fp, ss_reader_index(w->rd, 0), &c[i]) < 0) {
        ss_error("%s: cannot seek to the CRAM container at byte %lld; check the file with "
                 "samtools quickcheck",
                 ss_reader_path(w->rd, 0), (long long)c[i].off);
        return -1;
    }
    ss_io_order_t ord;
    ss_io_order_reset(&ord);
    for (int64_t k = 0; k < total; k++) {
        int r = sam_read1(fp, w->hdr, w->b);
        if (r < 0)
            return read_error(w, sh, 1, 0); /* the index promised more records */
        if ((r = ss_io_check_record(w->b, sam_hdr_nref(w->hdr), &ord)) < 0)
            return bad_read(w, sh, 1, r, &ord);
        st->reads++;
        hts_pos_t pos = w->b->core.pos;
        if (w->b->core.tid != sh->tid || pos >= sh->scope_end)
            break; /* records past this shard's end in its own containers are its own */
        if (pos >= scope_beg && emit_kept(w, sh, out, st) < 0)
            return -1;
    }
    return 0;
}

static int copy_blocks(vw_worker_t *w, const ss_shard_t *sh, ss_out_t *so, ss_shard_stats_t *st)
{
    kstring_t *out = ss_out_bgzf_blocks(so);
    if (!out)
        return -1;
    if (!w->copier && !(w->copier = vw_copier_init())) {
        ss_error("out of memory starting a view worker");
        return -1;
    }
    size_t at = out->l;
    uint64_t records = 0;
    int r = vw_copy_shard(w->copier, w->run, w->rd, w->hdr, w->b, sh, so, out, &records);
    if (r < -1)
        read_error(w, sh, 0, r);
    if (r < 0) {
        out->l = at;
        return -1;
    }
    st->reads += records;
    return 0;
}

/* Decode the shard's records and write them through the framework's encoder. */
static int convert_records(vw_worker_t *w, const ss_shard_t *sh, ss_out_t *out,
                           ss_shard_stats_t *st)
{
    samFile *fp = ss_reader_file(w->rd, 0);
    int is_cram = hts_get_format(fp)->format == cram;
    /* samtools' decoding: MD/NM regenerated as htslib does by default; every field wanted */
    if (is_cram && (hts_set_opt(fp, CRAM_OPT_DECODE_MD, -1) < 0 ||
                    hts_set_opt(fp, CRAM_OPT_REQUIRED_FIELDS, INT_MAX) < 0)) {
        ss_error("%s: cannot set CRAM decoding options", ss_reader_path(w->rd, 0));
        return -1;
    }
    const vw_container_t *c;
    int n = is_cram ? vw_crai_containers(w->run->crai, sh->tid, &c) : 0;
    if (n > 0)
        return read_by_containers(w, sh, c, n, out, st);
    if (sh->tid == SS_TID_UNPLACED)
        return read_by_query(w, sh, 0, 0, HTS_POS_MIN, HTS_POS_MAX, out, st);
    hts_pos_t lo, hi;
    shard_bounds(w, sh, &lo, &hi);
    return read_by_query(w, sh, sh->beg <= sh->scope_beg ? sh->scope_beg : sh->beg, hi, lo, hi, out,
                         st);
}

static int process(void *wstate, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    vw_worker_t *w = wstate;
    if (w->o->header_only)
        return 0;
    if (!w->o->count && reserve_output(w, sh, out) < 0)
        return -1;
    int r =
        w->run->copy_data_beg >= 0 ? copy_blocks(w, sh, out, st) : convert_records(w, sh, out, st);
    if (r == 0)
        learn_output_size(w, sh, out);
    return r;
}

/* -c: the one number samtools view -c prints, over every shard and rank. */
static int run_summary(const void *kopts, const void *run, const uint64_t sums[SS_SUMMARY_N],
                       kstring_t *text)
{
    (void)run;
    const vw_opts_t *o = kopts;
    if (!o->count)
        return 0;
    if (ksprintf(text, "%llu\n", (unsigned long long)sums[0]) < 0) {
        ss_error("out of memory printing the count");
        return -1;
    }
    return 0;
}

const ss_kernel_t ss_kernel_view = {
    .name = "view",
    .summary = "print or convert records (SAM/BAM/CRAM), identical to samtools view",
    .usage = vw_usage,
    .parse = vw_parse,
    .opts_free = opts_free,
    .prepare = prepare,
    .run_free = run_free,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
    .stdin_ok = 1, /* "-": standard input, read by one worker in one pass */
    /* the unplaced unmapped reads end a whole-file view; "*" and "." name them as regions */
    .unplaced = 1,
    .run_summary = run_summary,
};

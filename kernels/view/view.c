/*
 * view.c -- the `view` kernel: samtools view 1.16, one shard at a time.
 *
 * Which shard emits a record: the one whose [beg, end) holds the record's
 * POS. The first shard of a scope (a region, or a whole contig) also emits
 * the records that start before the scope and overlap it, which is what a
 * samtools region query returns; the last shard of a scope takes everything
 * up to the scope's END as given, which for a whole contig includes records
 * placed past the contig's end. A shard of tid
 * VW_TID_UNPLACED reads the unplaced unmapped records (HTS_IDX_NOCOOR).
 * Since records are coordinate-sorted, the outputs of a scope's shards, in
 * shard order, are the scope's records in file order, each exactly once; the
 * plan puts the scopes in the order given, which is samtools' order for a
 * list of regions (each queried in turn).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

typedef struct {
    vw_opts_t *o;
    ss_reader_t *rd;
    sam_hdr_t *hdr;          /* the worker's copy of the output header */
    bam1_t *b;
    kstring_t line;          /* one SAM line / one BAM record */
    vw_bgzf_t z;             /* BAM block being filled */
    vw_cram_writer_t *cram;
    const char *reference;   /* -T, or NULL */
    const ss_interval_t *merged; /* -M: the job's sorted, merged regions; NULL without -M */
    int n_merged;
    vw_copier_t *copier;     /* copying the input's blocks (view_copy.c), or NULL */
    double out_per_work;     /* output bytes per byte of shard work, as last seen (+25%) */
} vw_worker_t;

/*
 * Output bytes per byte of the planner's estimate (compressed input) before a worker has
 * finished a shard. Measured on the benchmark data: BAM or CRAM out 0.6-2x (CRAM->BAM
 * 1.9x, the block copy 1.0x), SAM text 7x. Too high costs address space only (see
 * ss_ks_reserve); too low, a few copies.
 */
#define FIRST_OUT_PER_WORK(fmt) ((fmt) == VW_SAM ? 8.0 : 2.5)

/* Room for the shard's output up front: it then does not grow by copying (issue 5). */
static int reserve_output(const vw_worker_t *w, const ss_shard_t *sh, kstring_t *out)
{
    double per = w->out_per_work > 0 ? w->out_per_work : FIRST_OUT_PER_WORK(w->o->fmt);
    double want = per * (double)sh->est_work;
    if (ss_ks_reserve(out, want < (double)SS_RESERVE_MAX ? (size_t)want : SS_RESERVE_MAX) == 0)
        return 0;
    ss_error("out of memory for shard %d's output", sh->idx);
    return -1;
}

static void learn_output_size(vw_worker_t *w, const ss_shard_t *sh, const kstring_t *out)
{
    if (sh->est_work > 0 && out->l > 0)
        w->out_per_work = 1.25 * (double)out->l / (double)sh->est_work;
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

static int prepare(void *kopts, const ss_job_t *job)
{
    vw_opts_t *o = kopts;
    const ss_common_opts_t *co = ss_job_opts(job);
    const char *in = ss_job_inputs(job)->paths[0];

#ifndef SS_KERNEL_HOOKS_V2
    /*
     * Without the framework's kernel hooks (out_kind_of, trailer, finish) and
     * the unplaced-reads shard, BAM/CRAM would lack their EOF and a whole-file
     * view would miss the unplaced reads: refuse rather than write that.
     */
    if (o->fmt != VW_SAM || o->write_index || !ss_job_region(job)) {
        ss_error("view: this build supports only SAM output of one region: the framework "
                 "lacks the kernel hooks it needs (SS_KERNEL_HOOKS_V2)");
        return -1;
    }
#endif
    if (o->multi_region && co->n_regions == 0 && !o->target_path) {
        /* samtools view -M aborts too (status 1) */
        ss_error("view -M: no regions and no -L file given; give regions after the input "
                 "file, or drop -M");
        return -1;
    }
    int cram_major = input_cram_version(in);
    o->in_is_cram = cram_major > 0;
    if (cram_major == 2 || cram_major == 3) /* container headers we can read (view_crai.c) */
        o->crai = vw_crai_load(in, co->index_paths ? co->index_paths[0] : NULL,
                               sam_hdr_nref(ss_job_header(job)));
    if (o->in_is_cram || o->fmt == VW_CRAM)
        vw_no_network_references();
    if (!o->in_is_cram && vw_copy_eligible(o, co))
        vw_copy_prepare(o, in); /* -1: the header shares a block with records; re-encode */
    if (o->target_path && !(o->targets = ss_bed_read(o->target_path)))
        return -1;
    if (!(o->out_hdr = sam_hdr_dup(ss_job_header(job)))) {
        ss_error("%s: cannot copy the header", in);
        return -1;
    }
    if (!o->no_pg &&
        sam_hdr_add_pg(o->out_hdr, "seqshard", "VN", SS_VERSION, "CL", o->cmdline, NULL) < 0) {
        ss_error("%s: cannot add the @PG line to the header", in);
        return -1;
    }
    if (o->fmt == VW_CRAM) {
        if (vw_check_cram_output_refs(o->out_hdr, co->reference) < 0 ||
            vw_cram_prepare(o, co->reference) < 0)
            return -1;
    }
    /* Build the text now, on the main thread: later readers only read it. */
    if (!sam_hdr_str(o->out_hdr)) {
        ss_error("%s: cannot format the header", in);
        return -1;
    }
    return 0;
}

static int header(void *kopts, const ss_job_t *job, kstring_t *out)
{
    vw_opts_t *o = kopts;
    (void)job;
    switch (o->fmt) {
    case VW_SAM:
        if (o->with_header || o->header_only)
            return kputsn(sam_hdr_str(o->out_hdr), sam_hdr_length(o->out_hdr), out) < 0 ? -1 : 0;
        return 0;
    case VW_BAM: {
        kstring_t raw = KS_INITIALIZE;
        vw_bgzf_t z;
        int rc = -1;
        if (vw_bgzf_init(&z, o->level) == 0 && vw_bam_encode_header(o->out_hdr, &raw) == 0 &&
            vw_bgzf_write(&z, raw.s, raw.l, 0, out) == 0 && vw_bgzf_flush(&z, out) == 0)
            rc = 0;
        else
            ss_error("cannot encode the BAM header: %s", strerror(errno));
        vw_bgzf_destroy(&z);
        free(raw.s);
        return rc;
    }
    case VW_CRAM:
        return kputsn(o->cram.head.s, o->cram.head.l, out) < 0 ? -1 : 0;
    }
    return -1;
}

/* ---- workers ---- */

static void worker_destroy(void *wstate)
{
    vw_worker_t *w = wstate;
    if (!w)
        return;
    vw_cram_writer_destroy(w->cram);
    vw_bgzf_destroy(&w->z);
    vw_copier_destroy(w->copier);
    if (w->b)
        bam_destroy1(w->b);
    if (w->hdr)
        sam_hdr_destroy(w->hdr);
    free(w->line.s);
    free(w);
}

static int worker_init(void **wstate, void *kopts, const ss_job_t *job, ss_reader_t *rd,
                       int worker_id)
{
    (void)worker_id;
    vw_opts_t *o = kopts;
    vw_worker_t *w = ss_alloc_private(sizeof(*w)); /* written per record (ss_alloc.h) */
    *wstate = w;
    if (!w)
        goto oom;
    w->o = o;
    w->rd = rd;
    w->reference = ss_job_opts(job)->reference;
    if (o->multi_region)
        w->merged = ss_job_regions(job, &w->n_merged);
    /* sam_hdr_dup may touch its source's lazily built state: one copy at a time */
    pthread_mutex_lock(&o->hdr_lock);
    w->hdr = sam_hdr_dup(o->out_hdr);
    pthread_mutex_unlock(&o->hdr_lock);
    if (!w->hdr || !(w->b = ss_bam_private()) ||
        ss_ks_private(&w->line, 4096) < 0)
        goto oom;
    if (o->fmt == VW_BAM && vw_bgzf_init(&w->z, o->level) < 0)
        goto oom;
    if (o->fmt == VW_CRAM &&
        !(w->cram = vw_cram_writer_init(o, w->hdr, w->reference, ss_job_opts(job)->tmp_dir)))
        return -1;
    return 0;
oom:
    ss_error("out of memory starting a view worker");
    return -1;
}

/* samtools view's filters (process_aln), for the options we support. */
static int keep(const vw_opts_t *o, const sam_hdr_t *h, const bam1_t *b)
{
    const bam1_core_t *c = &b->core;
    if (c->qual < o->min_mapq || (c->flag & o->flag_on) != o->flag_on || (c->flag & o->flag_off))
        return 0;
    if (o->flag_alloff && (c->flag & o->flag_alloff) == o->flag_alloff)
        return 0;
    if (o->flag_anyon && !(c->flag & o->flag_anyon))
        return 0;
    if (o->targets && (c->tid < 0 || !ss_bed_overlap(o->targets, sam_hdr_tid2name(h, c->tid),
                                                      c->pos, bam_endpos(b))))
        return 0;
    return 1;
}

static int emit(vw_worker_t *w, const bam1_t *b, kstring_t *out)
{
    switch (w->o->fmt) {
    case VW_SAM:
        if (sam_format1(w->hdr, b, &w->line) < 0 || kputsn(w->line.s, w->line.l, out) < 0 ||
            kputc('\n', out) < 0)
            break;
        return 0;
    case VW_BAM:
        w->line.l = 0;
        if (vw_bam_encode(b, &w->line) < 0 ||
            vw_bgzf_write(&w->z, w->line.s, w->line.l, 1, out) < 0)
            break;
        return 0;
    case VW_CRAM:
        return vw_cram_write(w->cram, b);
    }
    ss_error("cannot encode read '%s': %s", bam_get_qname(b),
             errno == EOVERFLOW ? "it does not fit BAM (name > 254 characters or position > 2^31); "
                                  "write SAM or CRAM instead" : strerror(errno));
    return -1;
}

/* "ctgA:1001-2000" or "unplaced unmapped reads", for messages. */
static void shard_name(const vw_worker_t *w, const ss_shard_t *sh, char *buf, size_t size)
{
    if (sh->tid == VW_TID_UNPLACED)
        snprintf(buf, size, "unplaced unmapped reads");
    else
        snprintf(buf, size, "%s:%lld-%lld", sam_hdr_tid2name(w->hdr, sh->tid),
                 (long long)sh->beg + 1, (long long)sh->end);
}

static int read_error(vw_worker_t *w, const ss_shard_t *sh, int is_cram)
{
    const char *path = ss_reader_path(w->rd, 0);
    char where[256];
    shard_name(w, sh, where, sizeof(where));
    if (is_cram)
        vw_cram_read_error(path, w->hdr, w->reference, sh->idx, where, sh->tid);
    else
        ss_error("%s: read error in shard %d (%s): the file is truncated or corrupt, or its "
                 "index does not match it; check it with samtools quickcheck and re-index it "
                 "with samtools index", path, sh->idx, where);
    return -1;
}

/* A record the checks refused (ss_io_check_record), or a read error. Returns -1. */
static int bad_read(vw_worker_t *w, const ss_shard_t *sh, int is_cram, int code,
                    const ss_io_order_t *ord)
{
    if (!ss_io_is_bad_record(code))
        return read_error(w, sh, is_cram);
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

static int query_error(const vw_worker_t *w, const ss_shard_t *sh)
{
    char where[256];
    shard_name(w, sh, where, sizeof(where));
    ss_error("%s: cannot query the index for shard %d (%s); re-index the input with "
             "samtools index", ss_reader_path(w->rd, 0), sh->idx, where);
    return -1;
}

/* Filter and write one record the shard emits. */
static int emit_kept(vw_worker_t *w, kstring_t *out, uint64_t *bases)
{
    if (!keep(w->o, w->hdr, w->b))
        return 0;
    *bases += w->b->core.l_qseq;
    return emit(w, w->b, out);
}

/*
 * Emit the records a region query over [qbeg, qend) returns whose POS is in
 * [lo, hi). Returns 0, or -1 after ss_error().
 */
static int read_by_query(vw_worker_t *w, const ss_shard_t *sh, hts_pos_t qbeg, hts_pos_t qend,
                         hts_pos_t lo, hts_pos_t hi, kstring_t *out, ss_shard_stats_t *st)
{
    samFile *fp = ss_reader_file(w->rd, 0);
    hts_idx_t *idx = ss_reader_index(w->rd, 0);
    int is_cram = hts_get_format(fp)->format == cram;
    hts_itr_t *itr = sh->tid == VW_TID_UNPLACED ? sam_itr_queryi(idx, HTS_IDX_NOCOOR, 0, 0)
                                                : sam_itr_queryi(idx, sh->tid, qbeg, qend);
    if (!itr && sh->tid == VW_TID_UNPLACED && !is_cram && hts_idx_get_n_no_coor(idx) == 0)
        return 0; /* htslib has no iterator for "nothing after no mapped reads" */
    if (!itr)
        return query_error(w, sh);
    int r;
    ss_io_order_t ord;
    ss_io_order_reset(&ord);
    while ((r = ss_io_itr_next(fp, itr, w->b, sam_hdr_nref(w->hdr), &ord)) >= 0) {
        st->reads++;
        if (w->b->core.pos < lo)
            continue;
        if (w->b->core.pos >= hi)
            break;
        if (emit_kept(w, out, &st->bases) < 0) {
            hts_itr_destroy(itr);
            return -1;
        }
    }
    hts_itr_destroy(itr);
    return r < -1 ? bad_read(w, sh, is_cram, r, &ord) : 0;
}

/*
 * CRAM input: the records of the containers this shard owns (view_crai.c).
 * Shard [beg, end) owns the containers that start in it; a region's first
 * shard also owns the container before, which may hold the region's first
 * records, and takes the records that start before the region and reach
 * into it from a region query; the last shard owns the containers up to the
 * region's END. Returns 0, or -1 after ss_error().
 */
static int read_by_containers(vw_worker_t *w, const ss_shard_t *sh, const vw_container_t *c,
                              int n, kstring_t *out, ss_shard_stats_t *st)
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
                     "samtools index", ss_reader_path(w->rd, 0), (long long)c[k].off);
            return -1;
        }
        total += nrec;
    }
    if (total > 0 && vw_crai_seek(fp, ss_reader_index(w->rd, 0), &c[i]) < 0) {
        ss_error("%s: cannot seek to the CRAM container at byte %lld; check the file with "
                 "samtools quickcheck", ss_reader_path(w->rd, 0), (long long)c[i].off);
        return -1;
    }
    ss_io_order_t ord;
    ss_io_order_reset(&ord);
    for (int64_t k = 0; k < total; k++) {
        int r = sam_read1(fp, w->hdr, w->b);
        if (r < 0)
            return read_error(w, sh, 1); /* the index promised more records */
        if ((r = ss_io_check_record(w->b, sam_hdr_nref(w->hdr), &ord)) < 0)
            return bad_read(w, sh, 1, r, &ord);
        st->reads++;
        hts_pos_t pos = w->b->core.pos;
        if (w->b->core.tid != sh->tid || pos >= sh->scope_end)
            break; /* records past this shard's end in its own containers are its own */
        if (pos >= scope_beg && emit_kept(w, out, &st->bases) < 0)
            return -1;
    }
    return 0;
}

static int copy_blocks(vw_worker_t *w, const ss_shard_t *sh, kstring_t *out,
                       ss_shard_stats_t *st)
{
    if (!w->copier && !(w->copier = vw_copier_init())) {
        ss_error("out of memory starting a view worker");
        return -1;
    }
    size_t at = out->l;
    uint64_t records = 0;
    int r = vw_copy_shard(w->copier, w->o, w->rd, w->hdr, w->b, sh, out, &records);
    if (r == -2)
        read_error(w, sh, 0);
    if (r < 0) {
        out->l = at;
        return -1;
    }
    if (st)
        st->reads += records;
    return 0;
}

/* Decode the shard's records and write them in the output format. */
static int convert_records(vw_worker_t *w, const ss_shard_t *sh, kstring_t *out,
                           ss_shard_stats_t *st)
{
    const vw_opts_t *o = w->o;
    samFile *fp = ss_reader_file(w->rd, 0);
    int is_cram = hts_get_format(fp)->format == cram;
    /* samtools' decoding: MD/NM regenerated as htslib does by default; every field wanted */
    if (is_cram && (hts_set_opt(fp, CRAM_OPT_DECODE_MD, -1) < 0 ||
                    hts_set_opt(fp, CRAM_OPT_REQUIRED_FIELDS, INT_MAX) < 0)) {
        ss_error("%s: cannot set CRAM decoding options", ss_reader_path(w->rd, 0));
        return -1;
    }
    if (o->fmt == VW_CRAM && vw_cram_begin(w->cram) < 0)
        goto fail;
    ss_shard_stats_t counts = {0};
    const vw_container_t *c;
    int n = is_cram ? vw_crai_containers(o->crai, sh->tid, &c) : 0;
    int r;
    if (n > 0) {
        r = read_by_containers(w, sh, c, n, out, &counts);
    } else if (sh->tid == VW_TID_UNPLACED) {
        r = read_by_query(w, sh, 0, 0, HTS_POS_MIN, HTS_POS_MAX, out, &counts);
    } else {
        hts_pos_t lo, hi;
        shard_bounds(w, sh, &lo, &hi);
        r = read_by_query(w, sh, sh->beg <= sh->scope_beg ? sh->scope_beg : sh->beg, hi, lo, hi,
                          out, &counts);
    }
    if (r < 0)
        goto fail;
    if (o->fmt == VW_BAM && vw_bgzf_flush(&w->z, out) < 0) {
        ss_error("shard %d: BGZF compression failed", sh->idx);
        goto fail;
    }
    if (o->fmt == VW_CRAM && vw_cram_end(w->cram, out, sh->idx) < 0)
        goto fail;
    if (st) {
        st->reads += counts.reads;
        st->bases += counts.bases;
    }
    return 0;
fail:
    w->z.len = 0; /* a failed shard's pending bytes must not open the next one */
    vw_cram_abort(w->cram);
    return -1;
}

static int process(void *wstate, const ss_shard_t *sh, kstring_t *out, ss_shard_stats_t *st)
{
    vw_worker_t *w = wstate;
    if (w->o->header_only)
        return 0;
    if (reserve_output(w, sh, out) < 0)
        return -1;
    int r = w->o->copy_data_beg >= 0 ? copy_blocks(w, sh, out, st)
                                     : convert_records(w, sh, out, st);
    if (r == 0)
        learn_output_size(w, sh, out);
    return r;
}

/* ---- hooks the framework does not have yet ---- */

ss_out_kind_t vw_out_kind(const void *kopts)
{
    const vw_opts_t *o = kopts;
    /* CRAM is raw bytes: header and trailer come from the kernel, no BGZF EOF */
    return o->fmt == VW_BAM ? SS_OUT_BAM : SS_OUT_TEXT;
}

int vw_trailer(void *kopts, const ss_job_t *job, kstring_t *out)
{
    vw_opts_t *o = kopts;
    (void)job;
    if (o->fmt != VW_CRAM)
        return 0;
    return kputsn(o->cram.eof.s, o->cram.eof.l, out) < 0 ? -1 : 0;
}

int vw_finish(void *kopts, const ss_job_t *job, const char *final_path)
{
    vw_opts_t *o = kopts;
    (void)job;
    if (!o->write_index || !final_path)
        return 0;
    /* samtools view --write-index: CSI for BAM, CRAI for CRAM */
    int min_shift = o->fmt == VW_BAM ? 14 : 0;
    int r = sam_index_build3(final_path, NULL, min_shift, o->threads > 1 ? o->threads : 1);
    if (r < 0) {
        ss_error("%s: the output is complete but indexing it failed (code %d); run samtools "
                 "index %s", final_path, r, final_path);
        return -1;
    }
    return 0;
}

const ss_kernel_t ss_kernel_view = {
    .name = "view",
    .summary = "print or convert records (SAM/BAM/CRAM), identical to samtools view",
    /*
     * The real kind depends on -O (vw_out_kind); until ss_kernel_t can ask
     * (see the report), TEXT is the kind that adds no framing of its own.
     */
    .out_kind = SS_OUT_TEXT,
    .usage = vw_usage,
    .parse = vw_parse,
    .opts_free = opts_free,
    .prepare = prepare,
    .header = header,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
#ifdef SS_KERNEL_HOOKS_V2
    .out_kind_of = vw_out_kind,
    .trailer = vw_trailer,
    .finish = vw_finish,
#endif
};

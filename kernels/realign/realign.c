/*
 * realign.c -- the `realign` kernel: prepare (checks, header, the halo), the
 * workers, and one shard: load its reads and their reference, decide the
 * block (rl_block.c), write every record read. The framework keeps the
 * records whose final POS the shard owns and sorts them (contract 7).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "realign.h"

typedef struct {
    const rl_opts_t *o;
    ss_reader_t *rd;
    const sam_hdr_t *hdr;
    ss_ref_t *ref;
    rl_known_t *known;
    rl_block_t *blk;
    const char *fasta;
    double out_per_work; /* output bytes per byte of shard work, as last seen (+25%) */
} rl_worker_t;

/* ---- prepare ---- */

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

int rl_check_inputs(const rl_opts_t *o, const ss_job_t *job)
{
    const char *fasta = ss_job_opts(job)->reference;
    if (!fasta) {
        ss_error("realignment needs the reference the reads were aligned to: give -f ref.fa");
        return -1;
    }
    return check_reference(job, fasta) < 0 || rl_known_check(o, ss_job_header(job), fasta) < 0
               ? -1 : 0;
}

static int prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    const rl_opts_t *o = kopts;
    (void)run;
    if (rl_check_inputs(o, job) < 0)
        return -1;
    out->header = sam_hdr_dup(ss_job_header(job));
    if (!out->header ||
        sam_hdr_add_pg(out->header, "seqshard", "VN", SS_VERSION, "CL", o->cmdline, NULL) < 0) {
        ss_error("%s: cannot build the output header (out of memory?)",
                 ss_job_inputs(job)->paths[0]);
        return -1;
    }
    out->format = o->format;
    out->sam_header = 1;
    out->index_threads = o->threads;
    out->max_shift = o->max_move > 0 ? o->max_move : 1; /* > 0: the framework sorts */
    out->halo = rl_halo(o);
    return 0;
}

/* ---- workers ---- */

static void worker_destroy(void *ws)
{
    rl_worker_t *w = ws;
    if (!w)
        return;
    ss_ref_destroy(w->ref);
    rl_known_close(w->known);
    rl_block_destroy(w->blk);
    free(w);
}

static int worker_init(void **ws, const void *kopts, const void *run, const ss_job_t *job,
                       ss_reader_t *rd, int id)
{
    (void)run, (void)id;
    rl_worker_t *w = ss_alloc_private(sizeof(*w));
    if (!(*ws = w)) {
        ss_error("out of memory starting a realign worker");
        return -1;
    }
    w->o = kopts, w->rd = rd, w->hdr = ss_job_header(job);
    w->fasta = ss_job_opts(job)->reference;
    if (!(w->ref = ss_ref_init(w->fasta)) || !(w->blk = rl_block_init())) {
        ss_error("out of memory starting a realign worker");
        return -1;
    }
    return (w->known = rl_known_open(w->o)) ? 0 : -1;
}

/*
 * ret: htslib's code; err: errno as the read failed (htslib's -4 is a bad record or a
 * failed allocation, which only errno tells apart).
 */
static int read_error(const rl_worker_t *w, const ss_shard_t *sh, int ret, int err)
{
    char where[256];
    snprintf(where, sizeof(where), "%s:%lld-%lld",
             sh->tid >= 0 ? sam_hdr_tid2name(w->hdr, sh->tid) : "*", (long long)sh->beg + 1,
             (long long)sh->end);
    if (err == ENOMEM) {
        ss_error("%s: out of memory reading shard %d (%s); lower -@ or --shard-size, or give "
                 "the run more memory",
                 ss_reader_path(w->rd, 0), sh->idx, where);
        return -1;
    }
    ss_io_input_read_error(w->rd, 0, ret, sh->tid, where, w->fasta, "-f");
    return -1;
}

/* Every record of [beg, end) into the block. 0, or -1 after ss_error(). */
static int load_reads(rl_worker_t *w, const ss_shard_t *sh, int tid, hts_pos_t beg, hts_pos_t end,
                      ss_shard_stats_t *st)
{
    ss_source_t *src = ss_reader_source(w->rd, 0);
    rl_block_reset(w->blk);
    if (ss_source_query(src, tid, beg, end) < 0)
        return -1;
    int r, err = 0;
    for (;;) {
        bam1_t *b = rl_block_next(w->blk);
        if (!b) {
            ss_error("out of memory holding shard %d's reads; use a smaller --shard-size", sh->idx);
            return -1;
        }
        errno = 0;
        if ((r = ss_source_next(src, b)) < 0) {
            err = errno;
            rl_block_unget(w->blk);
            break;
        }
        st->reads++;
        st->bases += (uint64_t)b->core.l_qseq;
    }
    if (r == SS_IO_REPORTED)
        return -1;
    return r < -1 ? read_error(w, sh, r, err) : 0;
}

/* The reference under the block: the read range, a read span and an indel either side. */
static int load_reference(rl_worker_t *w, const ss_shard_t *sh, hts_pos_t end, rl_ref_t *ref)
{
    const char *name = sam_hdr_tid2name(w->hdr, sh->tid);
    hts_pos_t len;
    ss_ref_release(w->ref);
    const char *s = ss_ref_get(w->ref, sh->tid, name, &len);
    if (!s && len < 0)
        return -1; /* out of memory: said */
    if (!s) {
        ss_error("%s: no contig %s in the reference (shard %d); give the FASTA the input "
                 "was aligned to",
                 w->fasta, name, sh->idx);
        return -1;
    }
    hts_pos_t pad = RL_SPAN_MAX + RL_MAX_INDEL + 16;
    hts_pos_t lo = sh->read_beg > pad ? sh->read_beg - pad : 0;
    hts_pos_t hi = end + pad < len ? end + pad : len;
    if (ss_ref_cover(w->ref, sh->tid, lo, hi) < 0)
        return -1;
    *ref = (rl_ref_t){s + lo, lo, hi - lo, len, name};
    return 0;
}

/* A region's records are those its query returns (as view's): original span overlapping it. */
static int in_scope(const rl_read_t *r, const ss_shard_t *sh)
{
    return r->opos < sh->scope_end && r->oend > sh->scope_beg;
}

static int write_block(rl_worker_t *w, const ss_shard_t *sh, ss_out_t *out)
{
    for (int i = 0; i < rl_block_n(w->blk); i++)
        if (in_scope(rl_block_read(w->blk, i), sh) &&
            ss_out_record(out, rl_block_rec(w->blk, i)) < 0)
            return -1;
    return 0;
}

static int pass_unplaced(rl_worker_t *w, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    if (load_reads(w, sh, SS_IO_UNPLACED, 0, 0, st) < 0)
        return -1;
    for (int i = 0; i < rl_block_n(w->blk); i++)
        if (ss_out_record(out, rl_block_rec(w->blk, i)) < 0)
            return -1;
    return 0;
}

static int process(void *ws, const ss_shard_t *sh, ss_out_t *out, ss_shard_stats_t *st)
{
    rl_worker_t *w = ws;
    double per = w->out_per_work > 0 ? w->out_per_work : 1.5;
    double want = per * (double)sh->est_work;
    if (ss_out_reserve(out, want < (double)SS_RESERVE_MAX ? (size_t)want : SS_RESERVE_MAX) < 0)
        return -1;
    if (sh->tid == SS_TID_UNPLACED)
        return pass_unplaced(w, sh, out, st);
    hts_pos_t len = sam_hdr_tid2len(w->hdr, sh->tid);
    hts_pos_t end = sh->read_end < len ? sh->read_end : len;
    rl_ref_t ref;
    rl_counts_t counts = {0};
    if (load_reads(w, sh, sh->tid, sh->read_beg, sh->read_end, st) < 0 ||
        load_reference(w, sh, end, &ref) < 0 ||
        rl_known_load(w->known, ref.name, sh->read_beg, end, &ref, w->blk) < 0)
        return -1;
    if (rl_block_decide(w->blk, w->o, &ref, sh->beg, sh->end, &counts) < 0) {
        ss_error("out of memory deciding shard %d; use a smaller --shard-size", sh->idx);
        return -1;
    }
    if (write_block(w, sh, out) < 0)
        return -1;
    st->counts[0] += counts.windows, st->counts[1] += counts.skipped;
    st->counts[2] += counts.cleaned, st->counts[3] += counts.realigned;
    st->counts[4] += counts.unclipped;
    if (sh->est_work > 0 && ss_out_length(out) > 0)
        w->out_per_work = 1.25 * (double)ss_out_length(out) / (double)sh->est_work;
    return 0;
}

/* --report's kernel_counts; each window is counted by the shard holding its start. */
static const char *const counter_names[] = {"windows",         "windows_skipped", "windows_cleaned",
                                            "reads_realigned", "ends_unclipped",  NULL};

const ss_kernel_t ss_kernel_realign = {
    .name = "realign",
    .summary = "local indel realignment (GATK3-style), mates fixed, the same bytes at any scale",
    .usage = rl_usage,
    .parse = rl_parse,
    .opts_free = rl_opts_free,
    .prepare = prepare,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
    .counter_names = counter_names,
};

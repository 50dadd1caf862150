/*
 * pileup.c -- the `pileup` kernel: samtools mpileup 1.16, one shard at a time.
 *
 * A worker keeps one pileup engine per input (pileup_engine.c: htslib's
 * pileup semantics, laid out for speed), its inputs' read state and a
 * two-contig reference cache across shards. For each shard it starts
 * the pileup at a safe point (pileup_read.c), prints the positions the shard
 * owns, and fills zero-depth lines for -a/-aa (pileup_empty.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>

#include "../../framework/ss_framework_extra.h"
#include "../../genomics/pileup_engine.h"
#include "../../io/ss_diag.h"
#include "pileup.h"

void pl_usage(FILE *fp);
int pl_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);

static void opts_free(void *kopts)
{
    pl_opts_free(kopts);
    free(kopts);
}

/*
 * Bytes a read base prints besides its base and quality, per extra column
 * (PL_COL_* order: -s, -O, QNAME, FLAG, RNAME, POS, MAPQ, RNEXT, PNEXT, -5),
 * and per --output-extra tag: typical widths, with their separators.
 */
static const double extra_col_bytes[PL_N_COLS] = {1, 4, 26, 4, 6, 8, 3, 2, 8, 4};
#define EXTRA_TAG_BYTES 10
#define EMPTY_LINE_HEAD 32 /* CONTIG\tPOS\tREF of a zero-depth line (-a) */
#define EMPTY_COLUMN    6  /* \t0\t*\t* per input on a zero-depth line */

/*
 * What the output weighs, for the planner: at the default columns, 66 bytes
 * per position per input on the benchmark's E. coli at 30x, where the index
 * estimates 19 bytes of BAM per position: 3.5 per byte of estimated work, so
 * 1.75 per byte a read base prints; -a prints every position.
 */
static void output_weight(const pl_opts_t *o, int n_inputs, ss_out_spec_t *out)
{
    double per_base = 2 + EXTRA_TAG_BYTES * o->n_tags;
    for (int c = 0; c < PL_N_COLS; c++)
        if (o->cols & (1 << c))
            per_base += extra_col_bytes[c];
    out->out_per_work = 1.75 * per_base;
    out->out_per_base = o->all ? EMPTY_LINE_HEAD + EMPTY_COLUMN * (double)n_inputs : 0;
}

/* Reads per BAQ batch and input: enough for full SIMD groups, bounded over many inputs. */
static int ahead_cap(int n_inputs)
{
    int cap = 4096 / (n_inputs > 0 ? n_inputs : 1);
    return cap > 64 ? 64 : cap < 8 ? 8 : cap;
}

/* Text out; the run state is the BAQ path (SEQSHARD_BAQ_PATH or the CPU's best). */
static int prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    const pl_opts_t *o = kopts;
    const char *why;
    pl_run_t *r = calloc(1, sizeof(*r));
    if (!r) {
        ss_error("out of memory preparing the pileup");
        return -1;
    }
    *run = r;
    if (baq_path_select(&r->baq_path, &why) < 0) {
        ss_error("%s", why);
        return -1;
    }
    out->format = SS_FMT_TEXT;
    output_weight(o, ss_job_inputs(job)->n, out);
    /* samtools goes on (N there, no BAQ): seqshard stops unless told to go on */
    return ss_job_check_reference(job, "samtools mpileup", "--allow-ref-mismatch",
                                  o->allow_ref_mismatch);
}

static void run_free(void *run)
{
    free(run);
}

/* For --version and --report: the BAQ code this machine runs. */
static const char *describe(void)
{
    static char buf[128];
    baq_path_t p;
    const char *why;
    if (baq_path_select(&p, &why) < 0)
        snprintf(buf, sizeof(buf), "BAQ path: none (%s)", why);
    else
        snprintf(buf, sizeof(buf), "BAQ path: %s", baq_path_name(p));
    return buf;
}

static int worker_init(void **wstate, const void *kopts, const void *run, const ss_job_t *job,
                       ss_reader_t *rd, int worker_id)
{
    (void)worker_id;
    const pl_run_t *r = run;
    /* Written per position: private lines, or the two workers' writes contend (ss_alloc.h). */
    pl_worker_t *w = ss_alloc_private(sizeof(*w));
    if (!w)
        goto oom;
    w->o = kopts;
    w->job = job;
    w->rd = rd;
    w->hdr = ss_job_header(job);
    w->n = ss_job_inputs(job)->n;
    w->in = ss_alloc_private((size_t)w->n * sizeof(*w->in));
    w->eng = ss_alloc_private((size_t)w->n * sizeof(*w->eng));
    w->has_col = ss_alloc_private((size_t)w->n * sizeof(*w->has_col));
    w->at = ss_alloc_private((size_t)w->n * sizeof(*w->at));
    w->n_plp = ss_alloc_private((size_t)w->n * sizeof(*w->n_plp));
    w->plp = ss_alloc_private((size_t)w->n * sizeof(*w->plp));
    w->cov = malloc(sam_hdr_nref(w->hdr) + 1);
    w->scratch = ss_bam_private();
    w->ref = ss_ref_init(ss_job_opts(job)->reference);
    w->ref_aux = ss_ref_init(ss_job_opts(job)->reference);
    w->baq = baq_init(r->baq_path);
    if (!w->baq || !w->in || !w->eng || !w->has_col || !w->at || !w->n_plp || !w->plp || !w->cov ||
        !w->scratch || !w->ref || !w->ref_aux || ss_ks_private(&w->fmt.head, 256) < 0 ||
        ss_ks_private(&w->fmt.ins, 1024) < 0 || ss_ks_private(&w->fmt.bases, 4096) < 0 ||
        ss_ks_private(&w->fmt.quals, 4096) < 0)
        goto oom;
    memset(w->cov, -1, sam_hdr_nref(w->hdr) + 1);
    for (int i = 0; i < w->n; i++) {
        w->in[i].opts = w->o;
        w->in[i].bed = ss_job_bed(job);
        w->in[i].path = ss_job_inputs(job)->paths[i];
        w->in[i].rd = rd;
        w->in[i].i = i;
        w->in[i].baq = w->baq;
        if (!(w->in[i].ahead = pl_ahead_init(ahead_cap(w->n))))
            goto oom;
        w->eng[i] =
            pe_init(pl_read_filtered, &w->in[i], w->o->max_depth, w->o->overlaps, w->o->mods);
        if (!w->eng[i])
            goto oom;
    }
    *wstate = w;
    return 0;
oom:
    ss_error("out of memory starting a pileup worker");
    *wstate = w;
    return -1;
}

static void worker_destroy(void *wstate)
{
    pl_worker_t *w = wstate;
    if (!w)
        return;
    for (int i = 0; w->eng && i < w->n; i++)
        pe_destroy(w->eng[i]);
    for (int i = 0; w->in && i < w->n; i++)
        pl_ahead_destroy(w->in[i].ahead);
    baq_destroy(w->baq);
    free(w->in);
    free(w->eng);
    free(w->has_col);
    free(w->at);
    free(w->n_plp);
    free(w->plp);
    free(w->cov);
    if (w->scratch)
        bam_destroy1(w->scratch);
    ss_ref_destroy(w->ref);
    ss_ref_destroy(w->ref_aux);
    free(w->fmt.ins.s);
    free(w->fmt.bases.s);
    free(w->fmt.quals.s);
    free(w->fmt.head.s);
    free(w);
}

/* Bind this shard's files (the reader may reopen them) and contig. 0, or -1 after ss_error(). */
static int bind_inputs(pl_worker_t *w, int tid)
{
    const char *name = sam_hdr_tid2name(w->hdr, tid);
    w->ctg_ref = ss_ref_get(w->ref, tid, name, &w->ctg_ref_len);
    if (w->ctg_ref_len < 0)
        return -1; /* out of memory: said */
    /* a shard's exact start (pl_safe_start) queries the index up to three times around
     * its first position: each block inflated once */
    ss_reader_cache_blocks(w->rd);
    for (int i = 0; i < w->n; i++) {
        pl_input_t *in = &w->in[i];
        in->src = ss_reader_source(w->rd, i);
        in->hdr = ss_reader_header(w->rd, i);
        in->ref = w->ctg_ref;
        in->ref_len = w->ctg_ref_len;
        in->ref_src = w->ref;
        in->ref_tid = tid;
        in->do_baq = w->o->baq && w->ctg_ref;
        in->read_err = 0;
    }
    return 0;
}

void pl_scope(const pl_worker_t *w, int tid, hts_pos_t *beg, hts_pos_t *end)
{
    const ss_interval_t *reg = ss_job_region(w->job);
    hts_pos_t len = sam_hdr_tid2len(w->hdr, tid);
    *beg = reg ? reg->beg : 0;
    *end = reg && reg->end < len ? reg->end : len;
}

static int pileup_error(pl_worker_t *w, const ss_shard_t *sh)
{
    const char *ctg = sh->tid >= 0 ? sam_hdr_tid2name(w->hdr, sh->tid) : "*";
    if (ss_error_raised())
        return -1; /* said already (the reference could not be read, say) */
    for (int i = 0; i < w->n; i++) {
        const pl_input_t *in = &w->in[i];
        int err = w->eng[i]->error;
        if (in->read_err && in->read_errno == ENOMEM) {
            ss_error("%s: out of memory reading shard %d (%s:%lld-%lld); lower -@ or give the "
                     "run more memory",
                     in->path, sh->idx, ctg, (long long)sh->beg + 1, (long long)sh->end);
            return -1;
        }
        if (in->read_err && ss_reader_is_cram(w->rd, i)) {
            char where[256];
            snprintf(where, sizeof(where), "%s:%lld-%lld", ctg, (long long)sh->beg + 1,
                     (long long)sh->end);
            const ss_common_opts_t *co = ss_job_opts(w->job);
            ss_io_cram_read_error(in->path, in->hdr, co->reference, co->ref_option, sh->idx, where,
                                  sh->tid);
            return -1;
        }
        if (in->read_err) {
            char where[256];
            snprintf(where, sizeof(where), "%s:%lld-%lld", ctg, (long long)sh->beg + 1,
                     (long long)sh->end);
            ss_io_read_error(in->path, ss_reader_file(w->rd, i), in->read_err, sh->idx, where);
            return -1;
        }
        if (err == PE_ERR_NOMEM) {
            ss_error("out of memory in the pileup of shard %d (%s:%lld-%lld); lower -@ or -d",
                     sh->idx, ctg, (long long)sh->beg + 1, (long long)sh->end);
            return -1;
        }
        if (err == PE_ERR_CIGAR) {
            ss_error("%s: in shard %d (%s:%lld-%lld) a read's CIGAR runs past its sequence; "
                     "check the file with samtools view and fix or drop that read",
                     in->path, sh->idx, ctg, (long long)sh->beg + 1, (long long)sh->end);
            return -1;
        }
        if (err == PE_ERR_UNSORTED) {
            ss_error("%s: pileup failed in shard %d (%s:%lld-%lld): the input is not "
                     "coordinate-sorted; sort it with samtools sort and index it with samtools "
                     "index",
                     in->path, sh->idx, ctg, (long long)sh->beg + 1, (long long)sh->end);
            return -1;
        }
    }
    ss_error("pileup failed in shard %d (%s:%lld-%lld)", sh->idx, ctg, (long long)sh->beg + 1,
             (long long)sh->end);
    return -1;
}

/*
 * The next line's position: the smallest next column over the inputs, as
 * htslib's multi-pileup picks it; at[i] marks the inputs that have it.
 * Returns 1, 0 when every input is done, -1 on error.
 */
static int next_line(pl_worker_t *w, hts_pos_t *pos)
{
    hts_pos_t min = HTS_POS_MAX;
    for (int i = 0; i < w->n; i++) {
        if (!w->has_col[i]) {
            int r = pe_next_pos(w->eng[i]);
            if (r < 0)
                return -1;
            w->has_col[i] = (unsigned char)r;
        }
        if (w->has_col[i] && w->eng[i]->pos < min)
            min = w->eng[i]->pos;
    }
    for (int i = 0; i < w->n; i++)
        w->at[i] = w->has_col[i] && w->eng[i]->pos == min;
    *pos = min;
    return min != HTS_POS_MAX;
}

/* The inputs that had a column at the line just handled move on. */
static void line_done(pl_worker_t *w)
{
    for (int i = 0; i < w->n; i++)
        if (w->at[i]) {
            pe_done_pos(w->eng[i]);
            w->has_col[i] = 0;
        }
}

/*
 * One covered line. Extra columns and -M need every read's pileup fields, so
 * those lines build the columns and use the general formatter; the common
 * case reads the engines directly.
 */
static int format_line(pl_worker_t *w, const char *ctg, hts_pos_t pos, kstring_t *out)
{
    const pl_opts_t *o = w->o;
    if (!o->cols && !o->n_tags && !o->mods)
        return pl_format_engine_line(out, o, w->hdr, ctg, pos, w->ctg_ref, w->ctg_ref_len, w->n,
                                     w->eng, w->at, &w->fmt);
    for (int i = 0; i < w->n; i++) {
        w->n_plp[i] = 0;
        w->plp[i] = w->at[i] ? pe_column(w->eng[i], &w->n_plp[i]) : NULL;
        if (w->at[i] && !w->plp[i])
            return -1;
    }
    return pl_format_line(out, o, w->hdr, ctg, pos, w->ctg_ref, w->ctg_ref_len, w->n, w->n_plp,
                          w->plp, &w->fmt);
}

/* A line that is not printed still moves every read's CIGAR cursor. */
static void skip_line(pl_worker_t *w)
{
    for (int i = 0; i < w->n; i++)
        if (w->at[i])
            pe_skip_column(w->eng[i]);
    line_done(w);
}

/*
 * Output bytes per position before a worker has finished a shard: the fixed
 * columns, and per input a base and a quality per read at about 45x. Only the
 * bytes written are touched, so guessing high costs address space alone,
 * while guessing low makes the first buffer grow by copying into new pages
 * (three copies for three 30x inputs at the former 64).
 */
#define FIRST_BYTES_PER_BASE(n_inputs) (32 + 96 * (size_t)(n_inputs))

/*
 * How far the shard's CRAM window reaches past each of its ends, where each
 * base costs ~72 bytes per 30x CRAM input per worker (it was 1 kb each side,
 * more than half of a 1000-input shard's window). Before the shard, pl_safe_start
 * queries [beg - 1, beg), then from the earliest start among the reads
 * covering beg - 1, one read span back; past it, pl_query_shard's first range
 * serves the shard unless a read taken ends beyond it. So the reach is the
 * longest read span the worker has read (+2: the queries' own margin), at
 * most WINDOW_REACH_MAX, READ_SPAN_GUESS before its first read. A read longer
 * than that costs its CRAM a second slice decode in the shard, never a
 * different output.
 */
#define WINDOW_REACH_MAX 512
#define READ_SPAN_GUESS  256

static hts_pos_t window_reach(const pl_worker_t *w)
{
    hts_pos_t longest = 0;
    for (int i = 0; i < w->n; i++)
        if (w->in[i].longest > longest)
            longest = w->in[i].longest;
    hts_pos_t reach = longest > 0 ? longest + 2 : READ_SPAN_GUESS;
    return reach < WINDOW_REACH_MAX ? reach : WINDOW_REACH_MAX;
}

/*
 * Where the shard's query of reads ends when it prints to last_end. Past the
 * contig's end only reads that start before it are kept when the contig is in
 * the reference (pl_read keeps none starting past the FASTA's end), and a query
 * to the contig's end returns them all: the index is then asked for the bins of
 * the contig, not those of the whole 2^29 bp range an open end covers.
 */
static hts_pos_t query_end(const pl_worker_t *w, const ss_shard_t *sh, hts_pos_t last_end)
{
    if (last_end <= sh->end || !w->ctg_ref)
        return last_end;
    hts_pos_t kept_before = w->ctg_ref_len > sh->end ? w->ctg_ref_len : sh->end;
    return kept_before < last_end ? kept_before : last_end;
}

static int process(void *wstate, const ss_shard_t *sh, ss_out_t *so, ss_shard_stats_t *st)
{
    pl_worker_t *w = wstate;
    if (sh->tid == SS_TID_UNPLACED) {
        if (bind_inputs(w, 0) < 0)
            return -1;
        return pl_check_unplaced(w->in, w->n, w->scratch, &st->reads) < 0 ? pileup_error(w, sh) : 0;
    }
    kstring_t *out = ss_out_text(so);
    const pl_opts_t *o = w->o;
    const char *ctg = sam_hdr_tid2name(w->hdr, sh->tid);
    const ss_bed_t *bed = ss_job_bed(w->job);
    hts_pos_t scope_beg, scope_end, pos, cursor = sh->beg;
    int ret, covered = 0;

    pl_scope(w, sh->tid, &scope_beg, &scope_end);
    /*
     * Reads may run past their contig's @SQ LN, and samtools prints those columns
     * (N as the base): the contig's last shard prints them, up to the region's end.
     */
    hts_pos_t last_end = sh->end >= sam_hdr_tid2len(w->hdr, sh->tid) ? sh->scope_end : sh->end;
    /* the reference is read by window: what this shard prints, then what its reads need */
    ss_ref_release(w->ref);
    ss_ref_release(w->ref_aux);
    if (bind_inputs(w, sh->tid) < 0 || ss_ref_cover(w->ref, sh->tid, sh->beg, sh->end) < 0)
        return -1;
    hts_pos_t reach = window_reach(w), head = sh->beg - reach;
    /* the reads past the shard that may change its last columns (pl_query_shard) */
    hts_pos_t follow = o->overlaps ? sh->scope_end : last_end;
    hts_pos_t tail = sh->end + reach < follow ? sh->end + reach : follow;
    ss_reader_window(w->rd, sh->tid, head > scope_beg ? head : scope_beg,
                     tail > sh->end ? tail : sh->end);
    hts_pos_t start =
        pl_safe_start(w->in, w->n, sh->tid, sh->beg, scope_beg, o->max_depth, w->scratch);
    if (start < 0)
        return pileup_error(w, sh); /* a read error while finding the start: say which */
    for (int i = 0; i < w->n; i++) {
        w->in[i].baq_from = sh->beg;
        w->in[i].n_read = 0;
        w->in[i].read_err = 0;
        if (pl_query_shard(&w->in[i], sh->tid, start, query_end(w, sh, last_end), reach, follow) <
            0)
            return pileup_error(w, sh);
        pe_reset(w->eng[i], sh->tid);
        w->has_col[i] = 0;
    }
    /*
     * Size the output once for the shard (about a line per base at the depth
     * seen so far) instead of letting it double its way up: steady state
     * should not allocate per read.
     */
    size_t want = (size_t)(sh->end - sh->beg) *
                  (w->bytes_per_base ? w->bytes_per_base : FIRST_BYTES_PER_BASE(w->n));
    if (ss_out_reserve(so, want) < 0) /* capped where the shard's text would spill */
        return -1;
    while ((ret = next_line(w, &pos)) > 0 && pos < last_end) {
        if (pos < sh->beg) {
            /* before the shard: the pileup runs only to reach the reference run's state */
            skip_line(w);
            continue;
        }
        covered = 1;
        if (o->all && cursor < pos && pl_emit_uncovered(w, sh->tid, cursor, pos, 1, 1, out) < 0)
            return pileup_error(w, sh);
        if (o->all && ss_out_checkpoint(so) < 0)
            return -1;
        cursor = pos + 1;
        st->bases++;
        if (bed && !ss_bed_overlap(bed, ctg, pos, pos + 1)) {
            skip_line(w);
            continue;
        }
        if (format_line(w, ctg, pos, out) < 0) {
            ss_error("out of memory formatting shard %d", sh->idx);
            return -1;
        }
        line_done(w);
        if (ss_out_checkpoint(so) < 0) /* a shard's text may pass memory: see ss_out_checkpoint */
            return -1;
    }
    if (ret < 0)
        return pileup_error(w, sh);
    for (int i = 0; i < w->n; i++)
        st->reads += w->in[i].n_read;
    if (out->l > 0 && sh->end > sh->beg) { /* a quarter more: deeper shards rarely outgrow it */
        size_t per_base = out->l / (size_t)(sh->end - sh->beg);
        w->bytes_per_base = per_base + per_base / 4 + 8;
    }
    /* -a fills the contig only: a shard past its end (a region starting there) prints reads */
    hts_pos_t len = sam_hdr_tid2len(w->hdr, sh->tid), fill = sh->end < len ? sh->end : len;
    if (o->all && cursor < fill && pl_emit_uncovered(w, sh->tid, cursor, fill, 0, covered, out) < 0)
        return pileup_error(w, sh);
    return 0;
}

const ss_kernel_t ss_kernel_pileup = {
    .name = "pileup",
    .summary = "text pileup, byte-identical to samtools mpileup",
    .usage = pl_usage,
    .parse = pl_parse,
    .opts_free = opts_free,
    .prepare = prepare,
    .run_free = run_free,
    .describe = describe,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
    .stdin_ok = 1, /* "-": standard input, read by one worker in one pass */
    /*
     * samtools mpileup without -r reads the whole file, the unplaced reads at
     * its end too, and fails on a damaged one: a whole-genome plan ends with
     * their shard, which checks them and prints nothing (pl_check_unplaced).
     */
    .unplaced = 1,
    .past_end = 1, /* samtools prints what reads running past a contig's end cover */
};

/*
 * pileup.c -- the `pileup` kernel: samtools mpileup 1.16, one shard at a time.
 *
 * A worker keeps one htslib multi-pileup iterator, its inputs' read state
 * and a two-contig reference cache across shards. For each shard it starts
 * the pileup at a safe point (pileup_read.c), prints the positions the shard
 * owns, and fills zero-depth lines for -a/-aa (pileup_empty.c).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pileup.h"

void pl_usage(FILE *fp);
int pl_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts);

/* -M: each read gets its base-modification state as it enters the pileup. */
static int mods_create(void *data, const bam1_t *b, bam_pileup_cd *cd)
{
    (void)data;
    hts_base_mod_state *m = hts_base_mod_state_alloc();
    cd->p = m;
    return m ? bam_parse_basemod(b, m) : -1;
}

static int mods_destroy(void *data, const bam1_t *b, bam_pileup_cd *cd)
{
    (void)data, (void)b;
    hts_base_mod_state_free(cd->p);
    cd->p = NULL;
    return 0;
}

static void opts_free(void *kopts)
{
    pl_opts_free(kopts);
    free(kopts);
}

static int prepare(void *kopts, const ss_job_t *job)
{
    pl_opts_t *o = kopts;
    if (o->max_depth == 0)
        o->max_depth = INT_MAX; /* samtools: -d 0 lifts the cap */
    (void)job;
    return 0;
}

static int worker_init(void **wstate, void *kopts, const ss_job_t *job, ss_reader_t *rd,
                       int worker_id)
{
    (void)worker_id;
    pl_worker_t *w = calloc(1, sizeof(*w));
    if (!w)
        goto oom;
    w->o = kopts;
    w->job = job;
    w->rd = rd;
    w->hdr = ss_job_header(job);
    w->n = ss_job_inputs(job)->n;
    w->in = calloc(w->n, sizeof(*w->in));
    w->data = calloc(w->n, sizeof(*w->data));
    w->n_plp = calloc(w->n, sizeof(*w->n_plp));
    w->plp = calloc(w->n, sizeof(*w->plp));
    w->cov = malloc(sam_hdr_nref(w->hdr) + 1);
    w->scratch = bam_init1();
    w->ref = ss_ref_init(ss_job_opts(job)->reference);
    w->ref_aux = ss_ref_init(ss_job_opts(job)->reference);
    if (!w->in || !w->data || !w->n_plp || !w->plp || !w->cov || !w->scratch || !w->ref ||
        !w->ref_aux)
        goto oom;
    memset(w->cov, -1, sam_hdr_nref(w->hdr) + 1);
    for (int i = 0; i < w->n; i++) {
        w->in[i].opts = w->o;
        w->in[i].bed = ss_job_bed(job);
        w->in[i].path = ss_job_inputs(job)->paths[i];
        w->data[i] = &w->in[i];
    }
    w->mplp = bam_mplp_init(w->n, pl_read_filtered, w->data);
    if (!w->mplp)
        goto oom;
    if (w->o->mods) {
        bam_mplp_constructor(w->mplp, mods_create);
        bam_mplp_destructor(w->mplp, mods_destroy);
    }
    if (w->o->overlaps && bam_mplp_init_overlaps(w->mplp) < 0)
        goto oom;
    bam_mplp_set_maxcnt(w->mplp, w->o->max_depth);
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
    if (w->mplp)
        bam_mplp_destroy(w->mplp);
    for (int i = 0; w->in && i < w->n; i++)
        hts_itr_destroy(w->in[i].itr);
    free(w->in);
    free(w->data);
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
    free(w);
}

/* Bind this shard's files (the reader may reopen them) and contig. */
static void bind_inputs(pl_worker_t *w, int tid)
{
    const char *name = sam_hdr_tid2name(w->hdr, tid);
    w->ctg_ref = ss_ref_get(w->ref, tid, name, &w->ctg_ref_len);
    for (int i = 0; i < w->n; i++) {
        pl_input_t *in = &w->in[i];
        in->fp = ss_reader_file(w->rd, i);
        in->idx = ss_reader_index(w->rd, i);
        in->hdr = ss_reader_header(w->rd, i);
        in->ref = w->ctg_ref;
        in->ref_len = w->ctg_ref_len;
        in->do_baq = w->o->baq && w->ctg_ref;
    }
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
    for (int i = 0; i < w->n; i++)
        if (w->in[i].read_err) {
            int is_cram = w->in[i].fp && w->in[i].fp->format.format == cram;
            ss_error("%s: reading shard %d (%s:%lld-%lld) failed: %s", w->in[i].path, sh->idx,
                     sam_hdr_tid2name(w->hdr, sh->tid), (long long)sh->beg + 1,
                     (long long)sh->end,
                     is_cram ? "CRAM decoding needs the reference it was made with; give it with "
                            "-f ref.fa (or REF_PATH), or check the file with samtools quickcheck"
                          : "the file is truncated or corrupt; check it with samtools "
                            "quickcheck and regenerate it");
            return -1;
        }
    ss_error("%s: pileup failed in shard %d (%s:%lld-%lld): the input is not coordinate-sorted; "
             "sort it with samtools sort and index it with samtools index",
             w->n == 1 ? w->in[0].path : "one of the inputs", sh->idx,
             sam_hdr_tid2name(w->hdr, sh->tid), (long long)sh->beg + 1, (long long)sh->end);
    return -1;
}

static int process(void *wstate, const ss_shard_t *sh, kstring_t *out, ss_shard_stats_t *st)
{
    pl_worker_t *w = wstate;
    const pl_opts_t *o = w->o;
    const char *ctg = sam_hdr_tid2name(w->hdr, sh->tid);
    const ss_bed_t *bed = ss_job_bed(w->job);
    hts_pos_t scope_beg, scope_end, pos, cursor = sh->beg;
    int tid, ret, covered = 0;

    pl_scope(w, sh->tid, &scope_beg, &scope_end);
    bind_inputs(w, sh->tid);
    hts_pos_t start = pl_safe_start(w->in, w->n, sh->tid, sh->beg, scope_beg, o->max_depth,
                                    w->scratch);
    if (start < 0)
        return -1;
    for (int i = 0; i < w->n; i++) {
        w->in[i].baq_from = sh->beg;
        w->in[i].n_read = 0;
        w->in[i].read_err = 0;
        if (pl_query(&w->in[i], sh->tid, start, sh->end) < 0)
            return -1;
    }
    /*
     * Size the output once for the shard (about a line per base at the depth
     * seen so far) instead of letting it double its way up: steady state
     * should not allocate per read (issue 5).
     */
    size_t want = (size_t)(sh->end - sh->beg) * (w->bytes_per_base ? w->bytes_per_base : 64);
    if (out->m < want && ks_resize(out, want) < 0) {
        ss_error("out of memory for shard %d's output", sh->idx);
        return -1;
    }
    bam_mplp_reset(w->mplp);
    while ((ret = bam_mplp64_auto(w->mplp, &tid, &pos, w->n_plp, w->plp)) > 0) {
        if (pos < sh->beg)
            continue;
        if (pos >= sh->end || tid != sh->tid)
            break;
        covered = 1;
        if (o->all && cursor < pos && pl_emit_uncovered(w, tid, cursor, pos, 1, 1, out) < 0)
            return -1;
        cursor = pos + 1;
        st->bases++;
        if (bed && !ss_bed_overlap(bed, ctg, pos, pos + 1))
            continue;
        if (pl_format_line(out, o, w->hdr, ctg, pos, w->ctg_ref, w->ctg_ref_len, w->n, w->n_plp,
                           w->plp, &w->fmt) < 0) {
            ss_error("out of memory formatting shard %d", sh->idx);
            return -1;
        }
    }
    /*
     * htslib frees a read's -M state only when the read leaves the pileup, not
     * on reset: run the pileup out so none is left behind.
     */
    if (ret > 0 && o->mods)
        while ((ret = bam_mplp64_auto(w->mplp, &tid, &pos, w->n_plp, w->plp)) > 0)
            ;
    if (ret < 0)
        return pileup_error(w, sh);
    for (int i = 0; i < w->n; i++)
        st->reads += w->in[i].n_read;
    if (out->l > 0 && sh->end > sh->beg)
        w->bytes_per_base = out->l / (size_t)(sh->end - sh->beg) + 8;
    if (o->all && cursor < sh->end && pl_emit_uncovered(w, sh->tid, cursor, sh->end, 0, covered, out) < 0)
        return -1;
    return 0;
}

const ss_kernel_t ss_kernel_pileup = {
    .name = "pileup",
    .summary = "text pileup, byte-identical to samtools mpileup",
    .out_kind = SS_OUT_TEXT,
    .usage = pl_usage,
    .parse = pl_parse,
    .opts_free = opts_free,
    .prepare = prepare,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
};

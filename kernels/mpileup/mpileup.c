/*
 * mpileup.c -- the `mpileup` kernel: bcftools mpileup 1.16's genotype
 * likelihoods (VCF/BCF), one shard at a time, with the same bytes as one
 * bcftools run over the whole input; --call runs bcftools call in the same pass.
 *
 * A shard runs htslib's pileup, as bcftools does, from a point early enough
 * (mp_shard_start) that every column it prints sees the reads, the depth cap,
 * the mate overlaps and the lazily applied BAQ of one run over the whole input;
 * columns before the shard are only walked. Each printed column makes a SNP
 * record and, where reads carry indels, an indel record (likelihood/), encoded
 * as VCF text or BCF into the shard's output.
 *
 * The kernel's rooms, along its flow (each header says what it holds):
 *   ./          mpileup.c (this file: the kernel table, the run's set-up, shards,
 *               census, carried values; no other file calls into it), mp_opts.c
 *               (options, --help; mp_opts.h), mp_header.c (the VCF header; mp_run.h,
 *               the run's state), mp_gvcf.c (-g blocks; mp_gvcf.h)
 *   select/     what is read, and as which sample: mp_samples.c (read groups ->
 *               samples), mp_sample_lists.c (-s/-S, -G), mp_region_select.c (-r/-R
 *               regions, -t/-T targets); mp_select.h
 *   pileup/     a worker's reads into columns: mp_read.c (the read filter, a shard's
 *               start; mp_read.h), mp_mplp.c (htslib's multi-input pileup; mp_mplp.h),
 *               mp_ref.c (the reference window; mp_ref.h), mp_pass.c (passes, the look
 *               back), mp_column.c (a column: partial BAQ, samples, its records
 *               written); mp_worker.h (the worker)
 *   likelihood/ a column's likelihoods and record: mp_glf.c, mp_errmod.c, mp_bins.c,
 *               mp_words.c, mp_bias.c, mp_record.c, mp_rng.c (the random stream),
 *               mp_site_bcf.c (the record's bytes; mp_bcf.h); mp_likelihood.h
 *   indel/      the indel model: mp_indel*.c; mp_indel.h (for its own files)
 *   call/       --call, bcftools call: mc_*.c; mc_call.h (what the kernel uses),
 *               mc_priv.h (for call/ only)
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../framework/ss_framework_extra.h"
#include "base/ss_exact_fp.h"
#include "pileup/mp_worker.h"

static void opts_free(void *kopts)
{
    mp_opts_free(kopts);
    free(kopts);
}

static void run_free(void *run)
{
    mp_run_t *r = run;
    if (!r)
        return;
    mp_samples_free(&r->smpl);
    mp_targets_free(&r->targets);
    if (r->out_hdr && r->out_hdr != r->vcf_hdr)
        bcf_hdr_destroy(r->out_hdr);
    if (r->vcf_hdr)
        bcf_hdr_destroy(r->vcf_hdr);
    free(r->head.s);
    if (r->missed)
        mc_missed_plan_free(*r->missed);
    free(r->missed);
    free(r);
}

/*
 * htslib's probaln_glocal (BAQ and indel scoring) fills a static table of
 * 10^(-q/10) on its first call, testing only its first entry: a second thread
 * arriving mid-fill reads zeros. One call here, before any worker starts,
 * fills it for the whole run.
 */
static void fill_probaln_table(void)
{
    static const uint8_t ref[4] = {0, 1, 2, 3}, query[4] = {0, 1, 2, 3}, qual[4] = {30, 30, 30, 30};
    probaln_par_t par = {0.001, 0.1, 7};
    int state[4];
    uint8_t q[4];
    probaln_glocal(ref, 4, query, 4, qual, &par, state, q);
}

/*
 * With --call, the output is bcftools call's: its header (from mpileup's,
 * which keeps seqshard's version and command lines) replaces mpileup's bytes.
 * 0, or -1 after ss_error().
 */
static int call_header(mp_run_t *r, const mp_opts_t *o)
{
    r->out_hdr = r->vcf_hdr;
    if (!o->call)
        return 0;
    if (!(r->out_hdr = mc_out_header(o->call, r->vcf_hdr, 1))) {
        ss_error("--call: cannot set up bcftools call's header (the line above says why)");
        return -1;
    }
    mc_caller_t *probe = mc_init(o->call, r->vcf_hdr);
    if (!probe) {
        ss_error("--call: cannot start a caller (the line above says why)");
        return -1;
    }
    int memoryless = mc_caller_memoryless(probe);
    mc_destroy(probe);
    if (!memoryless) {
        ss_error("--call: a sample with its own ploidy in -S, under ploidy rules that vary "
                 "along the genome (CHROM FROM TO lines: --ploidy GRCh37/GRCh38 or "
                 "--ploidy-file), takes bcftools call's ploidy only from its first record where "
                 "the ploidy changes, which shards cannot follow; give the ploidy by sex (M/F) "
                 "instead, or run bcftools call");
        return -1;
    }
    int bcf = o->out_type == MP_OUT_BCF || o->out_type == MP_OUT_BCF_GZ;
    r->head.l = 0;
    if (mp_header_bytes(r->out_hdr, bcf, &r->head) < 0) {
        ss_error("out of memory writing the output header");
        return -1;
    }
    return 0;
}

/* --call -i: what seqshard refuses before any work, and the plan's slot. 0, or -1. */
static int missed_check(mp_run_t *r, const mp_opts_t *o, const ss_job_t *job)
{
    if (o->gvcf_ranges) {
        ss_error("--call -i with mpileup's -g: bcftools call 1.16 writes -i's lines among the "
                 "blocks out of order; drop one of them");
        return -1;
    }
    if (ss_job_opts(job)->write_index) {
        ss_error("--call -i with --write-index: bcftools call 1.16 -i ends the file with the "
                 "targets of contigs without a call, out of order, so it cannot be indexed; "
                 "drop --write-index");
        return -1;
    }
    const mc_targets_t *t = &o->call->targets;
    for (int i = 0; i < t->n_contigs; i++)
        if (bcf_hdr_name2id(r->out_hdr, t->contigs[i].name) < 0) {
            ss_error("--call -i: the targets file %s names contig %s, which the input's header "
                     "lacks (bcftools call 1.16 fails writing it); leave it out of the targets",
                     t->path, t->contigs[i].name);
            return -1;
        }
    r->call = o->call;
    if (!(r->missed = calloc(1, sizeof(*r->missed)))) {
        ss_error("out of memory preparing mpileup");
        return -1;
    }
    return 0;
}

static int prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    const mp_opts_t *o = kopts;
    mp_run_t *r = calloc(1, sizeof(*r));
    *run = r;
    if (!r) {
        ss_error("out of memory preparing mpileup");
        return -1;
    }
    /* bcftools goes on (N there): seqshard stops unless told to go on */
    if (ss_job_check_reference(job, "bcftools mpileup", "--allow-ref-mismatch",
                               o->allow_ref_mismatch) < 0)
        return -1;
    if (mp_targets_load(&r->targets, o) < 0 || mp_samples_build(&r->smpl, job, o) < 0 ||
        mp_header_build(r, o, job, &r->head) < 0 || call_header(r, o) < 0)
        return -1;
    const char *why;
    if (baq_path_select(&r->baq_path, &why) < 0) {
        ss_error("%s", why);
        return -1;
    }
    fill_probaln_table();
    out->format = SS_FMT_TEXT;
    out->text_header = r->head.s; /* copied by the framework */
    out->text_header_len = r->head.l;
    /* bcftools compresses by -O alone, whatever the file's name */
    out->text_bgzf = o->out_type == MP_OUT_BCF_GZ || o->out_type == MP_OUT_VCF_GZ
                         ? SS_TEXT_BGZF_ALWAYS
                         : SS_TEXT_BGZF_NEVER;
    out->text_index = !ss_job_opts(job)->write_index ? SS_TEXT_INDEX_NONE
                      : o->index_tbi                 ? SS_TEXT_INDEX_VCF_TBI
                                                     : SS_TEXT_INDEX_VCF;
    out->level = o->level;
    out->census = mp_samples_can_draw(&r->smpl, o->max_depth);
    if (o->call && o->call->insert_missed) {
        if (missed_check(r, o, job) < 0)
            return -1;
        out->gather = 1; /* where each shard's untaken targets go: see mc_missed.c */
    }
    /* about 250 bytes of VCF per covered position and sample at 30x: ~1.5 per byte of BAM */
    out->out_per_work = 1.5 * (r->smpl.n > 0 ? r->smpl.n : 1);
    return 0;
}

/* The site's arrays, sized for n samples as bcftools sizes them. 0 or -1. */
static int site_init(mp_worker_t *w, int n)
{
    mp_site_t *bc = &w->bc;
    int f = w->o->fmt_flag, nnm = (f & MP_FMT_NMBZ) ? n + 1 : 1;
    bc->n = n;
    bc->bcf_hdr = w->run->vcf_hdr;
    bc->PL = ss_alloc_private(15 * (size_t)n * sizeof(*bc->PL));
    bc->QS = ss_alloc_private((size_t)n * MP_MAX_ALLELES * sizeof(*bc->QS));
    bc->DP4 = ss_alloc_private((size_t)n * 4 * sizeof(int32_t));
    bc->fmt_arr = ss_alloc_private((size_t)n * sizeof(float));
    bc->ADR = ss_alloc_private((size_t)(n + 1) * MP_MAX_ALLELES * sizeof(int32_t));
    bc->ADF = ss_alloc_private((size_t)(n + 1) * MP_MAX_ALLELES * sizeof(int32_t));
    bc->SCR = ss_alloc_private((size_t)(n + 1) * sizeof(*bc->SCR));
    bc->ref_nm = ss_alloc_private((size_t)nnm * MP_N_NM * sizeof(int32_t));
    bc->alt_nm = ss_alloc_private((size_t)nnm * MP_N_NM * sizeof(int32_t));
    bc->mwu_nm = ss_alloc_private((size_t)(n + 1) * sizeof(float));
    if (!bc->PL || !bc->QS || !bc->DP4 || !bc->fmt_arr || !bc->ADR || !bc->ADF || !bc->SCR ||
        !bc->ref_nm || !bc->alt_nm || !bc->mwu_nm)
        return -1;
    for (int i = 0; i < n; i++) {
        w->bcr[i].QS = bc->QS + i * MP_MAX_ALLELES;
        w->bcr[i].ADR = bc->ADR + (i + 1) * MP_MAX_ALLELES;
        w->bcr[i].ADF = bc->ADF + (i + 1) * MP_MAX_ALLELES;
        if (f & MP_FMT_NMBZ) {
            w->bcr[i].ref_nm = bc->ref_nm + (i + 1) * MP_N_NM;
            w->bcr[i].alt_nm = bc->alt_nm + (i + 1) * MP_N_NM;
        }
    }
    w->bca->ref_nm = bc->ref_nm;
    w->bca->alt_nm = bc->alt_nm;
    return 0;
}

static void site_free(mp_site_t *bc)
{
    free(bc->PL), free(bc->QS), free(bc->DP4), free(bc->fmt_arr), free(bc->ADR);
    free(bc->ADF), free(bc->SCR), free(bc->ref_nm), free(bc->alt_nm), free(bc->mwu_nm);
    free(bc->tmp.s);
}

/* The calling settings bcftools copies from its options into bcf_callaux_t. */
static void aux_settings(mp_aux_t *a, const mp_opts_t *o)
{
    a->openQ = o->openQ, a->extQ = o->extQ, a->tandemQ = o->tandemQ;
    a->indel_bias = o->indel_bias;
    a->min_frac = o->min_frac;
    a->min_support = o->min_support;
    a->per_sample_flt = o->per_sample_flt;
    a->fmt_flag = o->fmt_flag;
    a->ambig_reads = o->ambig_reads;
    a->indel_win_size = o->indel_win_size;
}

/*
 * A record the worker builds sites in, as bcf_init1 makes one, with its buffers
 * (the encoded fields, the alleles and their text) on private lines: they are
 * written for every site, and tcmalloc would otherwise pack the two workers'
 * small ones side by side (ss_alloc.h). They grow as htslib grows them.
 */
static bcf1_t *private_record(void)
{
    bcf1_t *rec = ss_alloc_private(sizeof(*rec));
    if (!rec)
        return NULL;
    rec->d.als = ss_alloc_private(256);
    rec->d.allele = ss_calloc_private(64, sizeof(char *));
    rec->d.id = ss_alloc_private(64);
    if (!rec->d.als || !rec->d.allele || !rec->d.id || ss_ks_private(&rec->shared, 4096) < 0 ||
        ss_ks_private(&rec->indiv, 4096) < 0) {
        bcf_destroy1(rec);
        return NULL;
    }
    rec->d.m_als = 256;
    rec->d.m_allele = 64;
    rec->d.m_id = 64;
    return rec;
}

static int worker_init(void **wstate, const void *kopts, const void *run, const ss_job_t *job,
                       ss_reader_t *rd, int worker_id)
{
    (void)worker_id;
    mp_worker_t *w = ss_alloc_private(sizeof(*w));
    *wstate = w;
    if (!w)
        goto oom;
    w->o = kopts;
    w->run = run;
    w->job = job;
    w->rd = rd;
    w->hdr = ss_job_header(job);
    w->n = ss_job_inputs(job)->n;
    w->n_smpl = w->run->smpl.n;
    w->bcf = w->o->out_type == MP_OUT_BCF || w->o->out_type == MP_OUT_BCF_GZ;
    w->max_indel_depth = w->o->max_indel_depth * w->n_smpl;
    w->in = ss_calloc_private((size_t)w->n, sizeof(*w->in));
    w->n_plp = ss_calloc_private((size_t)w->n, sizeof(*w->n_plp));
    w->plp = ss_calloc_private((size_t)w->n, sizeof(*w->plp));
    w->grp = ss_calloc_private((size_t)w->n_smpl, sizeof(*w->grp));
    w->grp_n = ss_calloc_private((size_t)w->n_smpl, sizeof(*w->grp_n));
    w->grp_plp = ss_calloc_private((size_t)w->n_smpl, sizeof(*w->grp_plp));
    w->bcr = ss_calloc_private((size_t)w->n_smpl, sizeof(*w->bcr));
    w->bca = mp_aux_init(-1., w->o->min_baseQ, w->o->max_baseQ, w->o->delta_baseQ);
    w->rec = private_record();
    w->sync = private_record();
    w->scratch = ss_bam_private();
    w->baq = baq_init(w->run->baq_path);
    const char *fasta = ss_job_opts(job)->reference;
    if (!(w->refs = ss_ref_init(fasta))) {
        if (!fasta)
            goto oom;
        return -1; /* ss_ref_init said why */
    }
    if (!w->in || !w->n_plp || !w->plp || !w->grp || !w->grp_n || !w->grp_plp || !w->bcr ||
        !w->bca || !w->rec || !w->sync || !w->scratch || !w->baq)
        goto oom;
    w->bca->baq = w->baq;
    aux_settings(w->bca, w->o);
    if (w->o->gvcf_ranges && !(w->gv = mp_gvcf_init(w->o->gvcf_ranges, w->o->n_gvcf_ranges)))
        goto oom;
    if (w->o->call &&
        (!(w->caller = mc_init(w->o->call, w->run->vcf_hdr)) || !(w->called = private_record()))) {
        ss_error("--call: cannot start a caller (the line above says why)");
        return -1;
    }
    if (site_init(w, w->n_smpl) < 0)
        goto oom;
    if (!(w->file_sample = ss_calloc_private((size_t)w->n, sizeof(int))))
        goto oom;
    if (w->n == 1 && w->n_smpl == 1) /* one input, one sample: its reads are all that sample's */
        w->file_sample[0] = 0;
    else if (!mp_samples_one_per_file(&w->run->smpl, w->file_sample))
        free(w->file_sample), w->file_sample = NULL;
    for (int i = 0; i < w->n; i++) {
        w->in[i].i = i;
        w->in[i].o = w->o;
        w->in[i].smpl = &w->run->smpl;
        if (w->run->targets.idx) {
            w->in[i].targets = &w->run->targets;
            if (!(w->in[i].targets_itr = regitr_init(w->run->targets.idx)))
                goto oom;
        }
    }
    return 0;
oom:
    ss_error("out of memory starting an mpileup worker");
    return -1;
}

static void worker_destroy(void *wstate)
{
    mp_worker_t *w = wstate;
    if (!w)
        return;
    for (int i = 0; w->grp && i < w->n_smpl; i++)
        free(w->grp[i].plp);
    for (int i = 0; w->in && i < w->n; i++)
        if (w->in[i].targets_itr)
            regitr_destroy(w->in[i].targets_itr);
    free(w->in), free(w->n_plp), free(w->plp), free(w->grp), free(w->grp_n);
    free(w->grp_plp), free(w->bcr), free(w->file_sample);
    baq_destroy(w->baq);
    mp_mplp_destroy(w->mplp);
    free(w->baq_reads), free(w->baq_ret);
    if (w->bca) {
        mp_indel_ws_free(w->bca);
        mp_aux_destroy(w->bca);
    }
    site_free(&w->bc);
    mp_gvcf_destroy(w->gv);
    mc_destroy(w->caller);
    if (w->called)
        bcf_destroy1(w->called);
    for (int i = 0; i < 2; i++)
        if (w->site[i])
            bcf_destroy1(w->site[i]);
    if (w->rec)
        bcf_destroy1(w->rec);
    if (w->sync)
        bcf_destroy1(w->sync);
    if (w->scratch)
        bam_destroy1(w->scratch);
    ss_ref_destroy(w->refs);
    free(w);
}

/* A shard's pass: its records, and whether its indel records needed the carried values. */
typedef struct {
    ss_out_t *so; /* NULL before the run (-i's summary): the records go to scratch */
    kstring_t *scratch;
    ss_shard_stats_t *st;
    hts_pos_t end; /* the shard's end: past it, only its last gVCF block is followed */
    int carry_known;
    mp_worker_t *w;
    int past_end;       /* the pass went past the shard's end (following a gVCF block) */
    uint64_t own_draws; /* the draws the shard's own columns made, once past_end */
} shard_pass_t;

static kstring_t *pass_out(const shard_pass_t *sp)
{
    return sp->so ? ss_out_text(sp->so) : sp->scratch;
}

/* record_column: the shard's last gVCF block is closed past its end; the pass is done. */
#define PASS_DONE 2
/* record_column: a column drew random numbers, and where the stream stands is not known yet. */
#define PASS_NEEDS_BEFORE 3

static int record_column(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx)
{
    shard_pass_t *sp = ctx;
    if (pos >= sp->end) { /* past the shard: only to follow its last gVCF block */
        if (!w->gv || !mp_gvcf_open(w->gv))
            return PASS_DONE;
        if (!sp->past_end)
            sp->past_end = 1, sp->own_draws = w->rng.draws;
        w->extending = 1;
        mp_gvcf_follow(w->gv);
    } else {
        sp->st->bases++;
    }
    /* before the run, -i needs the records only where they may take a target: BAQ, the
     * one thing a column leaves to the next that changes alleles, ran for every column */
    if (!sp->so && !mc_missed_wants(w->caller, pos))
        return 0;
    int r = mp_column_records(w, tid, pos, pass_out(sp), &sp->carry_known);
    if (r != 0)
        return r;
    /* the likelihoods drew from a stream whose start the shards ahead decide */
    if (w->before_unknown && w->rng.draws)
        return PASS_NEEDS_BEFORE;
    if (w->extending && !mp_gvcf_open(w->gv))
        return PASS_DONE;
    if (!sp->so) {
        sp->scratch->l = 0; /* before the run only -i's summary is kept */
        return 0;
    }
    /* output leaves memory only once it is final: a pass may restart with the carry */
    return sp->carry_known && ss_out_checkpoint(sp->so) < 0 ? -1 : 0;
}

/* The random stream where one run would have it at the shard: past every earlier draw. */
static void start_stream(mp_worker_t *w, const ss_shard_t *sh)
{
    mp_rng_seed(&w->rng, w->o->seed);
    w->before_unknown = sh->before == SS_BEFORE_UNKNOWN;
    if (!w->before_unknown)
        mp_rng_jump(&w->rng, sh->before);
}

/* gVCF at the shard's first position: the records of the position before, alone. */
static int continuation_column(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx)
{
    int known = 1; /* no value an indel record carries changes a block */
    return mp_column_records(w, tid, pos, ctx, &known) < 0 ? -1 : 0;
}

/*
 * Whether a gVCF block of an earlier shard is open at the shard's start: it
 * is when the last record at the position before is a reference-only record
 * a block takes (the block's history does not matter, only that record). The
 * shard then skips the records that continue it. 0 or -1.
 */
static int gvcf_continuation(mp_worker_t *w, const ss_shard_t *sh)
{
    mp_gvcf_reset(w->gv);
    if (sh->beg <= sh->scope_beg)
        return 0;
    kstring_t scratch = KS_INITIALIZE;
    mp_rng_t rng = w->rng; /* no block depends on the likelihoods' draws */
    int rc = mp_pileup_pass(w, sh, sh->tid, sh->beg - 1, sh->beg, sh->scope_beg,
                            continuation_column, &scratch);
    w->rng = rng;
    free(scratch.s);
    if (mp_gvcf_open(w->gv))
        mp_gvcf_skip_from(w->gv);
    else
        mp_gvcf_reset(w->gv);
    return rc < 0 ? -1 : 0;
}

/*
 * Where the shard's own columns end. Reads may run past their contig's @SQ
 * LN, and bcftools prints those columns (N as the reference): the contig's
 * last shard owns them, up to its region's end (HTS_POS_MAX for a contig).
 */
static hts_pos_t own_end(const mp_worker_t *w, const ss_shard_t *sh)
{
    return sh->end >= sam_hdr_tid2len(w->hdr, sh->tid) ? sh->scope_end : sh->end;
}

/* Where the shard's pass may run to: its scope's end with gVCF, else its own end. */
static hts_pos_t pass_end(const mp_worker_t *w, const ss_shard_t *sh)
{
    return w->gv ? sh->scope_end : own_end(w, sh);
}

/*
 * The reader's window for the shard, around every query a pass makes (the
 * walk back to where the first column's reads began, the scope, the
 * records): a CRAM input decodes it once and answers them all from it. (BAM
 * queries need no window: they start at the reader's marks.)
 */
static void set_window(mp_worker_t *w, const ss_shard_t *sh)
{
    ss_reader_window(w->rd, sh->tid, sh->beg > 4096 ? sh->beg - 4096 : 0,
                     mp_read_past(own_end(w, sh)));
}

/* -i's lines, written where the records go. */
static int emit_missed(void *ctx, bcf1_t *line)
{
    shard_pass_t *sp = ctx;
    return mp_put_record(sp->w, line, pass_out(sp));
}

/* -i: the shard's part of the targets; before the run (no plan yet), its own range. */
static int missed_begin(mp_worker_t *w, const ss_shard_t *sh, shard_pass_t *sp)
{
    if (!w->run->missed)
        return 0;
    mc_missed_shard_t own = {sh->beg, own_end(w, sh), 0, -1};
    const mc_missed_shard_t *part = sp->so ? mc_missed_plan_part(*w->run->missed, sh->idx) : &own;
    return mc_missed_begin(w->caller, sam_hdr_tid2name(w->hdr, sh->tid), part, emit_missed, sp);
}

/* One pass over the shard's records. 0, MP_NEED_CARRY, or -1 after ss_error(). */
static int shard_pass(mp_worker_t *w, const ss_shard_t *sh, shard_pass_t *sp)
{
    for (int i = 0; i < w->n; i++)
        w->in[i].n_read = 0;
    start_stream(w, sh);
    sp->past_end = 0;
    w->extending = 0;
    if (w->gv && gvcf_continuation(w, sh) < 0)
        return -1;
    if (missed_begin(w, sh, sp) < 0) {
        ss_error("--call -i: out of memory");
        return -1;
    }
    int rc =
        mp_pileup_pass(w, sh, sh->tid, sh->beg, pass_end(w, sh), sh->scope_beg, record_column, sp);
    if (rc == PASS_DONE)
        rc = 0;
    /* a block still open at the end of the contig or region closes there */
    if (rc == 0 && mp_gvcf_close(w, pass_out(sp)) < 0)
        rc = -1;
    if (rc == 0 && w->run->missed && sp->so && mc_missed_end(w->caller) < 0) {
        ss_error("--call -i: cannot write the missed targets of shard %d", sh->idx);
        rc = -1;
    }
    w->extending = 0;
    return rc;
}

static int process(void *wstate, const ss_shard_t *sh, ss_out_t *so, ss_shard_stats_t *st)
{
    mp_worker_t *w = wstate;
    if (sh->tid < 0)
        return 0;
    set_window(w, sh);
    int ptid = sh->tid;
    hts_pos_t plo = sh->scope_beg, phi;
    shard_pass_t sp = {.so = so, .st = st, .end = own_end(w, sh), .w = w};
    /* the run's first columns start from bcftools' zeroed values */
    sp.carry_known = !(w->o->fmt_flag & MP_INFO_ZSCORE) ||
                     (sh->beg <= sh->scope_beg && !mp_prev_scope(w, &ptid, &plo, &phi));
    w->bc.mwu_bq = w->bc.mwu_mqs = 0;
    size_t out0 = ss_out_text(so)->l;
    int rc = shard_pass(w, sh, &sp);
    if (rc == MP_NEED_CARRY) { /* rare: an indel record before the shard's first SNP with an ALT */
        ss_out_text(so)->l = out0;
        st->bases = 0;
        if (mp_find_carry(w, sh) < 0)
            return -1;
        sp.carry_known = 1;
        rc = shard_pass(w, sh, &sp);
    }
    for (int i = 0; i < w->n; i++)
        st->reads += w->in[i].n_read;
    if (rc == PASS_NEEDS_BEFORE)
        return SS_SHARD_NEEDS_BEFORE;
    st->census = sp.past_end ? sp.own_draws : w->rng.draws;
    return rc < 0 ? -1 : 0;
}

/*
 * The census's columns: only where a sample holds more than 255 reads can its
 * bases pass 255 and bcftools draw. Where the column can have an indel record
 * (fewer reads than -L allows), the column is computed in full, its records
 * thrown away, and the draws counted; past -L only the SNP record draws, and
 * counting its kept bases is enough.
 */
static int census_column(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx)
{
    kstring_t *scratch = ctx;
    int deep = 0, total = 0;
    for (int i = 0; i < w->n; i++)
        total += w->n_plp[i];
    if (total <= 255)
        return 0;
    int indel_possible = !w->o->no_indel && total < w->max_indel_depth;
    if (w->n_smpl == 1 && !indel_possible) { /* one sample: its reads are all the inputs' */
        int kept = 0;
        for (int i = 0; i < w->n; i++)
            kept += mp_glf_snp_kept(w->n_plp[i], w->plp[i], w->bca);
        if (kept > MP_ERRMOD_MAX_DEPTH)
            mp_rng_skip_shuffle(&w->rng, (size_t)kept);
        return 0;
    }
    if (mp_group_by_sample(w) < 0)
        return -1;
    for (int s = 0; s < w->n_smpl && !deep; s++)
        deep = w->grp_n[s] > 255;
    if (!deep)
        return 0;
    if (indel_possible) {
        int known = 1; /* the values indel records carry change no draw */
        scratch->l = 0;
        return mp_column_records(w, tid, pos, scratch, &known) < 0 ? -1 : 0;
    }
    for (int s = 0; s < w->n_smpl; s++)
        if (w->grp_n[s] > 255) {
            int kept = mp_glf_snp_kept(w->grp_n[s], w->grp_plp[s], w->bca);
            if (kept > MP_ERRMOD_MAX_DEPTH)
                mp_rng_skip_shuffle(&w->rng, (size_t)kept);
        }
    return 0;
}

/* How many random draws the shard makes (see mp_rng.h): its census count. */
static int census(void *wstate, const ss_shard_t *sh, uint64_t *count)
{
    mp_worker_t *w = wstate;
    *count = 0;
    if (sh->tid < 0)
        return 0;
    set_window(w, sh);
    /* most shards of most data have no column past 255 reads: no draw, no pileup needed */
    if (mp_bind_contig(w, sh->tid) < 0)
        return -1;
    hts_pos_t end = own_end(w, sh);
    int deep =
        mp_depth_exceeds(w->in, w->n, sh->tid, sh->beg, end, MP_ERRMOD_MAX_DEPTH, w->scratch);
    if (deep <= 0)
        return deep < 0 ? mp_shard_error(w, sh) : 0;
    kstring_t scratch = KS_INITIALIZE;
    mp_gvcf_t *gv = w->gv; /* blocks change no draw */
    w->gv = NULL;
    mp_rng_seed(&w->rng, w->o->seed);
    int rc = mp_pileup_pass(w, sh, sh->tid, sh->beg, end, sh->scope_beg, census_column, &scratch);
    w->gv = gv;
    free(scratch.s);
    *count = w->rng.draws;
    return rc < 0 ? -1 : 0;
}

/* --call -i, before the run: the shard called as in the run, its records thrown away, and
 * what it leaves of the targets summed up (mc_missed_summary). */
static int gather(void *wstate, const ss_shard_t *sh, kstring_t *bytes)
{
    mp_worker_t *w = wstate;
    if (sh->tid < 0)
        return 0;
    hts_pos_t end = own_end(w, sh);
    if (!mc_targets_within(w->run->call, sam_hdr_tid2name(w->hdr, sh->tid), sh->beg, end))
        return 0; /* no target: nothing passes or is left; the plan spans it (mc_missed_plan.c) */
    set_window(w, sh);
    kstring_t scratch = KS_INITIALIZE;
    ss_shard_stats_t st = {0};
    /* the values indel records carry change no allele, and so no passing record */
    shard_pass_t sp = {.scratch = &scratch, .st = &st, .end = end, .carry_known = 1, .w = w};
    w->bc.mwu_bq = w->bc.mwu_mqs = 0;
    int rc = shard_pass(w, sh, &sp);
    free(scratch.s);
    if (rc == 0 && mc_missed_summary(w->caller, sh->idx, sh->tid, sh->beg, end, bytes) < 0) {
        ss_error("--call -i: out of memory summing up shard %d", sh->idx);
        rc = -1;
    }
    return rc < 0 ? -1 : 0;
}

static int gathered(const void *run, const char *bytes, size_t len)
{
    const mp_run_t *r = run;
    if (!(*r->missed = mc_missed_plan(r->call, bytes, len))) {
        ss_error("--call -i: cannot place the missed targets (the line above says why)");
        return -1;
    }
    return 0;
}

typedef struct {
    const bcf_hdr_t *hdr;
    bcf1_t *sync; /* BCF output: a scratch record; VCF: NULL */
    kstring_t *out;
} end_out_t;

static int emit_end(void *ctx, bcf1_t *line)
{
    end_out_t *e = ctx;
    return mp_record_bytes(e->hdr, e->sync, line, e->out);
}

/* --call -i: the targets bcftools writes at the very end (mc_missed.c). */
static int run_summary(const void *kopts, const void *run, const uint64_t sums[SS_SUMMARY_N],
                       kstring_t *text)
{
    const mp_opts_t *o = kopts;
    const mp_run_t *r = run;
    (void)sums;
    if (!r->missed)
        return 0;
    int bcf = o->out_type == MP_OUT_BCF || o->out_type == MP_OUT_BCF_GZ;
    end_out_t e = {r->out_hdr, bcf ? bcf_init1() : NULL, text};
    int rc =
        bcf && !e.sync ? -1 : mc_missed_plan_end(*r->missed, o->call, r->out_hdr, emit_end, &e);
    if (e.sync)
        bcf_destroy1(e.sync);
    if (rc < 0)
        ss_error("--call -i: cannot write the missed targets that end the output");
    return rc;
}

static const char *const counter_names[] = {NULL};

const ss_kernel_t ss_kernel_mpileup = {
    .name = "mpileup",
    .summary = "genotype likelihoods (VCF/BCF), byte-identical to bcftools mpileup",
    .usage = mp_usage,
    .parse = mp_parse,
    .opts_free = opts_free,
    .prepare = prepare,
    .run_free = run_free,
    .worker_init = worker_init,
    .process = process,
    .worker_destroy = worker_destroy,
    .stdin_ok = 1, /* "-": one pass, each contig one shard */
    .past_end = 1, /* bcftools prints what reads running past a contig's end cover */
    .cram_md = 1,  /* NMBZ reads NM: bcftools has CRAM rebuild MD/NM */
    .counter_names = counter_names,
    .census = census,
    .gather = gather,
    .gathered = gathered,
    .run_summary = run_summary,
};

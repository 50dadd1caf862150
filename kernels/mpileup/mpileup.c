/*
 * mpileup.c -- the `mpileup` kernel: bcftools mpileup 1.16, one shard at a time.
 *
 * A shard runs htslib's pileup, as bcftools does, from a point early enough
 * (mp_shard_start) that every column it prints sees the reads, the depth cap,
 * the mate overlaps and the lazily applied BAQ of one run over the whole input;
 * columns before the shard are only walked. Each printed column makes a SNP
 * record and, where reads carry indels, an indel record (mp_call.h), encoded
 * as VCF text or BCF into the shard's output.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/faidx.h>

#include "mpileup.h"

/* Per sample: its reads at the column (bcftools groups the inputs' reads by sample). */
typedef struct {
    int n, m;
    bam_pileup1_t *plp;
} mp_group_t;

typedef struct {
    const mp_opts_t *o;
    const mp_run_t *run;
    const ss_job_t *job;
    ss_reader_t *rd;
    sam_hdr_t *hdr;
    int n;                      /* inputs */
    int n_smpl;
    mp_input_t *in;
    int *n_plp;                 /* per input, the column */
    const bam_pileup1_t **plp;
    mp_group_t *grp;            /* per sample */
    int *grp_n;
    bam_pileup1_t **grp_plp;
    mp_aux_t *bca;
    mp_smpl_t *bcr;             /* per sample */
    mp_site_t bc;
    bcf1_t *rec, *sync;
    mp_rng_t rng;
    faidx_t *fai;
    int ref_tid;
    char *ref;                  /* the contig, NUL-terminated, or NULL */
    hts_pos_t ref_len;
    bam1_t *scratch;
    int bcf;                    /* BCF records, else VCF text */
    int max_indel_depth;        /* -L times the samples */
} mp_worker_t;

/* The SNP record's alleles hold an ALT (bcftools' has_alt): the site's MWU tests ran. */
static int site_has_alt(const mp_site_t *bc)
{
    return !(bc->n_alleles == 2 && bc->unseen != -1);
}

/* column_records: an indel record needs values from before the shard (find_carry). */
#define NEED_CARRY 1

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
    if (r->vcf_hdr)
        bcf_hdr_destroy(r->vcf_hdr);
    free(r->head.s);
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

static int prepare(const void *kopts, const ss_job_t *job, void **run, ss_out_spec_t *out)
{
    const mp_opts_t *o = kopts;
    mp_run_t *r = calloc(1, sizeof(*r));
    *run = r;
    if (!r) {
        ss_error("out of memory preparing mpileup");
        return -1;
    }
    if (mp_samples_build(&r->smpl, job, o) < 0 || mp_header_build(r, o, job, &r->head) < 0)
        return -1;
    fill_probaln_table();
    out->format = SS_FMT_TEXT;
    out->text_header = r->head.s; /* copied by the framework */
    out->text_header_len = r->head.l;
    /* bcftools compresses by -O alone, whatever the file's name */
    out->text_bgzf = o->out_type == MP_OUT_BCF_GZ || o->out_type == MP_OUT_VCF_GZ
                         ? SS_TEXT_BGZF_ALWAYS
                         : SS_TEXT_BGZF_NEVER;
    out->text_index = ss_job_opts(job)->write_index ? SS_TEXT_INDEX_VCF : SS_TEXT_INDEX_NONE;
    out->level = o->level;
    out->census = mp_samples_can_draw(&r->smpl, o->max_depth);
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
    bc->PL = malloc(15 * (size_t)n * sizeof(*bc->PL));
    bc->QS = malloc((size_t)n * MP_MAX_ALLELES * sizeof(*bc->QS));
    bc->DP4 = malloc((size_t)n * 4 * sizeof(int32_t));
    bc->fmt_arr = malloc((size_t)n * sizeof(float));
    bc->ADR = malloc((size_t)(n + 1) * MP_MAX_ALLELES * sizeof(int32_t));
    bc->ADF = malloc((size_t)(n + 1) * MP_MAX_ALLELES * sizeof(int32_t));
    bc->SCR = malloc((size_t)(n + 1) * sizeof(*bc->SCR));
    bc->ref_nm = malloc((size_t)nnm * MP_N_NM * sizeof(int32_t));
    bc->alt_nm = malloc((size_t)nnm * MP_N_NM * sizeof(int32_t));
    bc->mwu_nm = malloc((size_t)(n + 1) * sizeof(float));
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
    w->ref_tid = -1;
    w->bcf = w->o->out_type == MP_OUT_BCF || w->o->out_type == MP_OUT_BCF_GZ;
    w->max_indel_depth = w->o->max_indel_depth * w->n_smpl;
    w->in = calloc((size_t)w->n, sizeof(*w->in));
    w->n_plp = calloc((size_t)w->n, sizeof(*w->n_plp));
    w->plp = calloc((size_t)w->n, sizeof(*w->plp));
    w->grp = calloc((size_t)w->n_smpl, sizeof(*w->grp));
    w->grp_n = calloc((size_t)w->n_smpl, sizeof(*w->grp_n));
    w->grp_plp = calloc((size_t)w->n_smpl, sizeof(*w->grp_plp));
    w->bcr = calloc((size_t)w->n_smpl, sizeof(*w->bcr));
    w->bca = mp_aux_init(-1., w->o->min_baseQ, w->o->max_baseQ, w->o->delta_baseQ);
    w->rec = bcf_init1();
    w->sync = bcf_init1();
    w->scratch = ss_bam_private();
    const char *fasta = ss_job_opts(job)->reference;
    if (fasta && !(w->fai = fai_load(fasta))) {
        ss_error("%s: cannot load its .fai index; make one with samtools faidx %s", fasta,
                 fasta);
        return -1;
    }
    if (!w->in || !w->n_plp || !w->plp || !w->grp || !w->grp_n || !w->grp_plp || !w->bcr ||
        !w->bca || !w->rec || !w->sync || !w->scratch)
        goto oom;
    aux_settings(w->bca, w->o);
    if (site_init(w, w->n_smpl) < 0)
        goto oom;
    for (int i = 0; i < w->n; i++) {
        w->in[i].i = i;
        w->in[i].o = w->o;
        w->in[i].smpl = &w->run->smpl;
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
    free(w->in), free(w->n_plp), free(w->plp), free(w->grp), free(w->grp_n);
    free(w->grp_plp), free(w->bcr);
    if (w->bca) {
        mp_indel_ws_free(w->bca);
        mp_aux_destroy(w->bca);
    }
    site_free(&w->bc);
    if (w->rec)
        bcf_destroy1(w->rec);
    if (w->sync)
        bcf_destroy1(w->sync);
    if (w->scratch)
        bam_destroy1(w->scratch);
    if (w->fai)
        fai_destroy(w->fai);
    free(w->ref);
    free(w);
}

/* The shard's contig, whole and NUL-terminated, as bcftools holds it. 0 or -1. */
static int load_contig(mp_worker_t *w, int tid)
{
    if (!w->fai || w->ref_tid == tid)
        return 0;
    free(w->ref);
    w->ref = NULL;
    w->ref_len = 0;
    w->ref_tid = tid;
    const char *name = sam_hdr_tid2name(w->hdr, tid);
    if (!faidx_has_seq(w->fai, name))
        return 0; /* not in the FASTA: no reference there, as in bcftools */
    hts_pos_t len;
    w->ref = faidx_fetch_seq64(w->fai, name, 0, HTS_POS_MAX, &len);
    if (!w->ref) {
        ss_error("%s: cannot read contig %s; check the FASTA and its .fai (samtools faidx)",
                 ss_job_opts(w->job)->reference, name);
        w->ref_tid = -1;
        return -1;
    }
    w->ref_len = len;
    return 0;
}

/*
 * Called by htslib's pileup for each read it takes in (bcftools' constructor):
 * the read's sample, whether it has a soft clip, and with BAQ on whether it has
 * an indel or ref skip, kept in cd.i for every column the read is in.
 */
static int read_entered(void *data, const bam1_t *b, bam_pileup_cd *cd)
{
    mp_input_t *in = data;
    const uint32_t *cig = bam_get_cigar(b);
    int clip = 0, indel = 0;
    for (uint32_t k = 0; k < b->core.n_cigar && !clip; k++)
        clip = bam_cigar_op(cig[k]) == BAM_CSOFT_CLIP;
    for (uint32_t k = 0; in->o->baq && k < b->core.n_cigar && !indel; k++) {
        int op = bam_cigar_op(cig[k]);
        indel = op == BAM_CINS || op == BAM_CDEL || op == BAM_CREF_SKIP;
    }
    cd->i = MP_CD_MAKE(mp_samples_of(in->smpl, in->i, b), clip, indel);
    return 0;
}

/* The run of matched bases at one end of the CIGAR (long reads skip their clips). */
static int end_match(const uint32_t *cig, int ncig, int from_left, int long_read)
{
    int len = 0;
    for (int j = 0; j < ncig; j++) {
        int k = from_left ? j : ncig - 1 - j;
        int op = bam_cigar_op(cig[k]);
        if (long_read && (op == BAM_CHARD_CLIP || op == BAM_CSOFT_CLIP))
            continue;
        if (op != BAM_CMATCH && op != BAM_CDIFF && op != BAM_CEQUAL)
            break;
        len += bam_cigar_oplen(cig[k]);
    }
    return len;
}

/*
 * Partial BAQ's choice for one read at a column that asked for BAQ (nt reads,
 * has_clip of them clipped): reads whose indel lies deep inside well-matched
 * flanks, or very long reads with a wide band, keep their qualities.
 */
static int baq_wanted(const mp_opts_t *o, const bam1_t *b, int nt, int has_clip)
{
    const uint32_t *cig = bam_get_cigar(b);
    int ncig = b->core.n_cigar;
    if (o->baq_partial && nt > 15 && ncig > 1) {
        int dist = 40 + 10 * (nt < 40) + 10 * (nt < 20), lr = b->core.l_qseq > 500;
        int lm = end_match(cig, ncig, 1, lr), rm = end_match(cig, ncig, 0, lr);
        if (lm >= dist * 4 && rm >= dist * 4)
            return 0;
        if (lm >= dist && rm >= dist && has_clip < (0.15 + 0.05 * (nt > 20)) * nt)
            return 0;
    }
    if (b->core.l_qseq > 500) {
        hts_pos_t rl = bam_cigar2rlen(ncig, cig);
        if (llabs(rl - b->core.l_qseq) * b->core.l_qseq >= 500000)
            return 0;
    }
    return 1;
}

/* Flag bit bcftools borrows to mark a read BAQ has seen (htslib never sets it). */
#define MP_BAQ_DONE 32768

/*
 * BAQ at this column, bcftools' partial way: only where reads show an indel
 * that is not one clean event, and then once per read, the first time. So a
 * read's qualities depend on the columns it was in before: hence the replay.
 */
static void column_baq(mp_worker_t *w)
{
    const mp_opts_t *o = w->o;
    int has_indel = 0, has_clip = 0, nt = 0, min_indel = INT_MAX, max_indel = INT_MIN;
    for (int i = 0; i < w->n; i++) {
        nt += w->n_plp[i];
        for (int j = 0; j < w->n_plp[i]; j++) {
            const bam_pileup1_t *p = w->plp[i] + j;
            has_indel += (MP_CD_INDEL(p->cd.i) || p->indel) ? 1 : 0;
            has_clip += MP_CD_SOFT_CLIP(p->cd.i) ? 1 : 0;
            if (max_indel < p->indel)
                max_indel = p->indel;
            if (min_indel > p->indel)
                min_indel = p->indel;
        }
    }
    if (o->baq_partial &&
        (has_indel == 0 || (has_clip < 0.2 * nt && max_indel == min_indel &&
                            (has_indel < 0.1 * nt || has_indel == 1))))
        return;
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < w->n_plp[i]; j++) {
            bam1_t *b = w->plp[i][j].b;
            if (b->core.flag & MP_BAQ_DONE)
                continue;
            b->core.flag |= MP_BAQ_DONE;
            if (b->core.l_qseq > o->max_read_len || !baq_wanted(o, b, nt, has_clip))
                continue;
            uint8_t *placeholder = bam_aux_get(b, "_Q");
            if (placeholder)
                bam_aux_del(b, placeholder);
            sam_prob_realn(b, w->ref, w->ref_len, o->redo_baq ? 7 : 3);
        }
}

/* The column's reads grouped by sample, inputs in order (bcftools' group_smpl). 0 or -1. */
static int group_by_sample(mp_worker_t *w)
{
    for (int s = 0; s < w->n_smpl; s++)
        w->grp[s].n = 0;
    for (int i = 0; i < w->n; i++)
        for (int j = 0; j < w->n_plp[i]; j++) {
            const bam_pileup1_t *p = w->plp[i] + j;
            mp_group_t *g = &w->grp[MP_CD_SAMPLE(p->cd.i)];
            if (g->n == g->m) {
                int m = g->m ? 2 * g->m : 8;
                bam_pileup1_t *a = realloc(g->plp, (size_t)m * sizeof(*a));
                if (!a)
                    return -1;
                g->plp = a, g->m = m;
            }
            g->plp[g->n] = *p;
            /*
             * htslib never writes aux; indel scoring sets it for the reads it
             * scores and leaves it for others (ref skips), which then read
             * what htslib's fresh column array held: zero in bcftools' run.
             */
            g->plp[g->n++].aux = 0;
        }
    for (int s = 0; s < w->n_smpl; s++) {
        w->grp_n[s] = w->grp[s].n;
        w->grp_plp[s] = w->grp[s].plp;
    }
    return 0;
}

/* The record, appended to the shard's output as VCF text or BCF bytes. 0 or -1. */
static int put_record(mp_worker_t *w, kstring_t *out)
{
    bcf1_t *v = w->rec;
    if (!w->bcf)
        return vcf_format(w->run->vcf_hdr, v, out) < 0 ? -1 : 0;
    bcf_copy(w->sync, v); /* serialises v's edited fields into its shared and indiv blocks */
    uint32_t x[8];
    x[0] = (uint32_t)v->shared.l + 24;
    x[1] = (uint32_t)v->indiv.l;
    x[2] = (uint32_t)v->rid;
    x[3] = (uint32_t)v->pos;
    x[4] = (uint32_t)v->rlen;
    memcpy(&x[5], &v->qual, 4);
    x[6] = (uint32_t)v->n_info | (uint32_t)v->n_allele << 16;
    x[7] = (uint32_t)v->n_fmt << 24 | (v->n_sample & 0xffffff);
    uint8_t le[32];
    for (int k = 0; k < 8; k++)
        for (int j = 0; j < 4; j++)
            le[4 * k + j] = (uint8_t)(x[k] >> (8 * j));
    if (kputsn((char *)le, 32, out) < 0 || kputsn(v->shared.s, v->shared.l, out) < 0 ||
        kputsn(v->indiv.s, v->indiv.l, out) < 0)
        return -1;
    return 0;
}

/*
 * One printed column: the SNP record, then the indel record where there is
 * one. *carry_known: the values indel records take from the last SNP site
 * with an ALT are known (set here at such a site). 0, NEED_CARRY when an
 * indel record needs them unknown, -1 out of memory.
 */
static int column_records(mp_worker_t *w, int tid, hts_pos_t pos, kstring_t *out,
                          int *carry_known)
{
    int total = 0;
    for (int i = 0; i < w->n; i++)
        total += w->n_plp[i];
    if (group_by_sample(w) < 0)
        return -1;
    int ref0 = (w->ref && pos < w->ref_len) ? w->ref[pos] : 'N';
    int ref16 = seq_nt16_table[(unsigned char)ref0];
    mp_aux_clean(w->bca, &w->bc);
    for (int s = 0; s < w->n_smpl; s++)
        mp_glfgen(w->grp_n[s], w->grp_plp[s], ref16, w->bca, &w->bcr[s], &w->rng);
    w->bc.tid = tid;
    w->bc.pos = (int)pos;
    mp_combine(w->n_smpl, w->bcr, w->bca, ref16, &w->bc);
    if (site_has_alt(&w->bc))
        *carry_known = 1;
    bcf_clear1(w->rec);
    mp_site_to_bcf(&w->bc, w->rec, w->bcr, w->o->fmt_flag, w->bca, NULL);
    if (put_record(w, out) < 0)
        return -1;
    if (w->o->no_indel || total >= w->max_indel_depth)
        return 0;
    mp_aux_clean(w->bca, &w->bc);
    if (mp_gap_prep(w->n_smpl, w->grp_n, w->grp_plp, (int)pos, w->bca, w->ref) < 0)
        return 0;
    for (int s = 0; s < w->n_smpl; s++)
        mp_glfgen(w->grp_n[s], w->grp_plp[s], -1, w->bca, &w->bcr[s], &w->rng);
    if (mp_combine(w->n_smpl, w->bcr, w->bca, -1, &w->bc) < 0)
        return 0;
    if (!*carry_known && site_has_alt(&w->bc))
        return NEED_CARRY;
    bcf_clear1(w->rec);
    mp_site_to_bcf(&w->bc, w->rec, w->bcr, w->o->fmt_flag, w->bca, w->ref);
    return put_record(w, out);
}

/* A read error or out of memory in the shard, named. Always -1. */
static int shard_error(mp_worker_t *w, const ss_shard_t *sh)
{
    const char *ctg = sam_hdr_tid2name(w->hdr, sh->tid);
    char where[256];
    snprintf(where, sizeof(where), "%s:%lld-%lld", ctg, (long long)sh->beg + 1,
             (long long)sh->end);
    if (ss_error_raised())
        return -1;
    for (int i = 0; i < w->n; i++) {
        int err = w->in[i].read_err;
        if (err == -4) {
            ss_error("out of memory in shard %d (%s); lower -@ or -d", sh->idx, where);
            return -1;
        }
        if (err < -1) {
            ss_io_input_read_error(w->rd, i, err, sh->tid, where, ss_job_opts(w->job)->reference,
                                   "-f");
            return -1;
        }
    }
    ss_error("mpileup failed in shard %d (%s): out of memory, or the input is not "
             "coordinate-sorted (sort with samtools sort, then samtools index)", sh->idx, where);
    return -1;
}

/*
 * The reads a shard's pileup takes in: from its start to a little past its end,
 * because htslib reads one record beyond a column before it hands the column
 * out, and that record's mate overlap can change qualities BAQ then sees.
 */
#define READ_PAST_END 1000

/* Query every input and start a pileup over them at start. NULL after ss_error(). */
static bam_mplp_t open_pileup(mp_worker_t *w, const ss_shard_t *sh, int tid, hts_pos_t start,
                              hts_pos_t end)
{
    void *data[w->n];
    for (int i = 0; i < w->n; i++) {
        w->in[i].read_err = 0;
        if (ss_source_query(w->in[i].src, tid, start, end + READ_PAST_END) < 0) {
            shard_error(w, sh);
            return NULL;
        }
        data[i] = &w->in[i];
    }
    bam_mplp_t it = bam_mplp_init(w->n, mp_read_filtered, data);
    if (!it) {
        ss_error("out of memory starting the pileup of shard %d", sh->idx);
        return NULL;
    }
    if (w->o->overlaps)
        bam_mplp_init_overlaps(it);
    bam_mplp_set_maxcnt(it, w->o->max_depth);
    bam_mplp_constructor(it, read_entered);
    return it;
}

/* Bind contig tid's reference and the worker's files. 0, or -1 after ss_error(). */
static int bind_contig(mp_worker_t *w, int tid)
{
    if (load_contig(w, tid) < 0)
        return -1;
    for (int i = 0; i < w->n; i++) {
        mp_input_t *in = &w->in[i];
        in->src = ss_reader_source(w->rd, i);
        in->ref = w->ref;
        in->ref_len = w->ref_len;
        in->read_err = 0;
    }
    return 0;
}

/* What a pass does with each column in its range: 0 go on, 1 stop, -1 failed. */
typedef int (*column_fn)(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx);

/*
 * One pass of bcftools' pileup over [lo, hi) of contig tid (scope_lo: where a
 * run over that contig or region starts): the pileup begins early enough to
 * give those columns exactly (mp_shard_start), every column gets partial BAQ,
 * and fn sees the columns in range. Returns fn's last code, or -1 after ss_error().
 */
static int pileup_pass(mp_worker_t *w, const ss_shard_t *sh, int tid, hts_pos_t lo, hts_pos_t hi,
                       hts_pos_t scope_lo, column_fn fn, void *ctx)
{
    if (bind_contig(w, tid) < 0)
        return -1;
    hts_pos_t start = mp_shard_start(w->in, w->n, tid, lo, scope_lo,
                                     w->o->max_depth > 0 ? w->o->max_depth : INT_MAX, w->scratch);
    if (start < 0)
        return shard_error(w, sh);
    bam_mplp_t it = open_pileup(w, sh, tid, start, hi);
    if (!it)
        return -1;
    int ctid, pos, ret, rc = 0;
    while (rc == 0 && (ret = bam_mplp_auto(it, &ctid, &pos, w->n_plp, w->plp)) > 0) {
        if (ctid != tid || pos >= hi)
            break;
        if (w->ref && w->o->baq)
            column_baq(w);
        if (pos >= lo)
            rc = fn(w, ctid, pos, ctx);
    }
    bam_mplp_destroy(it);
    if (rc < 0)
        return ss_error_raised() ? -1 : shard_error(w, sh);
    if (ret < 0)
        return shard_error(w, sh);
    return rc;
}

/*
 * bcftools' indel records print BQBZ and MQSBZ as the last SNP site with an
 * ALT left them (it does not compute them for indels), so a shard's first
 * indel records need the values from before the shard. The lookback's
 * columns: the last such site's values.
 */
typedef struct {
    int found;
    float bq, mqs;
} lookback_t;

static int lookback_column(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx)
{
    lookback_t *lb = ctx;
    mp_rng_t scratch = w->rng; /* the values do not depend on the likelihoods */
    if (group_by_sample(w) < 0)
        return -1;
    int ref0 = (w->ref && pos < w->ref_len) ? w->ref[pos] : 'N';
    int ref16 = seq_nt16_table[(unsigned char)ref0];
    mp_aux_clean(w->bca, &w->bc);
    for (int s = 0; s < w->n_smpl; s++)
        mp_glfgen(w->grp_n[s], w->grp_plp[s], ref16, w->bca, &w->bcr[s], &scratch);
    w->bc.tid = tid;
    w->bc.pos = (int)pos;
    mp_combine(w->n_smpl, w->bcr, w->bca, ref16, &w->bc);
    if (site_has_alt(&w->bc))
        *lb = (lookback_t){1, w->bc.mwu_bq, w->bc.mwu_mqs};
    return 0;
}

/*
 * The scope before (tid, scope_lo) in the run's order: the previous region of
 * -r, or the previous contig. 1 and its bounds, 0 when the run starts there.
 */
static int prev_scope(const mp_worker_t *w, int *tid, hts_pos_t *lo, hts_pos_t *hi)
{
    int n;
    const ss_interval_t *reg = ss_job_regions(w->job, &n);
    if (reg) {
        for (int r = n - 1; r > 0; r--)
            if (reg[r].tid == *tid && reg[r].beg == *lo && reg[r - 1].tid >= 0) {
                hts_pos_t len = sam_hdr_tid2len(w->hdr, reg[r - 1].tid);
                *tid = reg[r - 1].tid, *lo = reg[r - 1].beg;
                *hi = reg[r - 1].end < len ? reg[r - 1].end : len;
                return 1;
            }
        return 0;
    }
    if (*tid <= 0)
        return 0;
    *tid -= 1;
    *lo = 0;
    *hi = sam_hdr_tid2len(w->hdr, *tid);
    return 1;
}

#define LOOKBACK_FIRST 2048

/* The values entering the shard, looked for backwards in growing windows. 0 or -1. */
static int find_carry(mp_worker_t *w, const ss_shard_t *sh)
{
    int tid = sh->tid;
    hts_pos_t lo_scope = sh->scope_beg, hi = sh->beg;
    lookback_t lb = {0, 0, 0}; /* bcftools starts from zeroed values */
    for (;;) {
        for (hts_pos_t win = LOOKBACK_FIRST; hi > lo_scope; win *= 4) {
            hts_pos_t lo = hi - win > lo_scope ? hi - win : lo_scope;
            if (pileup_pass(w, sh, tid, lo, hi, lo_scope, lookback_column, &lb) < 0)
                return -1;
            if (lb.found)
                goto found;
            hi = lo;
        }
        if (!prev_scope(w, &tid, &lo_scope, &hi))
            break;
    }
found:
    w->bc.mwu_bq = lb.bq;
    w->bc.mwu_mqs = lb.mqs;
    return 0;
}

/* A shard's pass: its records, and whether its indel records needed the carried values. */
typedef struct {
    ss_out_t *so;
    ss_shard_stats_t *st;
    int carry_known;
} shard_pass_t;

static int record_column(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx)
{
    shard_pass_t *sp = ctx;
    sp->st->bases++;
    int r = column_records(w, tid, pos, ss_out_text(sp->so), &sp->carry_known);
    if (r != 0)
        return r;
    /* output leaves memory only once it is final: a pass may restart with the carry */
    return sp->carry_known && ss_out_checkpoint(sp->so) < 0 ? -1 : 0;
}

/* The random stream where one run would have it at the shard: past every earlier draw. */
static void start_stream(mp_worker_t *w, const ss_shard_t *sh)
{
    mp_rng_seed(&w->rng, w->o->seed);
    mp_rng_jump(&w->rng, sh->before);
}

static int process(void *wstate, const ss_shard_t *sh, ss_out_t *so, ss_shard_stats_t *st)
{
    mp_worker_t *w = wstate;
    if (sh->tid < 0)
        return 0;
    ss_reader_window(w->rd, sh->tid, sh->beg > 4096 ? sh->beg - 4096 : 0,
                     sh->end + READ_PAST_END);
    int ptid = sh->tid;
    hts_pos_t plo = sh->scope_beg, phi;
    shard_pass_t sp = {so, st, 0};
    /* the run's first columns start from bcftools' zeroed values */
    sp.carry_known = !(w->o->fmt_flag & MP_INFO_ZSCORE) ||
                     (sh->beg <= sh->scope_beg && !prev_scope(w, &ptid, &plo, &phi));
    w->bc.mwu_bq = w->bc.mwu_mqs = 0;
    size_t out0 = ss_out_text(so)->l;
    for (int i = 0; i < w->n; i++)
        w->in[i].n_read = 0;
    start_stream(w, sh);
    int rc = pileup_pass(w, sh, sh->tid, sh->beg, sh->end, sh->scope_beg, record_column, &sp);
    if (rc == NEED_CARRY) { /* rare: an indel record before the shard's first SNP with an ALT */
        ss_out_text(so)->l = out0;
        st->bases = 0;
        if (find_carry(w, sh) < 0)
            return -1;
        sp.carry_known = 1;
        for (int i = 0; i < w->n; i++)
            w->in[i].n_read = 0;
        start_stream(w, sh);
        rc = pileup_pass(w, sh, sh->tid, sh->beg, sh->end, sh->scope_beg, record_column, &sp);
    }
    for (int i = 0; i < w->n; i++)
        st->reads += w->in[i].n_read;
    if (rc < 0)
        return -1;
    return 0;
}

/*
 * The census's columns: only where a sample holds more than 255 reads can its
 * bases pass 255 and bcftools draw; there the column is computed in full, its
 * record thrown away, and the draws counted.
 */
static int census_column(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx)
{
    kstring_t *scratch = ctx;
    int deep = 0;
    if (group_by_sample(w) < 0)
        return -1;
    for (int s = 0; s < w->n_smpl && !deep; s++)
        deep = w->grp_n[s] > 255;
    if (!deep)
        return 0;
    int known = 1; /* the values indel records carry change no draw */
    scratch->l = 0;
    return column_records(w, tid, pos, scratch, &known) < 0 ? -1 : 0;
}

/* How many random draws the shard makes (see mp_rng.h): its census count. */
static int census(void *wstate, const ss_shard_t *sh, uint64_t *count)
{
    mp_worker_t *w = wstate;
    *count = 0;
    if (sh->tid < 0)
        return 0;
    kstring_t scratch = KS_INITIALIZE;
    mp_rng_seed(&w->rng, w->o->seed);
    int rc = pileup_pass(w, sh, sh->tid, sh->beg, sh->end, sh->scope_beg, census_column,
                         &scratch);
    free(scratch.s);
    *count = w->rng.draws;
    return rc < 0 ? -1 : 0;
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
    .counter_names = counter_names,
    .census = census,
};

/*
 * mc_caller.c -- a caller's set-up and the per-record driver of bcftools
 * call 1.16 (vcfcall.c's main loop): which records are skipped, the <*>
 * allele, each sample's ploidy at the record, then the model.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mc_priv.h"

/* The output header for the resolved samples (bcftools' init_data). NULL after a message. */
static bcf_hdr_t *build_header(const mc_opts_t *o, const bcf_hdr_t *in, mc_samples_t *s)
{
    bcf_hdr_t *h;
    if (s->imap) {
        int *imap = malloc((s->n + 1) * sizeof(int));
        h = imap ? bcf_hdr_subset(in, s->n, s->names, imap) : NULL;
        free(imap);
    } else {
        h = bcf_hdr_dup(in);
    }
    if (!h) {
        fprintf(stderr, MC_PFX ": could not make the output header (subsetting samples)\n");
        return NULL;
    }
    if (!bcf_hdr_nsamples(h) && s->imap) {
        fprintf(stderr, MC_PFX ": no matching sample found\n");
        goto fail;
    }
    int r = o->model == MC_MODEL_MULTI ? mc_multi_header(o, h) : mc_consensus_header(o, h);
    if (r < 0)
        goto fail;
    bcf_hdr_remove(h, BCF_HL_INFO, "QS");
    bcf_hdr_remove(h, BCF_HL_INFO, "I16");
    if (bcf_hdr_sync(h) < 0)
        goto fail;
    return h;
fail:
    bcf_hdr_destroy(h);
    return NULL;
}

/*
 * verbose: bcftools' notes and warnings (the default ploidy, -S names not
 * found). Also sets up one caller and drops it, so that what the header
 * decides against (-G's tag or file) is reported here, once, not by every
 * worker.
 */
bcf_hdr_t *mc_out_header(const mc_opts_t *o, const bcf_hdr_t *mpileup_hdr, int verbose)
{
    mc_samples_t s;
    if (verbose && !o->ploidy_given && !o->samples_is_file)
        fprintf(stderr, "Note: none of --samples-file, --ploidy or --ploidy-file given, assuming "
                        "all sites are diploid\n");
    if (mc_samples_resolve(o, mpileup_hdr, verbose, &s) < 0)
        return NULL;
    bcf_hdr_t *h = build_header(o, mpileup_hdr, &s);
    if (h && verbose && o->model == MC_MODEL_MULTI)
        mc_multi_prior(o, s.n * mc_ploidy_max(&o->ploidy), 1);
    mc_samples_free(&s);
    mc_caller_t *probe = h ? mc_init(o, mpileup_hdr) : NULL;
    if (!probe) {
        bcf_hdr_destroy(h);
        return NULL;
    }
    mc_destroy(probe);
    return h;
}

void mc_destroy(mc_caller_t *c)
{
    if (!c)
        return;
    bcf_hdr_destroy(c->hdr);
    free(c->imap);
    free(c->sample2sex);
    free(c->sex_default);
    free(c->sex2ploidy);
    free(c->sex2ploidy_prev);
    free(c->ploidy);
    free(c->rules_on);
    free(c->PLs);
    free(c->pdg);
    free(c->gts);
    free(c->ac);
    free(c->als_map);
    free(c->pl_map);
    free(c->als);
    free(c->GPs);
    free(c->GQs);
    free(c->ADs);
    free(c->tmp_ori);
    free(c->tmp_new);
    free(c->anno16);
    free(c->itmp);
    free(c->site_used);
    free(c->missed.used);
    if (c->missed.line)
        bcf_destroy(c->missed.line);
    mc_groups_free(c);
    mc_afs_destroy(c->afs);
    free(c);
}

/*
 * Ploidy state as bcftools starts: every sample, and the last ploidy seen
 * of every sex, at the definition's highest ploidy. 0, or -1.
 */
static int init_ploidy(mc_caller_t *c, mc_samples_t *s)
{
    c->sample2sex = s->sample2sex, s->sample2sex = NULL;
    c->sex_default = s->sex_default, s->sex_default = NULL;
    c->n_sexes = s->n_sexes;
    c->ploidy_max = mc_ploidy_max(&c->o->ploidy);
    c->rules_rid = -1;
    c->targets_rid = -1;
    c->ploidy = malloc(c->nsmpl + 1);
    c->sex2ploidy = calloc(c->n_sexes + 1, sizeof(int));
    c->sex2ploidy_prev = calloc(c->n_sexes + 1, sizeof(int));
    if (!c->ploidy || !c->sex2ploidy || !c->sex2ploidy_prev)
        return -1;
    memset(c->ploidy, c->ploidy_max, c->nsmpl);
    for (int i = 0; i < c->n_sexes; i++)
        c->sex2ploidy_prev[i] = c->ploidy_max;
    return 0;
}

/* The buffers every record needs, sized by the samples. 0, or -1 after a message. */
static int alloc_buffers(mc_caller_t *c)
{
    for (int i = 0; i < 256; i++)
        c->pl2p[i] = pow(10., -i / 10.);
    c->gts = calloc(2 * c->nsmpl + 1, sizeof(*c->gts));
    c->GQs = calloc(c->nsmpl + 1, sizeof(*c->GQs));
    if (c->gts && c->GQs)
        return 0;
    fprintf(stderr, MC_PFX ": out of memory setting up the caller\n");
    return -1;
}

mc_caller_t *mc_init(const mc_opts_t *o, const bcf_hdr_t *mpileup_hdr)
{
    mc_caller_t *c = calloc(1, sizeof(*c));
    mc_samples_t s;
    if (!c || mc_samples_resolve(o, mpileup_hdr, 0, &s) < 0) {
        if (!c)
            fprintf(stderr, MC_PFX ": out of memory setting up the caller\n");
        free(c);
        return NULL;
    }
    c->o = o;
    c->hdr = build_header(o, mpileup_hdr, &s);
    c->imap = s.imap, s.imap = NULL;
    int ok = c->hdr != NULL;
    if (ok) {
        c->nsmpl = bcf_hdr_nsamples(c->hdr);
        if (!(ok = init_ploidy(c, &s) == 0))
            fprintf(stderr, MC_PFX ": out of memory setting up the caller\n");
    }
    mc_samples_free(&s);
    ok = ok && alloc_buffers(c) == 0;
    if (ok && o->model == MC_MODEL_MULTI) {
        ok = mc_multi_init(c) == 0;
    } else if (ok) {
        /* -c's spectrum keeps the ploidy of the start: every sample at the highest */
        if (!(ok = (c->afs = mc_afs_init(c->nsmpl, c->ploidy)) != NULL))
            fprintf(stderr, MC_PFX ": out of memory setting up the caller\n");
    }
    if (!ok) {
        mc_destroy(c);
        return NULL;
    }
    return c;
}

/*
 * Without rules every record asks the same ploidy of each sex, so every
 * caller, wherever it starts, sets the samples' ploidies at its first record
 * exactly as bcftools has them there (or, when each sex is at the highest,
 * never sets them, as bcftools never does).
 */
int mc_caller_memoryless(const mc_caller_t *c)
{
    const mc_ploidy_t *p = &c->o->ploidy;
    if (!p->n_rules)
        return 1;
    for (int i = 0; i < c->nsmpl; i++)
        if (c->sample2sex[i] < 0 && p->min != p->max)
            return 0; /* its own ploidy, which waits for the ploidy to leave its highest */
    return 1;
}

/*
 * Each sample's ploidy at rec, set only when some sex's ploidy differs from
 * the previous record's (bcftools' set_ploidy; hence the quirk mc_call
 * describes). 0, or -1.
 */
static int update_ploidy(mc_caller_t *c, const bcf1_t *rec)
{
    const mc_ploidy_t *p = &c->o->ploidy;
    if (rec->rid != c->rules_rid) {
        if (mc_ploidy_rules_on(p, bcf_seqname_safe(c->hdr, rec), &c->rules_on, &c->n_rules_on) < 0)
            return -1;
        c->rules_rid = rec->rid;
    }
    mc_ploidy_query(p, c->rules_on, c->n_rules_on, c->sex_default, c->n_sexes, rec->pos,
                    c->sex2ploidy);
    if (!memcmp(c->sex2ploidy, c->sex2ploidy_prev, c->n_sexes * sizeof(int)))
        return 0;
    for (int i = 0; i < c->nsmpl; i++)
        c->ploidy[i] = c->sample2sex[i] < 0 ? -c->sample2sex[i] : c->sex2ploidy[c->sample2sex[i]];
    int *t = c->sex2ploidy;
    c->sex2ploidy = c->sex2ploidy_prev;
    c->sex2ploidy_prev = t;
    return 0;
}

/* The first ALT that is mpileup's unseen allele (X, <X> or <*>), or 0. */
static int unseen_allele(const bcf1_t *rec)
{
    for (int i = 1; i < rec->n_allele; i++) {
        const char *a = rec->d.allele[i];
        if (a[0] == 'X')
            return i;
        if (a[0] == '<' && (a[1] == 'X' || a[1] == '*') && a[2] == '>')
            return i;
    }
    return 0;
}

/* -T: whether the record's site is a target (bcftools wants the exact position). */
static int on_target(mc_caller_t *c, const bcf1_t *rec)
{
    if (rec->rid != c->targets_rid) {
        c->targets_contig = mc_targets_contig(&c->o->targets, bcf_seqname_safe(c->hdr, rec));
        c->targets_rid = rec->rid;
    }
    return mc_targets_has(&c->o->targets, c->targets_contig, rec->pos);
}

int mc_site_targets(mc_caller_t *c, const bcf1_t *rec, size_t *lo, size_t *hi)
{
    on_target(c, rec); /* caches the contig */
    mc_targets_at(&c->o->targets, c->targets_contig, rec->pos, lo, hi);
    return c->targets_contig;
}

/* Sites bcftools call passes over before calling: -T, -V, REF N (without -M), -v and no ALT. */
static int skipped(mc_caller_t *c, bcf1_t *rec)
{
    const mc_opts_t *o = c->o;
    if (o->targets.path && !on_target(c, rec))
        return 1;
    int is_indel = !bcf_is_snp(rec);
    if ((o->skip == MC_SKIP_SNPS && !is_indel) || (o->skip == MC_SKIP_INDELS && is_indel))
        return 1;
    char ref0 = rec->d.allele[0][0];
    if (!o->keep_masked_ref && (ref0 == 'N' || ref0 == 'n'))
        return 1;
    c->unseen = unseen_allele(rec);
    int is_ref = rec->n_allele == 1 || (rec->n_allele == 2 && c->unseen > 0);
    return is_ref && o->variants_only;
}

void mc_fail(mc_caller_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof(c->err), fmt, ap);
    va_end(ap);
}

const char *mc_error(const mc_caller_t *c)
{
    return c->err;
}

int mc_call(mc_caller_t *c, bcf1_t *in, bcf1_t *out)
{
    c->err[0] = '\0';
    if (!bcf_copy(out, in) || (c->imap && bcf_subset(c->hdr, out, c->nsmpl, c->imap) < 0) ||
        bcf_unpack(out, BCF_UN_STR) < 0) {
        mc_fail(c, "could not read the record at %s:%" PRIhts_pos, bcf_seqname_safe(c->hdr, in),
                in->pos + 1);
        return -1;
    }
    if (skipped(c, out))
        return 0;
    if (c->o->insert_missed && mc_missed_pass(c, out) < 0)
        return -1;
    if (bcf_unpack(out, BCF_UN_ALL) < 0 || (c->n_sexes && update_ploidy(c, out) < 0))
        return -1;
    int ret = c->o->model == MC_MODEL_MULTI ? mc_multi_call(c, out) : mc_consensus_call(c, out);
    if (ret < 0)
        return -1;
    return ret == 0 && c->o->variants_only ? 0 : 1;
}

/*
 * mp_pass.c -- passes of bcftools' pileup over a range: from a start early
 * enough that the range's columns are one whole run's (mp_shard_start), with
 * BAQ at every column; and the look back for the values bcftools' indel
 * records carry from the last SNP site with an ALT.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../../io/ss_diag.h"
#include "base/ss_exact_fp.h"
#include "mp_worker.h"

/* A read error or out of memory in the shard, named. Always -1. */
int mp_shard_error(mp_worker_t *w, const ss_shard_t *sh)
{
    const char *ctg = sam_hdr_tid2name(w->hdr, sh->tid);
    char where[256];
    snprintf(where, sizeof(where), "%s:%lld-%lld", ctg, (long long)sh->beg + 1, (long long)sh->end);
    if (ss_error_raised())
        return -1;
    for (int i = 0; i < w->n; i++) {
        int err = w->in[i].read_err;
        if (err == MP_READ_NOMEM) {
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
             "coordinate-sorted (sort with samtools sort, then samtools index)",
             sh->idx, where);
    return -1;
}

/* Query every input and start the worker's pileup over them at start. NULL after ss_error(). */
static mp_mplp_t *open_pileup(mp_worker_t *w, const ss_shard_t *sh, int tid, hts_pos_t start,
                              hts_pos_t end)
{
    void *data[w->n];
    for (int i = 0; i < w->n; i++) {
        w->in[i].read_err = 0;
        hts_pos_t to = mp_read_past(mp_kept_end(&w->in[i], start, end));
        if (ss_source_query(w->in[i].src, tid, start, to) < 0) {
            mp_shard_error(w, sh);
            return NULL;
        }
        data[i] = &w->in[i];
    }
    if (!w->mplp) {
        mp_mplp_opts_t po = {.overlaps = w->o->overlaps,
                             .maxcnt = w->o->max_depth,
                             .construct = mp_read_entered,
                             .client_free = mp_snp_words_free};
        if (!(w->mplp = mp_mplp_init(w->n, mp_read_filtered, data, &po))) {
            ss_error("out of memory starting the pileup of shard %d", sh->idx);
            return NULL;
        }
    }
    mp_mplp_reset(w->mplp, tid);
    return w->mplp;
}

int mp_bind_contig(mp_worker_t *w, int tid)
{
    if (mp_bind_ref(w, tid) < 0)
        return -1;
    /* a shard's exact start (mp_shard_start) queries the index several times around its
     * first column: each block inflated once */
    ss_reader_cache_blocks(w->rd);
    for (int i = 0; i < w->n; i++) {
        mp_input_t *in = &w->in[i];
        in->src = ss_reader_source(w->rd, i);
        in->ref = w->ref;
        in->ref_len = w->ref_len;
        in->rs = &w->rs;
        in->ctg = sam_hdr_tid2name(w->hdr, tid);
        in->read_err = 0;
    }
    return 0;
}

/* What a pass does with each column in its range: 0 go on, 1 stop, -1 failed. */
typedef int (*mp_column_fn)(mp_worker_t *w, int tid, hts_pos_t pos, void *ctx);

/*
 * One pass of bcftools' pileup over [lo, hi) of contig tid (scope_lo: where a
 * run over that contig or region starts): the pileup begins early enough to
 * give those columns exactly (mp_shard_start), every column gets partial BAQ,
 * and fn sees the columns in range. Returns fn's last code, or -1 after ss_error().
 */
int mp_pileup_pass(mp_worker_t *w, const ss_shard_t *sh, int tid, hts_pos_t lo, hts_pos_t hi,
                   hts_pos_t scope_lo, mp_column_fn fn, void *ctx)
{
    if (mp_bind_contig(w, tid) < 0)
        return -1;
    hts_pos_t start = mp_shard_start(w->in, w->n, tid, lo, scope_lo,
                                     w->o->max_depth > 0 ? w->o->max_depth : INT_MAX, w->scratch);
    if (start < 0)
        return mp_shard_error(w, sh);
    mp_mplp_t *it = open_pileup(w, sh, tid, start, hi);
    if (!it)
        return -1;
    int ctid, ret, rc = 0;
    hts_pos_t pos;
    const mp_targets_t *targets = w->run->targets.idx ? &w->run->targets : NULL;
    const char *ctg = sam_hdr_tid2name(w->hdr, tid);
    while (rc == 0 && (ret = mp_mplp_auto(it, &ctid, &pos, w->n_plp, w->plp)) > 0) {
        if (ctid != tid || pos >= hi)
            break;
        /* bcftools looks at no column outside its region or targets: no BAQ there */
        if (pos < scope_lo || (targets && !mp_targets_column(targets, ctg, pos)))
            continue;
        if (w->ref && w->o->baq && mp_column_baq(w) < 0) {
            rc = -1;
            ss_error("out of memory realigning the reads (BAQ) at %s:%lld; give the job more "
                     "memory",
                     ctg, (long long)pos + 1);
            break;
        }
        if (pos >= lo)
            rc = fn(w, ctid, pos, ctx);
    }
    if (rc < 0)
        return ss_error_raised() ? -1 : mp_shard_error(w, sh);
    if (ret < 0)
        return mp_shard_error(w, sh);
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
    if (mp_group_by_sample(w) < 0)
        return -1;
    int ref0 = (w->ref && pos < w->ref_len) ? w->ref[pos] : 'N';
    int ref16 = seq_nt16_table[(unsigned char)ref0];
    mp_aux_clean(w->bca, &w->bc);
    for (int s = 0; s < w->n_smpl; s++)
        mp_glfgen(w->grp_n[s], w->grp_plp[s], ref16, w->bca, &w->bcr[s], &scratch);
    w->bc.tid = tid;
    w->bc.pos = (int)pos;
    mp_combine(w->n_smpl, w->bcr, w->bca, ref16, &w->bc);
    if (mp_site_has_alt(&w->bc))
        *lb = (lookback_t){1, w->bc.mwu_bq, w->bc.mwu_mqs};
    return 0;
}

/*
 * The scope before (tid, scope_lo) in the run's order: the previous region of
 * -r, or the previous contig. 1 and its bounds, 0 when the run starts there.
 * hi is the end as given (HTS_POS_MAX for a contig): it may pass the contig's
 * end, where reads that run past it make columns.
 */
int mp_prev_scope(const mp_worker_t *w, int *tid, hts_pos_t *lo, hts_pos_t *hi)
{
    int n;
    const ss_interval_t *reg = ss_job_regions(w->job, &n);
    if (reg) {
        for (int r = n - 1; r > 0; r--)
            if (reg[r].tid == *tid && reg[r].beg == *lo && reg[r - 1].tid >= 0) {
                *tid = reg[r - 1].tid, *lo = reg[r - 1].beg, *hi = reg[r - 1].end;
                return 1;
            }
        return 0;
    }
    if (*tid <= 0)
        return 0;
    *tid -= 1;
    *lo = 0;
    *hi = HTS_POS_MAX;
    return 1;
}

#define LOOKBACK_FIRST 2048

/* The values entering the shard, looked for backwards in growing windows. 0 or -1. */
int mp_find_carry(mp_worker_t *w, const ss_shard_t *sh)
{
    int tid = sh->tid;
    hts_pos_t lo_scope = sh->scope_beg, hi = sh->beg;
    lookback_t lb = {0, 0, 0}; /* bcftools starts from zeroed values */
    for (;;) {
        /* an earlier scope's columns past its contig's end: only reads that run past it
         * make them, so one pass looks at them all */
        hts_pos_t len = sam_hdr_tid2len(w->hdr, tid);
        if (hi > len) {
            hts_pos_t lo = len > lo_scope ? len : lo_scope;
            if (mp_pileup_pass(w, sh, tid, lo, hi, lo_scope, lookback_column, &lb) < 0)
                return -1;
            if (lb.found)
                goto found;
            hi = lo;
        }
        for (hts_pos_t win = LOOKBACK_FIRST; hi > lo_scope; win *= 4) {
            hts_pos_t lo = hi - win > lo_scope ? hi - win : lo_scope;
            if (mp_pileup_pass(w, sh, tid, lo, hi, lo_scope, lookback_column, &lb) < 0)
                return -1;
            if (lb.found)
                goto found;
            hi = lo;
        }
        if (!mp_prev_scope(w, &tid, &lo_scope, &hi))
            break;
    }
found:
    w->bc.mwu_bq = lb.bq;
    w->bc.mwu_mqs = lb.mqs;
    return 0;
}

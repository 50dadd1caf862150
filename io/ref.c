/*
 * ref.c -- a worker's reference sequences: whole contigs, the last two kept.
 *
 * samtools mpileup (mplp_get_ref) fetches whole contigs and keeps the current
 * and the previous one, so reads and zero-depth lines near a contig switch
 * do not refetch. We do the same, per worker, with the worker's own faidx
 * handle (faidx_t is not thread-safe). The tid is only a cache key; the
 * sequence is looked up by name, so a FASTA in a different order works.
 *
 * Memory: two contigs per cache (chr1 is 250 MB), so a cache per worker costs
 * up to twice the largest contig.
 */
#include <stdlib.h>
#include <string.h>

#include "../framework/ss_framework.h"
#include "ss_io.h"

typedef struct {
    int tid;         /* -1: empty slot */
    char *seq;       /* NULL with tid >= 0: the contig is not in the FASTA */
    hts_pos_t len;
} ref_slot_t;

struct ss_ref_s {
    faidx_t *fai;       /* NULL: no reference */
    char *path;
    ref_slot_t slot[2]; /* slot[0] most recently used */
};

ss_ref_t *ss_ref_init(const char *fasta)
{
    ss_ref_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->slot[0].tid = r->slot[1].tid = -1;
    /* no FAI_CREATE: ss_job_open checked the .fai exists, and workers must not write one */
    if (fasta && (!(r->path = strdup(fasta)) || !(r->fai = fai_load3(fasta, NULL, NULL, 0)))) {
        ss_error("%s: cannot load the reference index; run 'samtools faidx %s'", fasta, fasta);
        free(r->path);
        free(r);
        return NULL;
    }
    return r;
}

const char *ss_ref_get(ss_ref_t *ref, int tid, const char *name, hts_pos_t *len)
{
    *len = 0;
    if (!ref || !ref->fai || !name)
        return NULL;
    if (ref->slot[0].tid != tid || tid < 0) {
        if (ref->slot[1].tid == tid && tid >= 0) {
            ref_slot_t t = ref->slot[0];
            ref->slot[0] = ref->slot[1];
            ref->slot[1] = t;
        } else {
            free(ref->slot[1].seq);
            ref->slot[1] = ref->slot[0];
            ref->slot[0].tid = tid;
            ref->slot[0].seq = NULL;
            ref->slot[0].len = 0;
            /* faidx_has_seq first: a missing contig is an answer, not an htslib error line */
            if (faidx_has_seq(ref->fai, name)) {
                hts_pos_t l = 0;
                char *s = faidx_fetch_seq64(ref->fai, name, 0, HTS_POS_MAX, &l);
                if (s && l >= 0) {
                    ref->slot[0].seq = s;
                    ref->slot[0].len = l;
                } else {
                    free(s);
                    ss_warn("%s: cannot read contig '%s'; its bases print as N", ref->path,
                            name);
                }
            }
        }
    }
    *len = ref->slot[0].seq ? ref->slot[0].len : 0;
    return ref->slot[0].seq;
}

void ss_ref_destroy(ss_ref_t *ref)
{
    if (!ref)
        return;
    free(ref->slot[0].seq);
    free(ref->slot[1].seq);
    if (ref->fai)
        fai_destroy(ref->fai);
    free(ref->path);
    free(ref);
}

/*
 * dup_stream.c -- one range of a file through the machine, read by read: the
 * reads of [beg - halo, hi), checked for what the machine relies on (file
 * order, no read reaching past -l from its POS), each pushed as owned when
 * its POS lies in [own_beg, own_end). Shared by the kernel and the step.
 */
#include <errno.h>

#include "markdup.h"

hts_pos_t dup_halo(const dup_opts_t *o)
{
    return (hts_pos_t)DUP_HALO_READS * o->max_length;
}

/*
 * A read whose unclipped ends lie more than -l from its POS: samtools' window
 * and the shard's halo both assume none does. 0, or -1 after ss_error().
 */
static int check_reach(const dup_opts_t *o, const char *file, const bam1_t *b)
{
    if (b->core.flag & BAM_FUNMAP)
        return 0;
    hts_pos_t before = b->core.pos + 1 - dup_unclipped_start(b);
    hts_pos_t after = dup_unclipped_end(b) - (b->core.pos + 1);
    hts_pos_t reach = before > after ? before : after;
    if (reach <= o->max_length)
        return 0;
    ss_error("%s: read %s reaches %lld bp from its POS with its clips, more than -l %d; give "
             "-l %lld",
             file, bam_get_qname(b), (long long)reach, o->max_length, (long long)reach);
    return -1;
}

int dup_stream(const dup_stream_t *st, const dup_span_t *sp, dup_counts_t *c, kstring_t *names,
               dup_emit_fn emit, void *ctx, uint64_t *owned_reads, int *err)
{
    const dup_opts_t *o = st->o;
    dup_machine_t *m = st->m;
    ss_source_t *src = st->src;
    const char *file = st->file;
    hts_pos_t halo = dup_halo(o);
    hts_pos_t lo = sp->beg > halo ? sp->beg - halo : 0;
    if (ss_source_query(src, sp->tid, lo, sp->hi) < 0)
        return -1;
    dup_machine_begin(m, file, c, names, emit, ctx);
    bam1_t *b;
    int r = 0;
    hts_pos_t last = -1;
    while ((b = dup_machine_slot(m)) && (errno = 0, r = ss_source_next(src, b)) >= 0) {
        hts_pos_t pos = b->core.pos;
        if (pos < last) {
            ss_error("%s: not coordinate-sorted at read %s; run samtools sort", file,
                     bam_get_qname(b));
            return -1;
        }
        last = pos;
        int owned = pos >= sp->own_beg && pos < sp->own_end;
        *owned_reads += (uint64_t)owned;
        if (check_reach(o, file, b) < 0 || dup_machine_push(m, owned) < 0)
            return -1;
    }
    *err = errno;
    if (!b)
        return -1;
    return r < -1 ? r : dup_machine_end(m);
}

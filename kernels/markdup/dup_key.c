/*
 * dup_key.c -- what samtools markdup 1.16.1 compares: a read's unclipped 5'
 * ends, its key (own end, mate's end, orientation, which of the pair is
 * leftmost, barcode) and its score (the sum of its base qualities of at least
 * DUP_MIN_QUALITY). Coordinates are 1-based, as samtools computes them, so
 * its window arithmetic (dup_machine.c) gives the same answers.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "markdup.h"

/* Pair orientations and ends, the values samtools feeds its keys. */
enum { O_FF = 2, O_RR = 3, O_FR = 5, O_RF = 7 };
enum { R_LE = 11, R_RI = 13 };

static int is_clip(int op)
{
    return op == BAM_CSOFT_CLIP || op == BAM_CHARD_CLIP;
}

hts_pos_t dup_unclipped_start(const bam1_t *b)
{
    const uint32_t *cig = bam_get_cigar(b);
    hts_pos_t clipped = 0;
    for (uint32_t i = 0; i < b->core.n_cigar && is_clip(bam_cigar_op(cig[i])); i++)
        clipped += bam_cigar_oplen(cig[i]);
    return b->core.pos - clipped + 1;
}

hts_pos_t dup_unclipped_end(const bam1_t *b)
{
    const uint32_t *cig = bam_get_cigar(b);
    hts_pos_t clipped = 0;
    for (int i = (int)b->core.n_cigar - 1; i >= 0 && is_clip(bam_cigar_op(cig[i])); i--)
        clipped += bam_cigar_oplen(cig[i]);
    return bam_endpos(b) + clipped;
}

/* The next CIGAR operation of MC text at *c: its length (1 when none is written) and letter. */
static char next_op(const char **c, long *num)
{
    *num = 1;
    if (isdigit((unsigned char)**c))
        *num = strtol(*c, (char **)c, 10);
    return **c ? *(*c)++ : 0;
}

/*
 * The mate's unclipped start and end from its POS and MC text, as samtools
 * reads MC: the start less the clips before any other operation; the end
 * past the reference span and the clips after the first operation that
 * consumes the reference (I and P count for neither).
 */
static void mate_ends(hts_pos_t mpos, const char *mc, hts_pos_t *start, hts_pos_t *end)
{
    hts_pos_t clipped = 0, span = 0;
    long num;
    char op;
    const char *c = mc;
    while (*c && *c != '*' && ((op = next_op(&c, &num)) == 'S' || op == 'H'))
        clipped += num;
    int on_ref = 0;
    for (c = mc; *c && *c != '*';) {
        op = next_op(&c, &num);
        if (op && strchr("MDN=X", op))
            span += num, on_ref = 1;
        else if ((op == 'S' || op == 'H') && on_ref)
            span += num;
    }
    *start = mpos - clipped + 1;
    *end = mpos + span;
}

/* Bob Jenkins' one-at-a-time hash: samtools keys barcodes by it, collisions and all. */
static uint32_t one_at_a_time(const unsigned char *p, size_t n)
{
    uint32_t h = 0;
    for (size_t i = 0; i < n; i++) {
        h += p[i];
        h += h << 10;
        h ^= h >> 6;
    }
    h += h << 3;
    h ^= h >> 11;
    h += h << 15;
    return h;
}

/* The barcode part of the key: the tag's text, or the name's match; 0 without one. */
static int32_t barcode_of(const dup_run_t *r, const bam1_t *b)
{
    if (r->o->barcode_tag) {
        const uint8_t *d = bam_aux_get(b, r->o->barcode_tag);
        const char *s = d ? bam_aux2Z(d) : NULL;
        return s ? (int32_t)one_at_a_time((const unsigned char *)s, strlen(s)) : 0;
    }
    if (!r->has_barcode)
        return 0;
    regmatch_t m[2];
    const char *name = bam_get_qname(b);
    if (regexec(&r->barcode, name, 2, m, 0) != 0 || m[1].rm_so == -1)
        return 0;
    return (int32_t)one_at_a_time((const unsigned char *)name + m[1].rm_so,
                                  (size_t)(m[1].rm_eo - m[1].rm_so));
}

/* -m t: which read of the pair is leftmost, by template ends. */
static int leftmost_template(const bam1_t *b, hts_pos_t ts, hts_pos_t te, hts_pos_t os,
                             hts_pos_t oe)
{
    if (b->core.tid != b->core.mtid)
        return b->core.tid < b->core.mtid;
    if (bam_is_rev(b) == bam_is_mrev(b))
        return bam_is_rev(b) ? te <= oe : ts <= os;
    return bam_is_rev(b) ? te <= os : ts <= oe;
}

/* -m t: the orientation, and which ends the key holds. */
static int8_t orient_template(const bam1_t *b, int left, hts_pos_t *this_c, hts_pos_t te,
                              hts_pos_t *other_c, hts_pos_t oe)
{
    int rev = bam_is_rev(b), read1 = (b->core.flag & BAM_FREAD1) != 0;
    if (rev == bam_is_mrev(b)) {
        if (left)
            *other_c = oe;
        else
            *this_c = te;
        return (int8_t)(((!rev) == read1) == left ? O_FF : O_RR);
    }
    if (!rev)
        *other_c = oe;
    else
        *this_c = te;
    return (int8_t)((!rev) == left ? O_FR : O_RF);
}

/* -m s: leftmost by sequence starts, ties by POS and READ1. */
static int leftmost_sequence(const bam1_t *b, hts_pos_t ts, hts_pos_t te, hts_pos_t os,
                             hts_pos_t oe)
{
    int64_t d;
    if (b->core.tid != b->core.mtid)
        d = (int64_t)b->core.tid - b->core.mtid;
    else if (bam_is_rev(b) == bam_is_mrev(b))
        d = bam_is_rev(b) ? te - oe : ts - os;
    else
        d = bam_is_rev(b) ? te - os : ts - oe;
    if (d != 0)
        return d < 0;
    if (b->core.pos == b->core.mpos)
        return (b->core.flag & BAM_FREAD1) != 0;
    return b->core.pos < b->core.mpos;
}

static int8_t orient_sequence(const bam1_t *b, int left)
{
    int rev = bam_is_rev(b);
    if (rev == bam_is_mrev(b))
        return (int8_t)((!rev) == left ? O_FF : O_RR);
    return (int8_t)((!rev) == left ? O_FR : O_RF);
}

int dup_pair_key(const dup_run_t *r, dup_key_t *key, const bam1_t *b)
{
    const uint8_t *mc = bam_aux_get(b, "MC");
    const char *cig = mc ? bam_aux2Z(mc) : NULL;
    if (!cig)
        return -1;
    hts_pos_t ts = dup_unclipped_start(b), te = dup_unclipped_end(b), os, oe;
    mate_ends(b->core.mpos, cig, &os, &oe);
    hts_pos_t this_c = ts, other_c = os;
    int left;
    int8_t orient;
    if (r->o->mode == DUP_MODE_TEMPLATE) {
        left = leftmost_template(b, ts, te, os, oe);
        orient = orient_template(b, left, &this_c, te, &other_c, oe);
    } else {
        left = leftmost_sequence(b, ts, te, os, oe);
        orient = orient_sequence(b, left);
        this_c = bam_is_rev(b) ? te : ts;
        other_c = bam_is_mrev(b) ? oe : os;
    }
    *key = (dup_key_t){.single = 0,
                       .this_ref = b->core.tid + 1,
                       .this_coord = this_c,
                       .other_ref = b->core.mtid + 1,
                       .other_coord = other_c,
                       .leftmost = (int8_t)(left ? R_LE : R_RI),
                       .orientation = orient,
                       .barcode = barcode_of(r, b)};
    return 0;
}

void dup_single_key(const dup_run_t *r, dup_key_t *key, const bam1_t *b)
{
    int rev = bam_is_rev(b);
    *key = (dup_key_t){.single = 1,
                       .this_ref = b->core.tid + 1,
                       .this_coord = rev ? dup_unclipped_end(b) : dup_unclipped_start(b),
                       .orientation = (int8_t)(rev ? O_RR : O_FF),
                       .barcode = barcode_of(r, b)};
}

int64_t dup_score(const bam1_t *b)
{
    const uint8_t *q = bam_get_qual(b);
    int64_t s = 0;
    for (int i = 0; i < b->core.l_qseq; i++)
        if (q[i] >= DUP_MIN_QUALITY)
            s += q[i];
    return s;
}

int64_t dup_mate_score(const bam1_t *b)
{
    const uint8_t *d = bam_aux_get(b, "ms");
    return d ? bam_aux2i(d) : -1;
}

/* Only the fields samtools compares take part (a single key's mate fields are unset). */
khint_t dup_key_hash(dup_key_t k)
{
    uint64_t h = (uint64_t)k.this_coord * 0x9E3779B97F4A7C15ULL;
    h ^= ((uint64_t)(uint32_t)k.this_ref << 32 | (uint32_t)k.barcode) * 0xC2B2AE3D27D4EB4FULL;
    h ^= (uint64_t)(k.orientation * 131 + k.single);
    if (!k.single) {
        h ^= (uint64_t)k.other_coord * 0x165667B19E3779F9ULL;
        h ^= ((uint64_t)(uint32_t)k.other_ref << 8 | (uint8_t)k.leftmost) * 0x27D4EB2F165667C5ULL;
    }
    return (khint_t)(h ^ h >> 29 ^ h >> 47);
}

int dup_key_equal(dup_key_t a, dup_key_t b)
{
    if (a.this_coord != b.this_coord || a.orientation != b.orientation ||
        a.this_ref != b.this_ref || a.single != b.single || a.barcode != b.barcode)
        return 0;
    return a.single || (a.other_coord == b.other_coord && a.leftmost == b.leftmost &&
                        a.other_ref == b.other_ref);
}

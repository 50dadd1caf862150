/*
 * index_lines.c -- a worker's notes for the tabix index of its shard's text
 * (`tabix -s1 -b2 -e2`, TBI or CSI, and VCF as `bcftools index` reads it
 * through tbx_index): each line as tbx_index reads it. BCF records are
 * noted in index_bcf.c, through the same entry point.
 *
 * The text is noted in the pieces the output hands over before they leave
 * memory (a spill, or the shard's end), so a line may start in one piece and
 * end in the next: the head of such a line is kept in carry until its end
 * comes. Entries record raw offsets (bytes of text); the merge maps them to
 * blocks with the block table, since every block but the shard's last holds
 * BGZF_BLOCK_SIZE bytes of text (compress.c).
 *
 * Worker thread that owns the piece.
 */
#define _GNU_SOURCE /* memmem */
#include <stdlib.h>
#include <string.h>

#include "index_piece.h"

/* The number strtoll (base 0) reads at s[0..n), from a copy of at most 63 bytes. */
static int read_number(const char *s, size_t n, long long *v)
{
    char num[64];
    n = n < sizeof(num) - 1 ? n : sizeof(num) - 1;
    memcpy(num, s, n);
    num[n] = '\0';
    char *stop;
    *v = strtoll(num, &stop, 0);
    return stop == num ? -1 : 0;
}

/*
 * A line as tbx_parse1 reads it with sc = 1, bc = ec = 2, meta '#': the name
 * up to the first tab, the start from column 2 by strtoll (base 0) as
 * [n - 1, n), clamped to beg >= 0, end >= 1. The number is read from a copy
 * of the line's next 63 bytes, enough for any number tabix would read there.
 * 1: a data line; 0: a meta line; -1: one tabix skips.
 */
static int parse_line(const char *s, size_t len, size_t *name_len, hts_pos_t *beg, hts_pos_t *end)
{
    if (len && s[0] == '#')
        return 0;
    const char *tab = memchr(s, '\t', len);
    long long v;
    if (!tab || read_number(tab + 1, (size_t)(s + len - (tab + 1)), &v) < 0)
        return -1;
    *beg = v - 1 < 0 ? 0 : v - 1;
    *end = v < 1 ? 1 : v;
    *name_len = (size_t)(tab - s);
    return 1;
}

/*
 * INFO's END as tbx_parse1 finds it in info[0..n): "END=" at its start, or
 * else ";END=" anywhere; not '.'. Read by strtoll within INFO. end is kept
 * unless the value lies past beg.
 */
static void vcf_info_end(const char *info, size_t n, hts_pos_t beg, hts_pos_t *end)
{
    const char *s = memmem(info, n, "END=", 4);
    if (s == info)
        s += 4;
    else if (s && (s = memmem(info, n, ";END=", 5)))
        s += 5;
    if (!s || (s < info + n && *s == '.'))
        return;
    long long v = 0;
    (void)read_number(s, (size_t)(info + n - s), &v); /* nothing to read: 0, as strtoll */
    if (v > beg)
        *end = v;
}

/*
 * A VCF line as tbx_parse1 reads it with tabix's VCF preset (sc 1, bc 2):
 * the start as parse_line's; the end at start + REF's length (column 4) when
 * REF is not empty, or INFO's END (column 8). Columns part at tabs (and NULs,
 * as tbx_parse1 parts them). 1, 0 or -1 as parse_line.
 */
static int parse_vcf(const char *s, size_t len, size_t *name_len, hts_pos_t *beg, hts_pos_t *end)
{
    if (len && s[0] == '#')
        return 0;
    int id = 1, have_beg = 0;
    for (size_t i = 0, b = 0; i <= len; i++) {
        if (i < len && s[i] != '\t' && s[i] != '\0')
            continue;
        long long v;
        if (id == 1) {
            *name_len = i;
        } else if (id == 2) {
            if (read_number(s + b, len - b, &v) < 0)
                return -1;
            *beg = v - 1 < 0 ? 0 : v - 1;
            *end = v < 1 ? 1 : v;
            have_beg = 1;
        } else if (id == 4 && b < i) {
            *end = *beg + (hts_pos_t)(i - b);
        } else if (id == 8) {
            vcf_info_end(s + b, i - b, *beg, end);
        }
        b = i + 1;
        id++;
    }
    return have_beg ? 1 : -1;
}

int ss_idx_write_line(ss_idx_piece_t *p, const ss_idx_note_t *r, uint64_t run_m, uint64_t run_u)
{
    int rc = 0;
    ss_idx_entry_t e = {.n = 0};
    ss_idx_entry_varint(&e,
                        E_MAPPED | (r->new_contig ? E_CONTIG : 0) | (run_m | run_u ? E_RUN : 0));
    if (r->new_contig) { /* the name's bytes follow its length, outside the entry buffer */
        ss_idx_entry_varint(&e, p->name.l);
        rc |= kputsn((const char *)e.b, (size_t)e.n, &p->ent) < 0 ? -1 : 0;
        rc |= kputsn(p->name.s, p->name.l, &p->ent) < 0 ? -1 : 0;
        e.n = 0;
    }
    uint64_t d = r->beg >= p->beg ? (uint64_t)(r->beg - p->beg) << 1
                                  : ((uint64_t)(p->beg - r->beg) << 1) - 1; /* zigzag */
    ss_idx_entry_varint(&e, d);
    ss_idx_entry_varint(&e, (uint64_t)(r->end - r->beg) << 1);
    if (run_m | run_u)
        ss_idx_entry_run(&e, run_m, run_u);
    ss_idx_entry_varint(&e, r->after - p->last_u);
    p->beg = r->beg;
    p->last_u = r->after;
    p->n_ent++;
    rc |= kputsn((const char *)e.b, (size_t)e.n, &p->ent) < 0 ? -1 : 0;
    return rc;
}

/* A '#' line before the first data line: its entry (it moves tabix's first offset). */
static int write_meta(ss_idx_piece_t *p, uint64_t u)
{
    ss_idx_entry_t e = {.n = 0};
    ss_idx_entry_varint(&e, E_META);
    ss_idx_entry_varint(&e, u - p->last_u);
    p->last_u = u;
    p->n_ent++;
    return kputsn((const char *)e.b, (size_t)e.n, &p->ent) < 0 ? -1 : 0;
}

/* One line of the shard, ending at raw offset u: noted. 0, or -1 out of memory. */
static int note_line(ss_idx_piece_t *p, const char *s, size_t len, uint64_t u)
{
    size_t nlen;
    hts_pos_t beg = 0, end = 0;
    int r = p->kind == SS_IDX_VCF ? parse_vcf(s, len, &nlen, &beg, &end)
                                  : parse_line(s, len, &nlen, &beg, &end);
    if (r == 0 && p->kind == SS_IDX_VCF)
        return -1; /* a '#' line in a shard would size a VCF's CSI (tbx_index): read it back */
    if (r < 0 || (r == 0 && p->seen_data))
        return 0; /* after the first data line, tbx_index only steps over these */
    if (r == 0)
        return write_meta(p, u);
    int same = p->seen_data && nlen == p->name.l && memcmp(s, p->name.s, nlen) == 0;
    p->seen_data = 1;
    if (!same) {
        p->name.l = 0;
        if (kputsn(s, nlen, &p->name) < 0)
            return -1;
    }
    ss_idx_note_t note = {0, !same, beg, end, 1, u};
    return ss_idx_note(p, &note);
}

/* The line whose head is in carry ends at text[upto], its newline; u is after it. 0 or -1. */
static int finish_carried(ss_idx_piece_t *p, const char *text, size_t upto, uint64_t u)
{
    if (kputsn(text, upto, &p->carry) < 0)
        return -1;
    int rc = note_line(p, p->carry.s, p->carry.l, u);
    p->carry.l = 0;
    return rc;
}

int ss_idx_piece_lines(ss_idx_piece_t *p, const char *text, size_t len, uint64_t text_off,
                       size_t leaving, int final)
{
    if (p->kind == SS_IDX_BCF)
        return ss_idx_piece_bcf(p, text, len, text_off, leaving, final);
    if ((p->kind != SS_IDX_LINES && p->kind != SS_IDX_VCF) || p->failed)
        return p->failed ? -1 : 0;
    size_t at = 0;
    int rc = 0;
    if (p->carry.l) { /* carry holds raw [scan_at, text_off) */
        const char *nl = memchr(text, '\n', len);
        if (!nl && (final || kputsn(text, leaving, &p->carry) < 0)) {
            p->failed = 1; /* final: see below */
            return -1;
        }
        if (!nl)
            return 0;
        at = (size_t)(nl + 1 - text);
        rc = finish_carried(p, text, (size_t)(nl - text), text_off + at);
    } else {
        at = (size_t)(p->scan_at - text_off);
    }
    for (const char *nl; rc == 0 && at < len && (nl = memchr(text + at, '\n', len - at));) {
        size_t next = (size_t)(nl + 1 - text);
        rc = note_line(p, text + at, next - 1 - at, text_off + next);
        at = next;
    }
    /* a last line without its newline runs on into whatever follows the shard: no index
     * from the shards can say where tabix would see it end */
    if (final && at < len)
        rc = -1;
    p->scan_at = text_off + at;
    if (rc == 0 && at < leaving && kputsn(text + at, leaving - at, &p->carry) < 0)
        rc = -1;
    if (rc < 0)
        p->failed = 1;
    return rc;
}

/*
 * reader_tally.c -- the records each shard owns, as the reader returned
 * them, added up for the run's end (ss_io_tally_check).
 *
 * A shard reads through the index, so a damaged bin, chunk or linear-index
 * entry makes a query skip records and the run end with exit 0 and fewer of
 * them. The index also counts each contig's records in its pseudo-bin
 * (samtools idxstats), apart from the bins: a whole-file run that returned
 * fewer than those counts lost some. The kernel's queries overlap (halos,
 * look-ups before the main query), so a record is counted once a shard:
 * records come in position order within a query, and a query that starts at
 * or before a position returns all of that position's records, in file
 * order; so (position, how many at it) of the last one counted says whether
 * a record was counted before. Records are counted before any kernel filter.
 *
 * A shard also reads the records of the shard before that reach into it
 * (pileup, depth and mosdepth count their bases), from a query the owner's
 * count does not vouch for: the owner counts its records that reach past
 * its end, the next shard those it was given (the most that one query
 * covering its start returned), and the two must agree. Records longer than
 * a shard are checked at the first boundary they cross only.
 *
 * Only BAM inputs are counted: a CRAI has no counts (index_check.c checks
 * it against the file's containers at job open). An input a shard did not
 * query (view's block copy reads bytes, not records) leaves that contig's
 * count unknown. Owned by the reader's worker.
 */
#include <stdlib.h>
#include <string.h>

#include "reader_priv.h"

size_t ss_io_tally_len(int n_contigs, int n_inputs)
{
    size_t slots = (size_t)n_contigs + 1, cells = slots * (size_t)n_inputs;
    return 4 * slots + (cells <= SS_IO_TALLY_CELLS_MAX ? cells : 0);
}

static int n_contigs(const ss_reader_t *r)
{
    const sam_hdr_t *h = r->in.hdr ? r->in.hdr : r->in.n > 0 ? r->f[0].h : NULL;
    return h ? sam_hdr_nref(h) : 0;
}

void ss_reader_own(ss_reader_t *r, int tid, hts_pos_t beg, hts_pos_t end, hts_pos_t prev_beg)
{
    r->own_tid = tid;
    r->own_beg = beg;
    r->own_end = end;
    r->prev_beg = prev_beg;
    for (int i = 0; i < r->in.n; i++)
        r->f[i].own = (rd_own_t){.last = -2, .q_last = -2};
}

void rd_own_query(ss_reader_t *r, rd_file_t *f)
{
    if (r->own_tid == -2)
        return;
    f->own.queried = 1;
    f->own.q_last = -2;
    f->own.q_n = 0;
    f->own.in_q = 0;
    f->own.q_covers = f->q_tid == r->own_tid && f->q_beg <= r->own_beg && r->own_beg < f->q_end;
}

/* b comes from the previous shard and reaches into this one: the most one covering query gave. */
static void note_reaching_in(ss_reader_t *r, rd_own_t *o, const bam1_t *b)
{
    if (!o->q_covers || b->core.pos < r->prev_beg || bam_endpos(b) <= r->own_beg)
        return;
    if (++o->in_q > o->in)
        o->in = o->in_q;
}

void rd_own_note(ss_reader_t *r, rd_file_t *f, const bam1_t *b)
{
    const bam1_core_t *c = &b->core;
    if (r->own_tid == -2 || f->is_cram || c->tid != r->own_tid)
        return;
    hts_pos_t p = c->pos;
    rd_own_t *o = &f->own;
    if (c->tid >= 0 && p < r->own_beg) {
        note_reaching_in(r, o, b);
        return;
    }
    /* before the query's start a position's records come only if they reach into it */
    if (c->tid >= 0 && (p >= r->own_end || p < f->q_beg))
        return;
    if (p == o->q_last) {
        o->q_n++;
    } else {
        o->q_last = p;
        o->q_n = 1;
    }
    if (p > o->last || (p == o->last && o->q_n > o->n_last)) {
        o->last = p;
        o->n_last = o->q_n;
        o->n++;
        o->out += c->tid >= 0 && bam_endpos(b) > r->own_end;
    }
}

void rd_own_end(ss_reader_t *r)
{
    if (r->own_tid == -2)
        return;
    int nc = n_contigs(r), slot = r->own_tid + 1;
    size_t len = ss_io_tally_len(nc, r->in.n), slots = (size_t)nc + 1;
    r->own_tid = -2;
    if (!r->tally && !r->tally_lost && !(r->tally = calloc(len, sizeof(*r->tally))))
        r->tally_lost = 1;
    if (r->tally_lost || slot < 0 || slot > nc)
        return;
    int all = 1;
    for (int i = 0; i < r->in.n; i++)
        all &= r->f[i].is_cram || r->f[i].own.queried;
    if (!all) {
        r->tally[slots + (size_t)slot]++;
        return;
    }
    int cells = len > 4 * slots;
    for (int i = 0; i < r->in.n; i++) {
        const rd_own_t *o = &r->f[i].own;
        if (r->f[i].is_cram)
            continue;
        r->tally[slot] += o->n;
        r->tally[2 * slots + (size_t)slot] += o->out;
        r->tally[3 * slots + (size_t)slot] += o->in;
        if (cells)
            r->tally[4 * slots + (size_t)i * slots + (size_t)slot] += o->n;
    }
}

int ss_reader_tally_add(const ss_reader_t *r, uint64_t *v)
{
    if (r->tally_lost)
        return -1;
    size_t len = ss_io_tally_len(n_contigs(r), r->in.n);
    for (size_t k = 0; r->tally && k < len; k++)
        v[k] += r->tally[k];
    return 0;
}

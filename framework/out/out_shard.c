/*
 * out_shard.c -- a worker's output for one shard: text appended as it comes, or
 * records encoded in the run's format (SAM lines, BAM records packed into
 * BGZF blocks, CRAM containers from a per-shard htslib writer).
 *
 * Records arrive in the order they are written: records that move do so in
 * a record step in front of the kernel (ss_step.h), which hands them out
 * sorted, so the output never sorts.
 *
 * Owned by one worker thread; the run (ss_out_run_t) is shared read-only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <htslib/bgzf.h>

#include "../../alloc/ss_alloc.h"
#include "compress.h"
#include "ordered.h"
#include "out_shard.h"
#include "shard_index.h"
#include "side.h"
#include "spill.h"

/* Room a buffer keeps for the lines a kernel writes between two checkpoints. */
#define SPILL_SLACK ((size_t)1 << 20)
/* Less than this is not worth a write to the spill file (and BGZF needs a block's worth). */
#define SPILL_MIN ((size_t)64000)

struct ss_out_s {
    const ss_out_run_t *run;
    ss_ordered_t *bufs;   /* owns buf and counts its capacity against the budget */
    size_t charged;       /* buf's capacity as last counted there */
    size_t slack;         /* room a buffer keeps for the lines before the next checkpoint */
    const ss_shard_t *sh; /* the shard being processed */
    kstring_t *buf;       /* its bytes, owned by the ordered writer */
    kstring_t line;       /* one SAM line or BAM record */
    kstring_t z;          /* BGZF text: the compressed shard, swapped into buf */
    ss_bgzf_pack_t pack;  /* BAM: the block being filled */
    ss_cram_enc_t *cram;
    sam_hdr_t *cram_hdr; /* CRAM: this worker's copy of the header (htslib writes to it) */
    int cram_open;       /* a CRAM writer is open for this shard */
    ss_spill_t spill;    /* the shard's leading bytes, moved out of buf (spill.h) */
    size_t spilled_raw;  /* bytes of buf moved there, before compression */
    ss_side_t *side;     /* side streams and reductions (side_out.c), or NULL */
    int worker;
    ss_idx_piece_t idx; /* what the output's index needs of this shard (shard_index.h) */
};

ss_out_t *ss_out_init(const ss_out_run_t *r, ss_ordered_t *bufs)
{
    ss_out_t *o = ss_alloc_private(sizeof(*o)); /* written per record */
    if (!o)
        goto oom;
    o->run = r;
    o->bufs = bufs;
    /* a tiny budget (tests) keeps little room; the usual one keeps 1 MiB */
    size_t budget = ss_ordered_budget(bufs);
    o->slack = budget && budget / 8 < SPILL_SLACK ? budget / 8 : SPILL_SLACK;
    o->spill = SS_SPILL_NONE;
    if (ss_ks_private(&o->line, 4096) < 0)
        goto oom;
    if (r->format == SS_FMT_BAM && ss_bgzf_pack_init(&o->pack, r->level) < 0)
        goto oom;
    if (r->zpool)
        (void)ss_bgzf_pack_async(&o->pack, r->zpool, &r->busy, r->cores); /* else here */
    if (r->format == SS_FMT_CRAM) {
        if (!(o->cram_hdr = sam_hdr_dup(r->hdr)))
            goto oom;
        if (!(o->cram = ss_cram_enc_init(&r->cram, &r->cram_opts, o->cram_hdr, r->tmp_dir))) {
            ss_out_destroy(o);
            return NULL;
        }
    }
    return o;
oom:
    ss_error("out of memory starting a worker's output");
    ss_out_destroy(o);
    return NULL;
}

void ss_out_destroy(ss_out_t *o)
{
    if (!o)
        return;
    ss_spill_close(&o->spill);
    ss_cram_enc_destroy(o->cram);
    if (o->cram_hdr)
        sam_hdr_destroy(o->cram_hdr);
    ss_bgzf_pack_destroy(&o->pack);
    ss_idx_piece_free(&o->idx);
    free(o->line.s);
    free(o->z.s);
    free(o);
}

int ss_out_begin(ss_out_t *o, const ss_shard_t *sh, kstring_t *buf)
{
    o->sh = sh;
    o->buf = buf;
    o->charged = (size_t)-1; /* settled at the first checkpoint */
    o->pack.len = 0;
    ss_spill_close(&o->spill);
    o->spilled_raw = 0;
    ss_idx_piece_reset(&o->idx, o->run->idx_kind);
    /* a CRAM shard is a fresh htslib writer, records or not (its framing is fixed) */
    if (o->run->format == SS_FMT_CRAM) {
        if (ss_cram_enc_begin(o->cram) < 0)
            return -1;
        o->cram_open = 1;
    }
    return 0;
}

void ss_out_set_side(ss_out_t *o, ss_side_t *s, int worker)
{
    o->side = s, o->worker = worker;
}

ss_side_t *ss_out_get_side(const ss_out_t *o, int *worker)
{
    *worker = o->worker;
    return o->side;
}

kstring_t *ss_out_text(ss_out_t *o)
{
    return o->buf;
}

/* Whether buf's bytes may leave memory now: they are final (not CRAM, whose
 * containers are made at the end). */
static int spillable(const ss_out_t *o)
{
    return o->run->format != SS_FMT_CRAM;
}

/*
 * The index notes of text about to be compressed (the first `leaving` bytes
 * of buf), and of the blocks made. A note that fails (out of memory) only
 * marks the piece unusable: the index is then built by reading the file.
 */
static void note_lines(ss_out_t *o, size_t leaving, int final)
{
    (void)ss_idx_piece_lines(&o->idx, o->buf->s, o->buf->l, o->spilled_raw, leaving, final);
}

static void note_blocks(ss_out_t *o)
{
    if (ss_idx_kind_text(o->idx.kind))
        (void)ss_idx_piece_blocks(&o->idx, o->z.s, o->z.l);
}

/*
 * Move the shard's bytes so far to its spill file, keeping what must stay:
 * compressed text keeps its last partial block's input, so the blocks come
 * out exactly as one compression of the whole shard would cut them.
 */
static int spill(ss_out_t *o)
{
    const char *dir = o->run->spill_dir;
    size_t n = o->buf->l;
    if (o->run->bgzf)
        n -= n % BGZF_BLOCK_SIZE;
    if (n == 0)
        return 0;
    if (o->run->bgzf) {
        note_lines(o, n, 0);
        if (ss_bgzf_compress_ks(o->buf->s, n, &o->z, o->run->level) < 0) {
            ss_error("shard %d: BGZF compression failed (out of memory?)", o->sh->idx);
            return -1;
        }
        note_blocks(o);
        if (ss_spill_append(&o->spill, dir, o->sh->idx, o->z.s, o->z.l) < 0)
            return -1;
    } else if (ss_spill_append(&o->spill, dir, o->sh->idx, o->buf->s, n) < 0) {
        return -1;
    }
    memmove(o->buf->s, o->buf->s + n, o->buf->l - n);
    o->buf->l -= n;
    o->spilled_raw += n;
    return 0;
}

static int out_of_memory(const ss_out_t *o)
{
    ss_error("out of memory for shard %d's output", o->sh->idx);
    return -1;
}

/*
 * The buffer is nearly full, or grew by itself: let it grow by half while the
 * rank's buffers stay within their budget (ss_ordered_grow), else move its
 * bytes to the spill file so it needs no more. 0 or -1.
 */
static int make_room(ss_out_t *o)
{
    kstring_t *b = o->buf;
    int over = ss_ordered_settle(o->bufs, b);
    o->charged = b->m;
    if (!over && b->l + o->slack <= b->m)
        return 0;
    if (!over) {
        /*
         * Up to the buffer's share at once, then by half: every step frees the old
         * block, which the allocator keeps, so a long chain of small steps would pin
         * about twice the final size beside it.
         */
        size_t least = b->l + 2 * o->slack, want = b->m + b->m / 2;
        if (want < ss_ordered_share(o->bufs))
            want = ss_ordered_share(o->bufs);
        int g = ss_ordered_grow(o->bufs, b, want > least ? want : least, least);
        o->charged = b->m;
        if (g < 0)
            return out_of_memory(o);
        if (g > 0)
            return 0;
    }
    return b->l >= SPILL_MIN ? spill(o) : 0;
}

int ss_out_checkpoint(ss_out_t *o)
{
    /* the hot path (a pileup column): room left and no growth uncounted */
    if (o->buf->l + o->slack <= o->buf->m && o->buf->m == o->charged)
        return 0;
    return spillable(o) ? make_room(o) : 0;
}

int ss_out_reserve(ss_out_t *o, size_t n)
{
    if (ss_out_checkpoint(o) < 0)
        return -1;
    if (n > SS_RESERVE_MAX)
        n = SS_RESERVE_MAX;
    /* within the budget; what it has no room for spills at the checkpoints */
    size_t least = o->buf->l + o->slack;
    int g = ss_ordered_grow(o->bufs, o->buf, n > least ? n : least, spillable(o) ? least : n);
    o->charged = o->buf->m;
    if (g < 0)
        return out_of_memory(o);
    if (g == 0 && !spillable(o) && ss_ks_reserve(o->buf, n) < 0)
        return out_of_memory(o); /* CRAM cannot spill: grow as before, counted when settled */
    return 0;
}

size_t ss_out_length(const ss_out_t *o)
{
    return o->spilled_raw + o->buf->l + o->pack.raw_in_flight + o->pack.len;
}

ss_spill_t ss_out_take_spill(ss_out_t *o)
{
    ss_spill_t sp = o->spill;
    o->spill = SS_SPILL_NONE;
    return sp;
}

/* A record the encoder refused: whose, where, why (as samtools view would say) and the fix. */
static int encode_error(const ss_out_t *o, const bam1_t *b)
{
    int err = errno;
    const char *in = o->run->input ? o->run->input : "an input";
    const char *name = bam_get_qname(b);
    char at[300];
    int tid = b->core.tid, shard = o->sh ? o->sh->idx : -1;
    const sam_hdr_t *h = o->run->hdr;
    snprintf(at, sizeof(at), "%s:%lld",
             tid >= 0 && tid < sam_hdr_nref(h) ? sam_hdr_tid2name(h, tid) : "*",
             (long long)b->core.pos + 1);
    if (err == EOVERFLOW)
        ss_error("%s: read '%s' at %s (shard %d) does not fit BAM (name over 254 characters or "
                 "position over 2^31); write SAM or CRAM instead",
                 in, name, at, shard);
    else if (err == EINVAL) /* the one cause sam_format1 reports so */
        ss_error("%s: read '%s' at %s (shard %d) has damaged aux data, so it cannot be written "
                 "as SAM (samtools view fails there too: \"Corrupted aux data for read %s\"); "
                 "the file is corrupt: re-create it from its source",
                 in, name, at, shard, name);
    else if (err == ENOMEM)
        ss_error("out of memory writing read '%s' at %s (shard %d); use fewer threads (-@) or "
                 "a smaller --shard-size",
                 name, at, shard);
    else
        ss_error("%s: cannot write read '%s' at %s (shard %d): %s", in, name, at, shard,
                 strerror(err));
    return -1;
}

/*
 * BAM: where the record in o->line will start, for the index. The block that
 * cannot take it is closed here, as ss_bgzf_pack_write would close it, so the
 * start is known; the record before ends there, which is where htslib's
 * reader stands after it (at the next block's start when it filled its own).
 */
static int note_record(ss_out_t *o, const bam1_t *b)
{
    if (o->idx.kind != SS_IDX_RECORDS)
        return 0;
    if (o->pack.len + o->line.l > BGZF_BLOCK_SIZE && ss_bgzf_pack_flush(&o->pack, o->buf) < 0)
        return -1;
    uint64_t start = (uint64_t)(o->spilled_raw + o->buf->l) << 16 | o->pack.len;
    (void)ss_idx_piece_record_at(&o->idx, b->core.tid, b->core.pos, bam_endpos(b),
                                 !(b->core.flag & BAM_FUNMAP), start);
    return 0;
}

/*
 * SAM.gz: the line just written ends at this raw offset of the shard's text,
 * which is where sam_index's bgzf_tell stands after reading it (the merge
 * maps it to a block through the block table). A note that fails only marks
 * the piece unusable: the index is then built by reading the file.
 */
static void note_sam_line(ss_out_t *o, const bam1_t *b)
{
    if (o->idx.kind == SS_IDX_SAM)
        (void)ss_idx_piece_text_record(&o->idx, b->core.tid, b->core.pos, bam_endpos(b),
                                       !(b->core.flag & BAM_FUNMAP), o->spilled_raw + o->buf->l);
}

static int encode(ss_out_t *o, const bam1_t *b)
{
    switch (o->run->format) {
    case SS_FMT_SAM:
        if (sam_format1(o->run->hdr, b, &o->line) < 0 || kputsn(o->line.s, o->line.l, o->buf) < 0 ||
            kputc('\n', o->buf) < 0)
            return encode_error(o, b);
        note_sam_line(o, b);
        return 0;
    case SS_FMT_BAM:
        o->line.l = 0;
        if (ss_bam_encode(b, &o->line) < 0 || note_record(o, b) < 0 ||
            ss_bgzf_pack_write(&o->pack, o->line.s, o->line.l, 1, o->buf) < 0)
            return encode_error(o, b);
        return 0;
    case SS_FMT_CRAM:
        return ss_cram_enc_write(o->cram, b);
    case SS_FMT_TEXT:
        break;
    }
    ss_error("internal: a text kernel wrote a record ('%s')", bam_get_qname(b));
    return -1;
}

int ss_out_record(ss_out_t *o, const bam1_t *b)
{
    return encode(o, b) < 0 ? -1 : ss_out_checkpoint(o);
}

int ss_out_indexing(const ss_out_t *o)
{
    return o->idx.kind == SS_IDX_RECORDS;
}

int ss_out_index_copied(ss_out_t *o, const bam1_t *b, uint64_t end_voff)
{
    if (o->idx.kind != SS_IDX_RECORDS)
        return 0;
    return ss_idx_piece_record(&o->idx, b->core.tid, b->core.pos, bam_endpos(b),
                               !(b->core.flag & BAM_FUNMAP), end_voff);
}

kstring_t *ss_out_bgzf_blocks(ss_out_t *o)
{
    /* the flush lands the blocks still being compressed, so buf ends where the next goes */
    if (o->run->format == SS_FMT_BAM && !o->pack.len && ss_bgzf_pack_flush(&o->pack, o->buf) == 0)
        return o->buf;
    ss_error("internal: BGZF blocks written to a %s output or between records",
             o->run->format == SS_FMT_BAM ? "BAM" : "non-BAM");
    return NULL;
}

/*
 * CRAM: the .crai lines of the shard's containers, from its own small CRAM
 * (which the encoder still holds). If they cannot be had, the piece is
 * unusable and the output is read back instead.
 */
static void note_crai(ss_out_t *o)
{
    o->line.l = 0;
    if (ss_cram_enc_index(o->cram, &o->line) < 0 ||
        ss_idx_piece_crai(&o->idx, o->line.s ? o->line.s : "", o->line.l) < 0)
        o->idx.failed = 1;
}

/* BGZF text: compress the shard's bytes into whole blocks; buf leaves with them. */
static int compress_text(ss_out_t *o)
{
    note_lines(o, o->buf->l, 1);
    if (ss_bgzf_compress_ks(o->buf->s, o->buf->l, &o->z, o->run->level) < 0) {
        ss_error("shard %d: BGZF compression failed (out of memory?)", o->sh->idx);
        return -1;
    }
    note_blocks(o);
    kstring_t t = *o->buf;
    *o->buf = o->z;
    o->z = t;
    return 0;
}

int ss_out_end(ss_out_t *o)
{
    const ss_out_run_t *r = o->run;
    if (r->format == SS_FMT_BAM && ss_bgzf_pack_flush(&o->pack, o->buf) < 0) {
        ss_error("shard %d: BGZF compression failed (out of memory?)", o->sh->idx);
        return -1;
    }
    if (r->format == SS_FMT_CRAM && o->cram_open) {
        o->cram_open = 0;
        if (ss_cram_enc_end(o->cram, o->buf, o->sh->idx) < 0)
            return -1;
        if (o->idx.kind == SS_IDX_CRAI)
            note_crai(o);
    }
    /* CRAI: the piece's offsets count from the shard's own CRAM, after its frame */
    uint64_t raw_len = r->format == SS_FMT_CRAM ? r->cram.head.l : o->spilled_raw + o->buf->l;
    if (r->bgzf && o->buf->l && compress_text(o) < 0)
        return -1;
    /* a piece that cannot be finished leaves the index to be built from the file */
    (void)ss_idx_piece_end(&o->idx, o->spill.len + o->buf->l, raw_len);
    return 0;
}

void ss_out_take_index(ss_out_t *o, kstring_t *piece)
{
    piece->l = 0;
    if (o->idx.kind == SS_IDX_NONE)
        return;
    if (o->idx.failed) {
        ss_idx_piece_reset(&o->idx, o->idx.kind);
        return; /* empty: unusable */
    }
    free(piece->s);
    ss_idx_piece_take(&o->idx, piece);
}

void ss_out_abort(ss_out_t *o)
{
    if (!o)
        return;
    o->pack.len = 0; /* a failed shard's pending bytes must not open the next one */
    ss_bgzf_pack_discard(&o->pack);
    ss_idx_piece_reset(&o->idx, o->run->idx_kind);
    ss_spill_close(&o->spill);
    if (o->cram_open) {
        ss_cram_enc_abort(o->cram);
        o->cram_open = 0;
    }
}

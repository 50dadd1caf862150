/*
 * dup_machine.c -- samtools markdup 1.16.1's streaming decisions, replayed over
 * one block of records in file order. Each read that arrives is keyed: a
 * paired read (mate mapped) by its pair key and its single key, any other
 * examined read by its single key. The first read of a key holds the entry;
 * a later one competes with the holder (pairs: score plus the mate's ms,
 * ties by name; singles: score, ties kept; a single always loses to a pair)
 * and the loser is marked. A read leaves the buffer once it is -l behind
 * the newest read (and, with chains, once its chain was checked); the
 * entries it made leave with it, whoever holds them by then. Those rules,
 * to the letter, are what makes the verdicts samtools'.
 *
 * One machine per worker; reused across shards, so steady state allocates
 * nothing but what a deeper stack of keys needs.
 */
#include <stdlib.h>
#include <string.h>

#include "dup_machine.h"

dup_machine_t *dup_machine_init(const dup_run_t *run)
{
    dup_machine_t *m = calloc(1, sizeof(*m));
    if (!m || !(m->pairs = kh_init(dup_keys)) || !(m->singles = kh_init(dup_keys))) {
        dup_machine_destroy(m);
        ss_error("out of memory starting duplicate marking");
        return NULL;
    }
    m->run = run, m->o = run->o;
    m->exclude = BAM_FSECONDARY | BAM_FSUPPLEMENTARY | BAM_FUNMAP;
    if (!m->o->include_fails)
        m->exclude |= BAM_FQCFAIL;
    return m;
}

void dup_machine_destroy(dup_machine_t *m)
{
    if (!m)
        return;
    for (int i = 0; m->recs && i <= m->mask; i++)
        if (m->recs[i])
            bam_destroy1(m->recs[i]);
    free(m->recs), free(m->owned);
    if (m->pairs)
        kh_destroy(dup_keys, m->pairs);
    if (m->singles)
        kh_destroy(dup_keys, m->singles);
    free(m->slots);
    free(m->list);
    free(m);
}

int dup_note_name(dup_machine_t *m, const bam1_t *b, char kind, int optical, const char *ori)
{
    if (!m->names || !OWNED(m, m->now) ||
        !(bam_aux_get(b, "SA") || (b->core.flag & BAM_FMUNMAP) || bam_aux_get(b, "XA")))
        return 0;
    const char *name = bam_get_qname(b);
    if (kputc(kind, m->names) < 0 || kputc(optical ? 'O' : '-', m->names) < 0 ||
        kputsn(name, strlen(name) + 1, m->names) < 0 ||
        kputsn(ori ? ori : "", strlen(ori ? ori : "") + 1, m->names) < 0) {
        ss_error("%s: out of memory noting duplicates for -S", m->file);
        return -1;
    }
    return 0;
}

/* Mark dup as a duplicate of ori: DUP flag, do and dt tags; optical counts into *opt. */
static int mark(dup_machine_t *m, int ori, int dup, int64_t *opt)
{
    bam1_t *d = REC(m, dup);
    const char *oname = bam_get_qname(REC(m, ori));
    d->core.flag |= BAM_FDUP;
    if (m->o->tag && bam_aux_update_str(d, "do", (int)strlen(oname) + 1, oname) < 0)
        goto oom;
    if (m->o->opt_dist) {
        dup_coords_t oc, dc;
        int optical = dup_coords(m->run, oname, &oc) == 0 &&
                      dup_is_optical(m->run, oname, &oc, bam_get_qname(d), &dc);
        if (bam_aux_update_str(d, "dt", 3, optical ? "SQ" : "LB") < 0)
            goto oom;
        *opt += optical;
        return dup_note_name(m, d, 'A', optical, m->o->tag ? oname : NULL);
    }
    return dup_note_name(m, d, 'A', 0, m->o->tag ? oname : NULL);
oom:
    ss_error("%s: out of memory tagging read %s", m->file, bam_get_qname(d));
    return -1;
}

/* Append chain `tail` after the last read of the chain starting at `from`. */
static void chain_append(dup_machine_t *m, int from, int tail)
{
    while (SLOT(m, from).dup >= 0)
        from = SLOT(m, from).dup;
    SLOT(m, from).dup = tail;
}

static int64_t pair_score(dup_machine_t *m, const bam1_t *b, int *err)
{
    int64_t ms = dup_mate_score(b);
    if (ms < 0) {
        ss_error("%s: read %s has no ms tag; run samtools fixmate -m on the name-collated "
                 "input, then sort it",
                 m->file, bam_get_qname(b));
        *err = 1;
    }
    return dup_score(b) + ms;
}

/* A pair read meets the holder h of its pair key: the better one holds it, the other is marked. */
static int pair_compete(dup_machine_t *m, int i, int *holder)
{
    int h = *holder, err = 0, chain = m->o->check_chain;
    const bam1_t *a = REC(m, h), *b = REC(m, i);
    int64_t old_s, new_s;
    if ((a->core.flag & BAM_FQCFAIL) != (b->core.flag & BAM_FQCFAIL)) {
        old_s = (a->core.flag & BAM_FQCFAIL) ? 0 : 1;
        new_s = 1 - old_s;
    } else {
        old_s = pair_score(m, a, &err);
        new_s = err ? 0 : pair_score(m, b, &err);
        if (err)
            return -1;
    }
    if (new_s == old_s)
        new_s += strcmp(bam_get_qname(b), bam_get_qname(a)) < 0 ? 1 : -1;
    int dup;
    if (new_s > old_s) {
        dup = h;
        if (chain && SLOT(m, i).dup >= 0)
            chain_append(m, SLOT(m, i).dup, h);
        else if (chain)
            SLOT(m, i).dup = h;
        *holder = i;
    } else {
        if (chain && SLOT(m, h).dup >= 0) {
            if (SLOT(m, i).dup >= 0)
                chain_append(m, SLOT(m, h).dup, SLOT(m, i).dup);
            SLOT(m, i).dup = SLOT(m, h).dup;
        }
        if (chain)
            SLOT(m, h).dup = i;
        dup = i;
    }
    dup_counts_of(m, i)->duplicate++;
    return mark(m, *holder, dup, &dup_counts_of(m, i)->optical);
}

/* Put key k for read i: 1 when i now holds it (new), 0 when *holder holds it, -1 out of memory. */
static int key_put(dup_machine_t *m, khash_t(dup_keys) * h, dup_key_t k, int i, int **holder)
{
    int ret;
    khint_t it = kh_put(dup_keys, h, k, &ret);
    if (ret < 0) {
        ss_error("%s: out of memory keying duplicates", m->file);
        return -1;
    }
    if (ret > 0)
        kh_val(h, it) = i;
    *holder = &kh_val(h, it);
    return ret > 0;
}

/* A paired read (mate mapped) arrives: its single key, then its pair key. */
static int pair_arrive(dup_machine_t *m, int i)
{
    dup_slot_t *s = &SLOT(m, i);
    bam1_t *b = REC(m, i);
    dup_key_t pk, sk;
    if (dup_pair_key(m->run, &pk, b) < 0) {
        ss_error("%s: read %s has no MC tag; run samtools fixmate -m on the name-collated "
                 "input, then sort it",
                 m->file, bam_get_qname(b));
        return -1;
    }
    dup_single_key(m->run, &sk, b);
    dup_counts_of(m, i)->pair++;
    s->pos = sk.this_coord;
    int *holder, r = key_put(m, m->singles, sk, i, &holder);
    if (r < 0)
        return -1;
    if (r > 0) {
        s->single_key = sk, s->has_single = 1;
    } else if (!dup_paired(REC(m, *holder))) { /* a single always loses to a pair */
        int single = *holder;
        if (m->o->check_chain)
            s->dup = single;
        *holder = i;
        if (mark(m, i, single, &dup_counts_of(m, i)->single_optical) < 0)
            return -1;
        dup_counts_of(m, i)->single_dup++;
    }
    if ((r = key_put(m, m->pairs, pk, i, &holder)) < 0)
        return -1;
    if (r > 0) {
        s->pair_key = pk, s->has_pair = 1;
        return 0;
    }
    return pair_compete(m, i, holder);
}

/* A single read meets the holder of its key. */
static int single_compete(dup_machine_t *m, int i, int *holder)
{
    int h = *holder, chain = m->o->check_chain, dup = i;
    if (!dup_paired(REC(m, h)) && dup_score(REC(m, i)) > dup_score(REC(m, h))) {
        dup = h;
        if (chain)
            SLOT(m, i).dup = h;
        *holder = i;
    } else {
        if (chain && SLOT(m, h).dup >= 0)
            SLOT(m, i).dup = SLOT(m, h).dup;
        if (chain)
            SLOT(m, h).dup = i;
    }
    dup_counts_of(m, i)->single_dup++;
    return mark(m, *holder, dup, &dup_counts_of(m, i)->single_optical);
}

/* Any other examined read arrives: its single key only. */
static int single_arrive(dup_machine_t *m, int i)
{
    dup_key_t sk;
    dup_single_key(m->run, &sk, REC(m, i));
    dup_counts_of(m, i)->single++;
    SLOT(m, i).pos = sk.this_coord;
    int *holder, r = key_put(m, m->singles, sk, i, &holder);
    if (r < 0)
        return -1;
    if (r > 0) {
        SLOT(m, i).single_key = sk, SLOT(m, i).has_single = 1;
        return 0;
    }
    return single_compete(m, i, holder);
}

/* -c: the read forgets earlier marking. */
void dup_clear_marks(bam1_t *b)
{
    uint8_t *t;
    if (!(b->core.flag & BAM_FDUP))
        return;
    b->core.flag &= ~BAM_FDUP;
    if ((t = bam_aux_get(b, "dt")))
        bam_aux_del(b, t);
    if ((t = bam_aux_get(b, "do")))
        bam_aux_del(b, t);
}

static int arrive(dup_machine_t *m, int i)
{
    bam1_t *b = REC(m, i);
    SLOT(m, i) = (dup_slot_t){.pos = b->core.pos, .dup = -1};
    m->now = i;
    dup_counts_of(m, i)->reading++;
    if (m->o->clear)
        dup_clear_marks(b);
    if (b->core.flag & m->exclude) {
        dup_counts_of(m, i)->excluded++;
        return 0;
    }
    dup_counts_of(m, i)->examined++;
    return dup_paired(b) ? pair_arrive(m, i) : single_arrive(m, i);
}

/*
 * Read i, the oldest, leaves the buffer: its entries go, whoever holds them
 * now; it is final, and goes to the emit hook. 0, or the hook's -1.
 */
static int leave(dup_machine_t *m, int i)
{
    dup_slot_t *s = &SLOT(m, i);
    khint_t k;
    if (s->has_pair && (k = kh_get(dup_keys, m->pairs, s->pair_key)) != kh_end(m->pairs))
        kh_del(dup_keys, m->pairs, k);
    if (s->has_single && (k = kh_get(dup_keys, m->singles, s->single_key)) != kh_end(m->singles))
        kh_del(dup_keys, m->singles, k);
    bam1_t *b = REC(m, i);
    int owned = OWNED(m, i);
    m->head++;
    if (owned && !(m->o->remove_dups && (b->core.flag & BAM_FDUP)))
        m->c->writing++;
    return m->emit(m->ctx, b, owned);
}

/* After read i arrived: the reads before it that can gain no more duplicates leave. */
static int release(dup_machine_t *m, int i)
{
    hts_pos_t prev_coord = REC(m, i)->core.pos;
    int prev_tid = REC(m, i)->core.tid, chains_done = 0;
    while (m->head <= i) {
        int h = m->head;
        if (dup_in_window(m, h, prev_coord, prev_tid))
            break;
        if (!chains_done && m->o->check_chain) {
            if (dup_chains(m, i, prev_coord, prev_tid, 1) < 0)
                return -1;
            chains_done = 1;
        }
        const bam1_t *b = REC(m, h);
        if (m->o->check_chain && (b->core.flag & BAM_FDUP) && !SLOT(m, h).dup_checked &&
            !(b->core.flag & m->exclude))
            break;
        if (leave(m, h) < 0)
            return -1;
    }
    return 0;
}

/* Double the ring, keeping each buffered read at its sequence number. 0, or -1. */
static int grow(dup_machine_t *m)
{
    int cap = m->mask ? 2 * (m->mask + 1) : 1024, old = m->mask ? m->mask + 1 : 0;
    bam1_t **r = calloc((size_t)cap, sizeof(*r));
    dup_slot_t *sl = malloc((size_t)cap * sizeof(*sl));
    uint8_t *ow = malloc((size_t)cap);
    if (!r || !sl || !ow) {
        free(r), free(sl), free(ow);
        ss_error("%s: out of memory holding reads to mark; the window of -l holds too many",
                 m->file);
        return -1;
    }
    for (int q = m->head; q < m->head + old; q++) { /* full: every old entry is buffered */
        r[q & (cap - 1)] = m->recs[q & m->mask];
        sl[q & (cap - 1)] = m->slots[q & m->mask];
        ow[q & (cap - 1)] = m->owned[q & m->mask];
    }
    free(m->recs), free(m->slots), free(m->owned);
    m->recs = r, m->slots = sl, m->owned = ow, m->mask = cap - 1;
    return 0;
}

void dup_machine_begin(dup_machine_t *m, const char *file, dup_counts_t *c, kstring_t *names,
                       dup_emit_fn emit, void *ctx)
{
    m->file = file, m->c = c, m->names = names, m->emit = emit, m->ctx = ctx;
    m->head = m->tail = 0;
    kh_clear(dup_keys, m->pairs);
    kh_clear(dup_keys, m->singles);
}

bam1_t *dup_machine_slot(dup_machine_t *m)
{
    if ((!m->mask || m->tail - m->head > m->mask) && grow(m) < 0)
        return NULL;
    bam1_t **b = &m->recs[m->tail & m->mask];
    if (!*b && !(*b = bam_init1()))
        ss_error("%s: out of memory holding reads to mark", m->file);
    return *b;
}

int dup_machine_push(dup_machine_t *m, int owned)
{
    int i = m->tail++;
    OWNED(m, i) = (uint8_t)owned;
    return arrive(m, i) < 0 || release(m, i) < 0 ? -1 : 0;
}

int dup_machine_end(dup_machine_t *m)
{
    if ((m->o->tag || m->o->opt_dist) && m->head < m->tail &&
        dup_chains(m, m->tail - 1, 0, 0, 0) < 0)
        return -1;
    while (m->head < m->tail)
        if (leave(m, m->head) < 0)
            return -1;
    return 0;
}

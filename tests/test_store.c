/*
 * test_store.c -- a rank's store of finished shard outputs: pieces come back
 * byte for byte from memory and from the spill file, a released piece makes
 * room under the memory cap, and workers may put while the main thread reads
 * and releases earlier pieces. A shard's own spill file (spill.c) gives its
 * bytes back in order, and a piece put from one is its file then its buffer.
 */
#include <pthread.h>

#include "../framework/out/store.h"
#include "ss_testutil.h"

/* Piece i's bytes: its length and content follow from i alone. */
static size_t piece_len(int i)
{
    return (size_t)(i * 977) % 5000 + (i % 7 == 0 ? 0 : 1);
}

static void fill(char *buf, int i, size_t len)
{
    for (size_t j = 0; j < len; j++)
        buf[j] = (char)('a' + (i * 31 + (int)j) % 26);
}

typedef struct {
    char *got;
    size_t len;
    int calls;
} collect_t;

static int collect(void *ctx, uint64_t off, const char *buf, size_t len)
{
    collect_t *c = ctx;
    if (off != c->len)
        return -1; /* chunks must come in order, back to back */
    memcpy(c->got + c->len, buf, len);
    c->len += len;
    c->calls++;
    return 0;
}

/* Piece k holds shard idx's bytes, exactly. */
static void check_piece(ss_store_t *s, size_t k, int want_idx)
{
    int idx;
    uint64_t len;
    ss_store_piece(s, k, &idx, &len);
    SS_EQ(idx, want_idx);
    SS_EQ(len, piece_len(want_idx));
    char *want = malloc(len + 1), *got = malloc(len + 1);
    CU_ASSERT_FATAL(want && got);
    fill(want, want_idx, len);
    collect_t c = {got, 0, 0};
    SS_EQ(ss_store_each_chunk(s, k, collect, &c), 0);
    SS_EQ(c.len, len);
    CU_ASSERT(memcmp(got, want, len) == 0);
    free(want);
    free(got);
}

static int put(ss_store_t *s, int i)
{
    char buf[5001];
    size_t len = piece_len(i);
    fill(buf, i, len);
    return ss_store_put(s, i, buf, len);
}

static void test_memory_then_spill(void)
{
    /* room for about three pieces: the rest spill */
    ss_store_t *s = ss_store_init("/tmp", 12000);
    CU_ASSERT_FATAL(s != NULL);
    for (int i = 0; i < 40; i++)
        SS_EQ_FATAL(put(s, i), 0);
    SS_EQ(ss_store_count(s), 40);
    SS_CMP_U(ss_store_spilled(s), >, 0);
    for (int k = 39; k >= 0; k--) /* any order */
        check_piece(s, (size_t)k, k);
    ss_store_destroy(s);
}

static void test_release_makes_room(void)
{
    ss_store_t *s = ss_store_init("/tmp", 4000);
    CU_ASSERT_FATAL(s != NULL);
    SS_EQ_FATAL(put(s, 3), 0); /* 2932 bytes, in memory */
    SS_EQ_FATAL(put(s, 5), 0); /* 4886 bytes: over the cap, spilled */
    uint64_t spilled = ss_store_spilled(s);
    SS_EQ(spilled, piece_len(5));
    SS_EQ_FATAL(put(s, 1), 0); /* 978 bytes: 2932 + 978 fit */
    SS_EQ(ss_store_spilled(s), spilled);
    SS_EQ_FATAL(put(s, 2), 0); /* 1955: no longer fits beside 3 and 1 */
    SS_EQ(ss_store_spilled(s), spilled + piece_len(2));
    spilled = ss_store_spilled(s);
    ss_store_release(s, 0);    /* shard 3 written: its memory is free again */
    SS_EQ_FATAL(put(s, 4), 0); /* 3909 bytes: 978 + 3909 > 4000, spilled */
    SS_EQ(ss_store_spilled(s), spilled + piece_len(4));
    spilled = ss_store_spilled(s);
    ss_store_release(s, 2);    /* shard 1 */
    SS_EQ_FATAL(put(s, 8), 0); /* 2817 bytes: fits now that nothing is held */
    SS_EQ(ss_store_spilled(s), spilled);
    /* released pieces are never read again; the others are intact */
    check_piece(s, 1, 5);
    check_piece(s, 3, 2);
    check_piece(s, 4, 4);
    check_piece(s, 5, 8);
    ss_store_destroy(s);
}

#define N_PUTTERS  3
#define PER_PUTTER 300

typedef struct {
    ss_store_t *s;
    int first;
    int failed;
} putter_t;

static void *putter(void *arg)
{
    putter_t *p = arg;
    for (int i = 0; i < PER_PUTTER; i++)
        if (put(p->s, p->first + i * N_PUTTERS) < 0)
            p->failed = 1;
    return NULL;
}

/* The main thread reads and releases pieces while workers put more. */
static void test_read_while_putting(void)
{
    ss_store_t *s = ss_store_init("/tmp", 50000);
    CU_ASSERT_FATAL(s != NULL);
    pthread_t t[N_PUTTERS];
    putter_t p[N_PUTTERS];
    for (int i = 0; i < N_PUTTERS; i++) {
        p[i] = (putter_t){s, i, 0};
        CU_ASSERT_FATAL(pthread_create(&t[i], NULL, putter, &p[i]) == 0);
    }
    size_t done = 0;
    while (done < N_PUTTERS * PER_PUTTER) {
        size_t n = ss_store_count(s);
        for (; done < n; done++) {
            int idx;
            uint64_t len;
            ss_store_piece(s, done, &idx, &len);
            check_piece(s, done, idx);
            ss_store_release(s, done);
        }
    }
    for (int i = 0; i < N_PUTTERS; i++) {
        pthread_join(t[i], NULL);
        SS_EQ(p[i].failed, 0);
    }
    ss_store_destroy(s);
}

static int collect_spill(void *ctx, const char *buf, size_t len)
{
    collect_t *c = ctx;
    memcpy(c->got + c->len, buf, len);
    c->len += len;
    c->calls++;
    return 0;
}

/* 3 MB in uneven appends come back whole, in order, in more than one read. */
static void test_spill_roundtrip(void)
{
    enum { LEN = 3 << 20 };
    char *want = malloc(LEN), *got = malloc(LEN);
    CU_ASSERT_FATAL(want && got);
    fill(want, 5, LEN);
    ss_spill_t sp = SS_SPILL_NONE;
    for (size_t off = 0, step = 1; off < LEN; off += step, step = step * 3 + 1) {
        size_t n = off + step > LEN ? LEN - off : step;
        SS_EQ_FATAL(ss_spill_append(&sp, ".", 0, want + off, n), 0);
    }
    SS_EQ(sp.len, (uint64_t)LEN);
    collect_t c = {.got = got};
    SS_EQ(ss_spill_copy(&sp, 0, collect_spill, &c), 0);
    SS_EQ(c.len, (size_t)LEN);
    CU_ASSERT(c.calls > 1);
    CU_ASSERT(memcmp(want, got, LEN) == 0);
    ss_spill_close(&sp);
    SS_EQ(sp.fd, -1);
    free(want);
    free(got);
}

/* A piece put from a spill file is the file's bytes then the buffer's. */
static void test_put_spilled(void)
{
    ss_store_t *s = ss_store_init(".", 1 << 20);
    CU_ASSERT_FATAL(s != NULL);
    char head[5000], tail[3000];
    fill(head, 1, sizeof(head));
    fill(tail, 2, sizeof(tail));
    ss_spill_t sp = SS_SPILL_NONE;
    SS_EQ_FATAL(ss_spill_append(&sp, ".", 7, head, sizeof(head)), 0);
    SS_EQ_FATAL(ss_store_put(s, 6, tail, 10), 0); /* an ordinary piece before it */
    SS_EQ_FATAL(ss_store_put_spilled(s, 7, &sp, tail, sizeof(tail)), 0);
    ss_spill_close(&sp);
    int idx;
    uint64_t len;
    ss_store_piece(s, 1, &idx, &len);
    SS_EQ(idx, 7);
    SS_EQ(len, (uint64_t)(sizeof(head) + sizeof(tail)));
    char got[sizeof(head) + sizeof(tail)];
    collect_t c = {.got = got};
    SS_EQ(ss_store_each_chunk(s, 1, collect, &c), 0);
    SS_EQ(c.len, sizeof(got));
    CU_ASSERT(memcmp(got, head, sizeof(head)) == 0);
    CU_ASSERT(memcmp(got + sizeof(head), tail, sizeof(tail)) == 0);
    ss_store_destroy(s);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("store", NULL, NULL);
    if (!s || !CU_add_test(s, "memory_then_spill", test_memory_then_spill) ||
        !CU_add_test(s, "release_makes_room", test_release_makes_room) ||
        !CU_add_test(s, "read_while_putting", test_read_while_putting) ||
        !CU_add_test(s, "spill_roundtrip", test_spill_roundtrip) ||
        !CU_add_test(s, "put_spilled", test_put_spilled))
        return 1;
    return ss_test_run();
}

/*
 * test_error.c -- the run's one error line (base/error.c): one line, the first error wins,
 * a message over 2 kB loses the middles of its long paths and never its advice, and a
 * message naming its rank under the "rank N: " prefix names it once.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../base/ss_base.h"
#include "ss_testutil.h"

static void test_short_kept(void)
{
    ss_error_reset();
    ss_error_set_prefix("");
    ss_error("%s: broken\tthere\n", "in.bam");
    SS_STR_EQ(ss_error_message(), "seqshard: in.bam: broken there");
    ss_error("a second error");
    SS_STR_EQ(ss_error_message(), "seqshard: in.bam: broken there");
    ss_error_reset();
}

static void test_rank_once(void)
{
    ss_error_reset();
    ss_error_set_prefix("rank 1: ");
    ss_error("rank %d: %s: writing it failed", 1, "x.bed.gz");
    SS_STR_EQ(ss_error_message(), "seqshard: rank 1: x.bed.gz: writing it failed");
    ss_error_reset();
    ss_error("%s: writing it failed", "x.bed.gz");
    SS_STR_EQ(ss_error_message(), "seqshard: rank 1: x.bed.gz: writing it failed");
    ss_error_reset();
    ss_error_set_prefix("");
}

/* The lines stderr gets while act runs (stderr sent to a temporary file meanwhile). */
static int stderr_lines(void (*act)(void))
{
    FILE *tmp = tmpfile();
    int saved = dup(STDERR_FILENO);
    if (!tmp || saved < 0)
        return -1;
    dup2(fileno(tmp), STDERR_FILENO);
    act();
    dup2(saved, STDERR_FILENO);
    close(saved);
    rewind(tmp);
    int n = 0, c;
    while ((c = fgetc(tmp)) != EOF)
        n += c == '\n';
    fclose(tmp);
    return n;
}

static void deferred_flushed_twice(void)
{
    ss_error_defer(1);
    ss_error("%s: writing it failed", "out.txt");
    ss_error("a second error");
    ss_error_flush();
    ss_error_flush();
    ss_error_defer(0);
    ss_error_flush();
}

static void deferred_told_elsewhere(void)
{
    ss_error_defer(1);
    ss_error("%s: writing it failed", "out.txt");
    ss_error_quiet(); /* another rank printed the job's line */
    ss_error_defer(0);
    ss_error_flush();
}

static void printed_then_flushed(void)
{
    ss_error("%s: writing it failed", "out.txt");
    ss_error_flush();
}

/* A multi-rank run's message waits, is printed once, or not at all when told elsewhere. */
static void test_deferred_once(void)
{
    ss_error_reset();
    ss_error_set_prefix("");
    SS_EQ(stderr_lines(deferred_flushed_twice), 1);
    SS_STR_EQ(ss_error_message(), "seqshard: out.txt: writing it failed");
    ss_error_reset();
    SS_EQ(stderr_lines(deferred_told_elsewhere), 0);
    SS_EQ(ss_error_raised(), 1);
    ss_error_reset();
    SS_EQ(stderr_lines(printed_then_flushed), 1);
    ss_error_reset();
}

/* A 2.4 kB path named three times: each keeps its start and its file name, the advice stays. */
static void test_long_paths_cut(void)
{
    static char path[2500];
    memset(path, 'd', sizeof(path) - 1);
    path[0] = '/';
    memcpy(path + sizeof(path) - 7, "/g.bam", 7);
    ss_error_reset();
    ss_error_set_prefix("rank 0: ");
    ss_error("%s: damaged; if 'samtools view %s' passes, re-index it with 'samtools index %s'",
             path, path, path);
    const char *m = ss_error_message();
    SS_LE(strlen(m), 2047);
    SS_CMP(strlen(m), >, 1500); /* cut no more than needed */
    SS_CMP(strncmp(m, "seqshard: rank 0: /ddd", 22), ==, 0);
    SS_CONTAINS(m, "ddd...ddd");
    SS_CONTAINS(m, "d/g.bam: damaged; if 'samtools view /ddd");
    SS_CONTAINS(m, "' passes, re-index it with 'samtools index /ddd");
    const char *end = "/g.bam'";
    SS_STR_EQ(m + strlen(m) - strlen(end), end);
    ss_error_reset();
    ss_error_set_prefix("");
}

/* Nothing long enough to cut: the end goes, as before, and the line stays one line. */
static void test_no_word_to_cut(void)
{
    static char text[3000];
    for (size_t i = 0; i + 1 < sizeof(text); i++)
        text[i] = i % 10 == 9 ? ' ' : 'w';
    ss_error_reset();
    ss_error("%s", text);
    SS_LE(strlen(ss_error_message()), 2047);
    SS_CMP(strlen(ss_error_message()), >, 2000);
    ss_error_reset();
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("error", NULL, NULL);
    if (!s || !CU_add_test(s, "short_kept", test_short_kept) ||
        !CU_add_test(s, "rank_once", test_rank_once) ||
        !CU_add_test(s, "deferred_once", test_deferred_once) ||
        !CU_add_test(s, "long_paths_cut", test_long_paths_cut) ||
        !CU_add_test(s, "no_word_to_cut", test_no_word_to_cut))
        return 1;
    return ss_test_run();
}

/*
 * diff_seq.c -- adversarial sequences for the HMM routines (diff_seq.h).
 */
#include "diff_seq.h"
#include "base/ss_exact_fp.h"

int diff_seq_length(diff_rng_t *r, int max)
{
    int k = (int)diff_rng_below(r, 20);
    int n = k < 3    ? diff_rng_range(r, 1, 12)
            : k < 18 ? diff_rng_range(r, 1, 300)
                     : diff_rng_range(r, 1, max);
    return n < max ? n : max;
}

void diff_seq_ref(diff_rng_t *r, uint8_t *ref, int n)
{
    int unit = diff_rng_range(r, 1, 6), kind = (int)diff_rng_below(r, 4);
    uint8_t motif[6];
    for (int i = 0; i < 6; i++)
        motif[i] = (uint8_t)diff_rng_below(r, 4);
    /* a repeat tract somewhere, the rest random; or the whole a repeat */
    int beg = kind == 0 ? 0 : diff_rng_range(r, 0, n),
        len = kind == 0 ? n : diff_rng_range(r, 0, n);
    for (int i = 0; i < n; i++) {
        int in_tract = i >= beg && i < beg + len;
        ref[i] = in_tract && kind != 3 ? motif[(i - beg) % unit] : (uint8_t)diff_rng_below(r, 4);
        if (diff_rng_one_in(r, 60))
            ref[i] = (uint8_t)diff_rng_range(r, 4, 15); /* N and other codes above 3 */
    }
}

/* Where to put the indel: inside a run of the same base or unit when there is one. */
static int indel_at(diff_rng_t *r, const uint8_t *ref, int l_ref)
{
    if (diff_rng_one_in(r, 6))
        return diff_rng_one_in(r, 2) ? 0 : l_ref; /* at either read end */
    int at = diff_rng_range(r, 0, l_ref);
    for (int tries = 0; tries < 8 && at > 0 && at < l_ref; tries++) {
        if (ref[at] == ref[at - 1])
            break;
        at = diff_rng_range(r, 0, l_ref);
    }
    return at;
}

int diff_seq_query(diff_rng_t *r, const uint8_t *ref, int l_ref, uint8_t *query, int cap,
                   int max_indel, int *indel)
{
    int len = diff_rng_range(r, 0, max_indel), del = diff_rng_one_in(r, 2);
    int at = indel_at(r, ref, l_ref), n = 0;
    if (del && len > l_ref - at)
        len = l_ref - at;
    for (int i = 0; i <= l_ref && n < cap; i++) {
        if (i == at) {
            if (del) {
                i += len;
            } else {
                for (int k = 0; k < len && n < cap; k++) /* repeat the base before, or random */
                    query[n++] = at > 0 && !diff_rng_one_in(r, 4) ? (ref[at - 1] & 3)
                                                                  : (uint8_t)diff_rng_below(r, 4);
            }
        }
        if (i < l_ref && n < cap)
            query[n++] = ref[i] > 3 ? (uint8_t)diff_rng_below(r, 5) : ref[i];
    }
    int err = (int)diff_rng_below(r, 4); /* error rate: none, 1%, 5%, 30% */
    static const uint32_t one_in[] = {0, 100, 20, 3};
    for (int i = 0; i < n && err; i++)
        if (diff_rng_one_in(r, one_in[err]))
            query[i] = (uint8_t)diff_rng_below(r, 5);
    if (n == 0 && cap > 0)
        query[n++] = (uint8_t)diff_rng_below(r, 5);
    *indel = del ? -len : len;
    return n;
}

void diff_seq_quals(diff_rng_t *r, uint8_t *qual, int n)
{
    int kind = (int)diff_rng_below(r, 5), one = diff_rng_range(r, 0, 93);
    for (int i = 0; i < n; i++) {
        switch (kind) {
        case 0:
            qual[i] = (uint8_t)one;
            break;
        case 1:
            qual[i] = (uint8_t)(diff_rng_one_in(r, 10) ? diff_rng_range(r, 2, 20)
                                                       : diff_rng_range(r, 30, 41));
            break;
        case 2:
            qual[i] = (uint8_t)diff_rng_range(r, 0, 93);
            break;
        case 3:
            qual[i] = (uint8_t)diff_rng_range(r, 7, 30);
            break; /* bcftools' capped range */
        default:
            qual[i] = (uint8_t)diff_rng_below(r, 256);
            break;
        }
    }
}

void diff_seq_print(FILE *f, const char *label, const uint8_t *s, int n, int as_quals)
{
    fprintf(f, "  %s (%d): ", label, n);
    for (int i = 0; i < n; i++) {
        if (as_quals)
            fprintf(f, "%s%d", i ? "," : "", s[i]);
        else if (s[i] <= 4)
            fputc("ACGTN"[s[i]], f);
        else
            fprintf(f, "[%d]", s[i]);
    }
    fputc('\n', f);
}

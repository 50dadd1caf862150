/*
 * depth_format.c -- depth rows. Almost every row is the next position of the
 * one before, so the position's digits are counted up in place; printing
 * them dominates the run time of a depth over a whole genome otherwise.
 */
#include <string.h>

#include "depth.h"

void dp_fmt_contig(dp_fmt_t *f, const char *name)
{
    size_t len = strlen(name);
    f->name = name;
    f->ctg_len = len + 1 < sizeof(f->ctg) ? len + 1 : 0;
    if (f->ctg_len) {
        memcpy(f->ctg, name, len);
        f->ctg[len] = '\t';
    }
    f->next = -1;
    f->num_len = 0;
}

/* num := the digits of p + 1. */
static void set_pos(dp_fmt_t *f, hts_pos_t p)
{
    unsigned long long v = (unsigned long long)p + 1;
    int n = 0;
    do {
        f->num[sizeof(f->num) - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    f->num_len = n;
    f->next = p;
}

/* The position after: add one to the digits. */
static void step_pos(dp_fmt_t *f)
{
    int i = (int)sizeof(f->num) - 1, stop = (int)sizeof(f->num) - f->num_len;
    while (i >= stop && f->num[i] == '9')
        f->num[i--] = '0';
    if (i >= stop)
        f->num[i]++;
    else
        f->num[stop - 1] = '1', f->num_len++;
    f->next++;
}

static char *put_u32(char *s, uint32_t v)
{
    char tmp[10];
    int n = 0;
    if (v < 10) {
        *s++ = (char)('0' + v);
        return s;
    }
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *s++ = tmp[--n];
    return s;
}

/* Room for the row, the contig and position written; the pointer to the counts. */
static char *row_start(dp_fmt_t *f, kstring_t *out, hts_pos_t p, int n)
{
    size_t name_len = f->ctg_len ? f->ctg_len : strlen(f->name) + 1;
    if (ks_resize(out, out->l + name_len + 24 + 11 * (size_t)n + 2) < 0)
        return NULL;
    if (p != f->next)
        set_pos(f, p);
    char *s = out->s + out->l;
    if (f->ctg_len) {
        memcpy(s, f->ctg, f->ctg_len);
    } else {
        memcpy(s, f->name, name_len - 1);
        s[name_len - 1] = '\t';
    }
    s += name_len;
    memcpy(s, f->num + sizeof(f->num) - f->num_len, (size_t)f->num_len);
    return s + f->num_len;
}

static void row_end(dp_fmt_t *f, kstring_t *out, char *s)
{
    *s++ = '\n';
    *s = '\0'; /* a kstring stays a string (row_start left room) */
    out->l = (size_t)(s - out->s);
    step_pos(f);
}

int dp_fmt_row(dp_fmt_t *f, kstring_t *out, hts_pos_t p, const int32_t *d, int n)
{
    char *s = row_start(f, out, p, n);
    if (!s)
        return -1;
    for (int i = 0; i < n; i++) {
        *s++ = '\t';
        s = put_u32(s, (uint32_t)d[i]); /* samtools prints counts unsigned */
    }
    row_end(f, out, s);
    return 0;
}

int dp_fmt_zero_row(dp_fmt_t *f, kstring_t *out, hts_pos_t p, int n)
{
    char *s = row_start(f, out, p, n);
    if (!s)
        return -1;
    for (int i = 0; i < n; i++)
        *s++ = '\t', *s++ = '0';
    row_end(f, out, s);
    return 0;
}

/*
 * Rows of [from, to) in one go: room for all of them first, then each row
 * copied out without a check (the common case: no -b, one run of positions).
 */
int dp_fmt_rows(dp_fmt_t *f, kstring_t *out, const dp_ring_t *r, hts_pos_t from, hts_pos_t to,
                int zeros)
{
    int n = r->n;
    if (from >= to)
        return 0;
    if (!f->ctg_len) { /* a name too long for the fast path */
        for (hts_pos_t p = from; p < to; p++) {
            int rc =
                zeros ? dp_fmt_zero_row(f, out, p, n) : dp_fmt_row(f, out, p, dp_ring_at(r, p), n);
            if (rc < 0)
                return -1;
        }
        return 0;
    }
    size_t row_max = f->ctg_len + 24 + 11 * (size_t)n + 1;
    if (ks_resize(out, out->l + (size_t)(to - from) * row_max + 1) < 0)
        return -1;
    if (from != f->next)
        set_pos(f, from);
    char *s = out->s + out->l;
    for (hts_pos_t p = from; p < to; p++) {
        memcpy(s, f->ctg, f->ctg_len);
        s += f->ctg_len;
        memcpy(s, f->num + sizeof(f->num) - f->num_len, (size_t)f->num_len);
        s += f->num_len;
        if (zeros) {
            for (int i = 0; i < n; i++)
                *s++ = '\t', *s++ = '0';
        } else {
            const int32_t *d = dp_ring_at(r, p);
            for (int i = 0; i < n; i++) {
                *s++ = '\t';
                s = put_u32(s, (uint32_t)d[i]);
            }
        }
        *s++ = '\n';
        step_pos(f);
    }
    *s = '\0'; /* the room for it was reserved above */
    out->l = (size_t)(s - out->s);
    return 0;
}

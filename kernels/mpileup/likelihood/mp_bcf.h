/*
 * mp_bcf.h -- BCF2 typed values, appended straight to a record's shared or
 * indiv block: the bytes htslib 1.16's bcf_update_info, bcf_update_format
 * and bcf1_sync produce for the same values, without their per-tag header
 * lookups, scratch buffers and copies (mp_site_to_bcf writes a record per
 * column, so those were a fifth of the run).
 *
 * The rules (BCF2 spec, section 6.3): a typed value starts with a byte of
 * count << 4 | type, the count then a typed integer of its own when it is 15
 * or more; integers take the smallest of int8/16/32 that holds every value
 * that is not missing or vector-end, those two written as the chosen type's
 * own codes. Multi-byte values are little-endian, whatever the host.
 *
 * The writers do not grow the block: the caller reserves MP_BCF_ROOM(n)
 * bytes for a value of n items first (mp_bcf_reserve), which keeps them to a
 * few instructions. Any thread, on its own kstring. Private to
 * kernels/mpileup/.
 */
#ifndef SS_MP_BCF_H
#define SS_MP_BCF_H

#include <htslib/kstring.h>
#include <htslib/vcf.h>
#include <stdint.h>
#include <string.h>

/* The most bytes a typed value of n items of up to 4 bytes takes (descriptor: up to 6). */
#define MP_BCF_ROOM(n) (6 + 4 * (size_t)(n))

/* Room for n more bytes in s. 0, or -1 when out of memory. */
static inline int mp_bcf_reserve(kstring_t *s, size_t n)
{
    return s->l + n <= s->m || ks_resize(s, s->l + n) == 0 ? 0 : -1;
}

/* x's low bytes at p, least significant first; returns the byte after them. */
static inline uint8_t *mp_bcf_le(uint8_t *p, uint32_t x, int bytes)
{
    p[0] = (uint8_t)x;
    if (bytes > 1)
        p[1] = (uint8_t)(x >> 8);
    if (bytes > 2) {
        p[2] = (uint8_t)(x >> 16);
        p[3] = (uint8_t)(x >> 24);
    }
    return p + bytes;
}

/* Where the next byte of s goes. */
static inline uint8_t *mp_bcf_end(kstring_t *s)
{
    return (uint8_t *)s->s + s->l;
}

/* The integer type's width (1, 2, 4) that holds every value but missing and vector-end. */
static inline int mp_bcf_int_width(const int32_t *a, int n)
{
    int32_t min = INT32_MAX, max = INT32_MIN;
    for (int i = 0; i < n; i++) {
        if (a[i] == bcf_int32_missing || a[i] == bcf_int32_vector_end)
            continue;
        if (max < a[i])
            max = a[i];
        if (min > a[i])
            min = a[i];
    }
    /* with no ordinary value, max < min: the smallest type */
    if (max <= BCF_MAX_BT_INT8 && min >= BCF_MIN_BT_INT8)
        return 1;
    return max <= BCF_MAX_BT_INT16 && min >= BCF_MIN_BT_INT16 ? 2 : 4;
}

/* One integer at a width, missing and vector-end as that width's own codes. */
static inline uint8_t *mp_bcf_int_at(uint8_t *p, int32_t x, int width)
{
    if (width == 1)
        x = x == bcf_int32_missing      ? bcf_int8_missing
            : x == bcf_int32_vector_end ? bcf_int8_vector_end
                                        : x;
    else if (width == 2)
        x = x == bcf_int32_missing      ? bcf_int16_missing
            : x == bcf_int32_vector_end ? bcf_int16_vector_end
                                        : x;
    return mp_bcf_le(p, (uint32_t)x, width);
}

static inline int mp_bcf_int_type(int width)
{
    return width == 1 ? BCF_BT_INT8 : width == 2 ? BCF_BT_INT16 : BCF_BT_INT32;
}

/* The descriptor of a value of count items of BCF_BT_* type. */
static inline void mp_bcf_size(kstring_t *s, int count, int type)
{
    uint8_t *p = mp_bcf_end(s);
    if (count < 15) {
        *p++ = (uint8_t)(count << 4 | type);
    } else {
        *p++ = (uint8_t)(15 << 4 | type); /* the count follows as a typed integer */
        int width = mp_bcf_int_width(&count, 1);
        *p++ = (uint8_t)(1 << 4 | mp_bcf_int_type(width));
        p = mp_bcf_le(p, (uint32_t)count, width);
    }
    s->l = (size_t)((char *)p - s->s);
}

/*
 * n integers as bcf_enc_vint(s, n, a, per): one vector whose descriptor
 * counts per items (per <= 0: n) but which holds all n (per sample, for
 * FORMAT); n == 1 counts 1; n <= 0 writes an empty value.
 */
static inline void mp_bcf_ints(kstring_t *s, const int32_t *a, int n, int per)
{
    if (n <= 0) {
        mp_bcf_size(s, 0, BCF_BT_NULL);
        return;
    }
    int width = mp_bcf_int_width(a, n);
    mp_bcf_size(s, n == 1 ? 1 : per > 0 ? per : n, mp_bcf_int_type(width));
    uint8_t *p = mp_bcf_end(s);
    for (int i = 0; i < n; i++)
        p = mp_bcf_int_at(p, a[i], width);
    s->l = (size_t)((char *)p - s->s);
}

/* n floats under a descriptor counting per (per <= 0: n), as htslib writes REAL values. */
static inline void mp_bcf_floats(kstring_t *s, const float *a, int n, int per)
{
    mp_bcf_size(s, per > 0 ? per : n, BCF_BT_FLOAT);
    uint8_t *p = mp_bcf_end(s);
    for (int i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &a[i], 4);
        p = mp_bcf_le(p, bits, 4);
    }
    s->l = (size_t)((char *)p - s->s);
}

/* A string of n bytes (not NUL-terminated). */
static inline void mp_bcf_chars(kstring_t *s, const char *a, int n)
{
    mp_bcf_size(s, n, BCF_BT_CHAR);
    memcpy(s->s + s->l, a, (size_t)n);
    s->l += (size_t)n;
}

#endif

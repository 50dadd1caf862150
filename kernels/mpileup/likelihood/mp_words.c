/*
 * mp_words.c -- a read's SNP words (mp_words.h), a base at a time or 16 at a
 * time with SSSE3. Both give mp_snp_word's words exactly; test_mp_words
 * compares them on random reads and settings.
 */
#include "mp_words.h"
#include "base/ss_exact_fp.h"

#if defined(__x86_64__) || defined(__i386__)
#define MP_WORDS_X86 1
#include <tmmintrin.h>
#else
#define MP_WORDS_X86 0
#endif

#define DIST_MASK ((uint32_t)0x1f << 11)

void mp_snp_words_scalar(const mp_word_src_t *s, uint32_t *word)
{
    for (int i = 0; i < s->len; i++)
        word[i] = mp_snp_word(s, i);
}

#if MP_WORDS_X86
/*
 * Bytes to words, 16 bases at a time. In bytes: the quality lowered to its
 * neighbours plus delta (a saturating add: a sum past 255 lowers nothing, as
 * no quality exceeds 255), the --min-BQ test, the caps; the base from its
 * 4-bit code through a 16-entry table. Then the bytes are spread into 16-bit
 * halves (key and distance; base quality and mapping quality) and into words.
 * The distance is written as MP_DIST_CAP: the caller mends the bases near
 * either end. Covers bases [2, end) and returns end: the first base is
 * even (two to a byte of seq) and has a left neighbour, the last has a right one.
 */
__attribute__((target("ssse3"))) static int words_ssse3(const mp_word_src_t *s, uint32_t *word)
{
    uint8_t table[16];
    for (int k = 0; k < 16; k++)
        table[k] = (uint8_t)(k ? seq_nt16_int[k] : MP_WORD_EQ);
    const __m128i base_of = _mm_loadu_si128((const __m128i *)table);
    const __m128i delta = _mm_set1_epi8((char)(s->delta > 255 ? 255 : s->delta));
    const __m128i min_bq = _mm_set1_epi8((char)(s->min_bq < 0 ? 0 : s->min_bq));
    const __m128i max_bq = _mm_set1_epi8((char)(s->max_bq > 255 ? 255 : s->max_bq));
    /* mp_snp_word's caps on the key's quality: 99, mapQ and 63 come to one */
    const __m128i cap = _mm_set1_epi8((char)(s->mapQ < 63 ? s->mapQ : 63));
    const __m128i floor4 = _mm_set1_epi8(4), nibble = _mm_set1_epi8(0x0f);
    const __m128i mapq = _mm_set1_epi8((char)s->mapQ), zero = _mm_setzero_si128();
    const __m128i fixed = _mm_set1_epi16((short)(s->rev << 4 | MP_DIST_CAP << 11));
    int i = 2;
    for (; i + 16 < s->len; i += 16) {
        const uint8_t *qp = s->qual + i;
        __m128i q = _mm_loadu_si128((const __m128i *)qp);
        __m128i left = _mm_adds_epu8(_mm_loadu_si128((const __m128i *)(qp - 1)), delta);
        __m128i right = _mm_adds_epu8(_mm_loadu_si128((const __m128i *)(qp + 1)), delta);
        q = _mm_min_epu8(q, _mm_min_epu8(left, right));
        __m128i kept = _mm_cmpeq_epi8(_mm_max_epu8(q, min_bq), q);
        __m128i bq = _mm_min_epu8(q, max_bq);
        __m128i cq = _mm_max_epu8(_mm_min_epu8(bq, cap), floor4);
        __m128i packed = _mm_loadl_epi64((const __m128i *)(s->seq + i / 2));
        __m128i codes = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(packed, 4), nibble),
                                          _mm_and_si128(packed, nibble));
        __m128i base = _mm_shuffle_epi8(base_of, codes);
        for (int half = 0; half < 2; half++) {
            __m128i c = half ? _mm_unpackhi_epi8(cq, zero) : _mm_unpacklo_epi8(cq, zero);
            __m128i b = half ? _mm_unpackhi_epi8(base, zero) : _mm_unpacklo_epi8(base, zero);
            __m128i key = _mm_or_si128(_mm_or_si128(_mm_slli_epi16(c, 5), b), fixed);
            __m128i top = half ? _mm_unpackhi_epi8(bq, mapq) : _mm_unpacklo_epi8(bq, mapq);
            __m128i m = half ? _mm_unpackhi_epi8(kept, kept) : _mm_unpacklo_epi8(kept, kept);
            __m128i *out = (__m128i *)(word + i + 8 * half);
            _mm_storeu_si128(out,
                             _mm_and_si128(_mm_unpacklo_epi16(key, top), _mm_unpacklo_epi16(m, m)));
            _mm_storeu_si128(out + 1,
                             _mm_and_si128(_mm_unpackhi_epi16(key, top), _mm_unpackhi_epi16(m, m)));
        }
    }
    return i;
}

static int have_ssse3(void)
{
    return __builtin_cpu_supports("ssse3") != 0;
}
#endif

/* Words [from, to), written with MP_DIST_CAP, given their true distance to the read's end. */
static void mend_distance(const mp_word_src_t *s, uint32_t *word, int from, int to)
{
    for (int i = from; i < to; i++) {
        int dist = s->len - 1 - i < i ? s->len - 1 - i : i;
        if (dist < MP_DIST_CAP && word[i])
            word[i] = (word[i] & ~DIST_MASK) | (uint32_t)dist << 11;
    }
}

int mp_snp_words_simd(const mp_word_src_t *s, uint32_t *word)
{
#if MP_WORDS_X86
    /* the byte arithmetic holds for these; any other setting takes a base at a time */
    if (!have_ssse3() || s->delta < 0 || s->min_bq > 255 || s->max_bq < 0 || s->mapQ < 0 ||
        s->mapQ > 255 || (unsigned)s->rev > 1)
        return -1;
    int end = words_ssse3(s, word);
    if (end == 2) {
        mp_snp_words_scalar(s, word);
        return 0;
    }
    for (int i = 0; i < 2; i++)
        word[i] = mp_snp_word(s, i);
    for (int i = end; i < s->len; i++)
        word[i] = mp_snp_word(s, i);
    mend_distance(s, word, 2, end < MP_DIST_CAP ? end : MP_DIST_CAP);
    int tail = s->len - MP_DIST_CAP;
    mend_distance(s, word, tail > 2 ? tail : 2, end);
    return 0;
#else
    (void)s;
    (void)word;
    return -1;
#endif
}

void mp_snp_words(const mp_word_src_t *s, uint32_t *word)
{
    if (mp_snp_words_simd(s, word) < 0)
        mp_snp_words_scalar(s, word);
}

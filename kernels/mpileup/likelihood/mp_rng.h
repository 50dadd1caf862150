/*
 * mp_rng.h -- the 48-bit linear congruential stream of POSIX drand48, which
 * bcftools mpileup draws from (through htslib's hts_drand48) to downsample a
 * sample's bases past 255 at a site. Owning it per worker, and jumping it
 * ahead by a count of draws, lets a shard draw exactly the numbers one
 * process would have drawn there. Private to kernels/mpileup/.
 */
#ifndef SS_MP_RNG_H
#define SS_MP_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t x;     /* the 48-bit state */
    uint64_t draws; /* numbers drawn since seeding (or the last jump) */
} mp_rng_t;

/* The state srand48(seed) sets: the seed's low 32 bits above 0x330E. */
void mp_rng_seed(mp_rng_t *r, long seed);
/* The next number in [0, 1), as drand48 returns it (the state over 2^48). */
double mp_rng_next(mp_rng_t *r);
/* Skip n draws in O(log n) steps. */
void mp_rng_jump(mp_rng_t *r, uint64_t n);
/* ks_shuffle's order: for i = n down to 2, swap a[i-1] with a[(int)(next * i)]. */
void mp_rng_shuffle_u16(mp_rng_t *r, size_t n, uint16_t *a);
/* What shuffling n items draws (n - 1 numbers), without the shuffle: state and count. */
void mp_rng_skip_shuffle(mp_rng_t *r, size_t n);

#endif

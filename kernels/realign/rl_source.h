/*
 * rl_source.h -- what other kernels may use of realign: its options that a
 * chained kernel accepts too, and a record source that realigns an input's
 * records on the fly (pileup --realign). Everything else in kernels/realign/
 * is private (realign.h).
 */
#ifndef SS_KERNEL_RL_SOURCE_H
#define SS_KERNEL_RL_SOURCE_H

#include "../../framework/ss_framework.h"

typedef struct rl_opts_s rl_opts_t;

/* Realign's own options, shared with kernels that realign their input. */
enum { RL_OPT_KNOWN = 0x2001, RL_OPT_MAX_MOVE, RL_OPT_MAX_ISIZE, RL_OPT_MAX_WINDOW };
/* Their description, for a chained kernel's option groups (ss_cmdline.h). */
extern const ss_opt_t rl_step_opts[];

/* Realign's defaults; NULL when out of memory. rl_opts_free frees (accepts NULL). */
rl_opts_t *rl_opts_new(void);
void rl_opts_free(void *kopts);
/* One shared option (c one of RL_OPT_*): 0, or -1 after a usage message. */
int rl_opt_shared(rl_opts_t *o, int c, const char *arg);
/* Main thread, before workers: the reference and --known files fit the inputs. 0 or -1. */
int rl_check_inputs(const rl_opts_t *o, const ss_job_t *job);

/*
 * A source that realigns: a query on [beg, end) reads the inner source over
 * that range widened by realign's halo, decides every window there as
 * `seqshard realign` would, and returns the records whose final alignment
 * overlaps [beg, end), in the order `samtools sort` gives them: so reading it
 * is reading the realigned BAM through its index. Unplaced reads pass
 * through. inner, h and fasta are borrowed. NULL after ss_error(). One thread.
 */
typedef struct rl_source_s rl_source_t;
rl_source_t *rl_source_init(const rl_opts_t *o, ss_source_t *inner, const sam_hdr_t *h,
                            const char *fasta);
ss_source_t *rl_source_get(rl_source_t *s);
/*
 * Count what the next query decides for windows starting in [beg, end) (a
 * shard's own range) into the counters (windows, skipped, cleaned, reads
 * realigned, ends unclipped) read by rl_source_counts. Later queries count
 * nothing until armed again.
 */
void rl_source_count_next(rl_source_t *s, hts_pos_t beg, hts_pos_t end);
void rl_source_counts(const rl_source_t *s, uint64_t out[5]);
void rl_source_destroy(rl_source_t *s);

#endif

/*
 * steps.h -- the record steps' registry, options and chains
 * (framework/step/): which steps the program has, the options each adds to a
 * command, and the chain of them a worker opens in front of each input.
 *
 * Private to framework/; kernels and io/ must not include it. Used by step/,
 * cli/ (registry, options, parsing), plan/job.c, run/ (chains, counters) and
 * report/ (the steps' names).
 */
#ifndef SS_STEPS_H
#define SS_STEPS_H

#include <stdint.h>

#include "../driver.h"

/* The key of step i's --NAME option: SS_OPT_STEP_FLAG + i. */
#define SS_OPT_STEP_FLAG 0x1800

/* The program's steps (ss_main), kept in chain order. 0, or -1 after a message (too many). */
int ss_steps_register(const ss_step_t *const *steps, int n);
int ss_steps_n(void);
const ss_step_t *ss_steps_get(int i); /* by registry index, chain order; NULL out of range */
int ss_steps_find(const char *name);  /* registry index of the step called name, or -1 */
/* Each step's option list (--NAME, then its own), made when the registry is set. */
void ss_steps_build_opts(void);
/* co's options of step i, made with its defaults on first use; NULL after a message. */
void *ss_steps_opts(ss_common_opts_t *co, int i);
void ss_steps_opts_free(ss_common_opts_t *co);
/*
 * Check the job's steps against it and keep the chain's reach (the sums of
 * theirs) in it (ss_job_set_step_reach). 0, or -1 after ss_error(). Main
 * thread, before the kernel's prepare.
 */
int ss_job_steps_prepare(ss_job_t *job);
/*
 * The counters a run reports: the kernel's names, then its steps', into
 * out[0..max) NULL-terminated. Returns how many.
 */
int ss_job_counter_names(const ss_job_t *job, const char *const *kernel_names, const char **out,
                         int max);
/*
 * A worker's chains: each input's steps, opened in front of its file in rd
 * (ss_reader_set_front, reach: the chain's halo); their counters go to
 * counts[first_counter...]. NULL with no steps, or after ss_error() (then
 * ss_error_raised()). Worker thread; ss_chain_close accepts NULL.
 */
typedef struct ss_chain_s ss_chain_t;
ss_chain_t *ss_chain_open(const ss_job_t *job, ss_reader_t *rd, hts_pos_t reach, int first_counter);
void ss_chain_close(ss_chain_t *c);
/* Shard sh starts: each step counts what it decides for sh's own range from now on. */
void ss_chain_shard(ss_chain_t *c, const ss_shard_t *sh);
/* Add the shard's step counters to counts[0..n_counts). */
void ss_chain_counts(const ss_chain_t *c, uint64_t *counts, int n_counts);
/*
 * The command as parsed and documented: cmd with the steps' option groups
 * (before its framework group) when it takes steps, else cmd. tmp holds the
 * copy. Main thread.
 */
typedef struct {
    ss_cmd_t cmd;
    ss_opt_group_t groups[32];
} ss_cmd_steps_t;
const ss_cmd_t *ss_cmd_with_steps(const ss_cmd_t *cmd, ss_cmd_steps_t *tmp);
/* Step i's option o (one of ss_cmd_with_steps' step groups), or -1: not a step's. */
int ss_steps_owner(const ss_opt_t *o);
/* A step's option or --NAME: 0, or -1 after a message. */
int ss_steps_apply(ss_common_opts_t *co, int step, const ss_opt_t *o, const char *arg,
                   const char *cmd);
/* After parsing: a command that is a step turns it on; options of a step left off are refused. */
int ss_steps_begin(const ss_cmd_t *cmd, ss_common_opts_t *co);
int ss_steps_end(const ss_cmd_t *cmd, ss_common_opts_t *co);

#endif

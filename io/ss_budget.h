/*
 * ss_budget.h -- the process-wide budget of file descriptors that readers
 * may hold open across shards (budget.c), and the message for running out
 * of them. Set by the framework's job before the workers start; taken and
 * given back by readers (reader.c) and the CRAM encoder's index
 * (cram_enc.c); the "too many open files" test used by every io/ file that
 * opens one. The budget is lock-protected: any thread.
 */
#ifndef SS_BUDGET_H
#define SS_BUDGET_H

/*
 * Descriptors outside the budget (budget.c has the arithmetic): per worker,
 * an input opened per use, its index while it loads, a CRAM's reference
 * FASTA and the kernel's own two; per process, what opens after the budget
 * is set (the output, a spill file).
 */
#define SS_IO_FDS_PER_WORKER 5
#define SS_IO_FDS_LATER      2

/*
 * Descriptors a run with n_workers needs at least: those open now, the
 * later ones and every worker's; with shared_ref (the CRAM handles share the
 * job's reference, ss_io_inputs_t.cram_refs) its one FASTA handle replaces
 * each worker's. Any thread; counts /proc/self/fd.
 */
int ss_io_budget_need(int n_workers, int shared_ref);
/*
 * Set the budget for descriptors held open across shards: what the soft
 * RLIMIT_NOFILE leaves after ss_io_budget_need(), lowered by
 * SEQSHARD_MAX_OPEN_FILES. Main thread, before workers start. Returns the
 * budget, or -1 after ss_error() when the limit is below the need (the
 * message counts n_inputs and says what limit would do).
 */
int ss_io_budget_init(int n_inputs, int n_workers, int shared_ref);
/* Try to reserve n held descriptors; returns 1 if granted, 0 if not (or no budget set). */
int ss_io_budget_take(int n);
void ss_io_budget_give(int n);
/* How many descriptors are held now (for tests and --report). */
int ss_io_budget_used(void);

/* Whether errno value err means out of descriptors (EMFILE, ENFILE). */
int ss_io_fds_exhausted(int err);
/* ss_error() for path: "too many open files", with the limit and what to do. */
void ss_io_error_fds(const char *path, int err);

#endif

/*
 * ss_base.h -- what every module of seqshard shares and that depends on no
 * other module: the run's one error and warnings (error.c), and standard
 * error silenced for a while (quiet.c). io/, alloc/, framework/ and kernels/
 * include it; it includes nothing of theirs.
 *
 * Threading: every function here may be called from any thread, except the
 * setters marked "main thread".
 */
#ifndef SS_BASE_H
#define SS_BASE_H

/*
 * Record the first error of the run (thread-safe; later ones are dropped)
 * and print it as one line "seqshard: <message>" on stderr. Never exits.
 */
void ss_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Nonzero once any thread called ss_error(); workers poll it to stop early. */
int ss_error_raised(void);
void ss_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The first error as printed ("seqshard: ..."), without the newline; "" if none. */
const char *ss_error_message(void);
/* Forget the recorded error (tests, and a new run in the same process). Main thread. */
void ss_error_reset(void);
/*
 * Text put before every error message after "seqshard: " ("rank 3: " when
 * several ranks share one log). Main thread, before workers start.
 */
void ss_error_set_prefix(const char *prefix);
/*
 * Multi-rank runs: while deferred, ss_error() records the first error without
 * printing it; ss_error_flush() prints it, once (a second flush, or a flush
 * after ss_error_quiet(), prints nothing). ss_error_quiet(): another rank has
 * reported the failure, so this one's stays unprinted. Main thread.
 */
void ss_error_defer(int on);
void ss_error_flush(void);
void ss_error_quiet(void);

/*
 * Send standard error (the descriptor: htslib's lines and ss_error()'s too)
 * to /dev/null until ss_quiet_end(saved). Returns the saved descriptor to
 * hand to ss_quiet_end, or -1 when it could not be saved (then nothing
 * changed, and ss_quiet_end(-1) does nothing). Main thread, with no worker
 * running: the whole process's stderr changes.
 */
int ss_quiet_begin(void);
void ss_quiet_end(int saved);

#endif

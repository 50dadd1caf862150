/*
 * comm.h -- every MPI call seqshard makes lives behind this header, in
 * comm.c (contract 5: MPI stays in one place).
 *
 * Built without MPI, or started without mpirun/srun, the program is one rank
 * and every function here is a cheap local stand-in.
 *
 * Threading: MPI is initialised with MPI_THREAD_FUNNELED; only the thread
 * that called ss_comm_init (the main thread) may call the other functions.
 * Worker threads never call MPI.
 *
 * Private to framework/ (any of its folders); kernels and io/ must not include it.
 */
#ifndef SS_COMM_H
#define SS_COMM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Initialise MPI if this process was launched by an MPI launcher (mpirun,
 * srun --mpi=pmix) and the build has MPI. Returns 0, or -1 after a message
 * (the MPI library cannot give the thread level we need), or -2 after a message
 * in a build without MPI that a launcher started as one of several processes.
 */
int ss_comm_init(int *argc, char ***argv);
/* Finalise MPI if it was initialised. */
void ss_comm_finalize(void);
/* Abort every rank (after a message was printed); never returns. */
void ss_comm_abort(int code) __attribute__((noreturn));

int ss_comm_rank(void);
int ss_comm_size(void);
/* 1 when running as more than one rank. */
static inline int ss_comm_parallel(void)
{
    return ss_comm_size() > 1;
}

/*
 * Rank 0 (of one or several), launched by mpirun on this node: point standard output
 * at the launcher's own (the same open file, or /dev/null) instead of the
 * pipe the launcher forwards, which is several times slower (launcher.c).
 * SEQSHARD_STDOUT_DIRECT=0 keeps the pipe. 1 when it did, 0 when it left
 * standard output alone, -1 after ss_error() when the launcher's own
 * standard output is closed or read-only (the launcher would drop the
 * output). Before anything is written to standard output; main thread. No
 * MPI call.
 */
int ss_comm_stdout_direct(void);

/* ---- dynamic shard hand-out: a counter, a stop flag and shard sizes on rank 0 ---- */

/*
 * Collective: create the shared counter for shards 0..n-1, and n size slots
 * all SS_COMM_SIZE_UNKNOWN. Returns 0 or -1 after ss_error().
 */
int ss_comm_counter_open(int n_shards);
/*
 * Take the next shard index (any rank, atomic across ranks): >= 0, or -1
 * when all are taken or some rank raised the stop flag.
 */
int ss_comm_counter_next(void);
/*
 * Tell every rank to stop taking shards (this rank failed; told: it has a message to
 * print). 1 when no rank with a message raised it before: this rank's message is the
 * job's one; 0 when another rank's is (and one process: always 1).
 */
int ss_comm_raise_stop(int told);
/* 1 if any rank raised the stop flag. */
int ss_comm_stop_raised(void);
/* How many shards were handed out (all ranks), for progress on rank 0. */
int ss_comm_counter_peek(void);
/*
 * Collective: free the counter. Call only once every rank is past its last
 * counter, stop-flag or size access (after an agreement), since it waits.
 */
void ss_comm_counter_close(void);

/*
 * The progress line's reads over every rank: each rank adds what its workers
 * read since it last told (ss_comm_reads_add), rank 0 reads the sum
 * (ss_comm_reads_total; 0 without MPI). 0 or -1 after ss_error(). Main threads.
 */
int ss_comm_reads_add(uint64_t n);
uint64_t ss_comm_reads_total(void);

/* A size slot no rank has published yet. */
#define SS_COMM_SIZE_UNKNOWN ((int64_t)-1)
/* Publish shard idx's output size to every rank. Returns 0 or -1 after ss_error(). */
int ss_comm_size_publish(int idx, uint64_t len);
/*
 * Read the size slots of shards from..from+n-1 into out (SS_COMM_SIZE_UNKNOWN
 * where not published yet) and, when owner is not NULL, the rank that
 * published each (-1 where unknown). Returns 0 or -1 after ss_error().
 */
int ss_comm_sizes_read(int from, int n, int64_t *out, int *owner);

/*
 * Standard output under mpirun: rank 0 writes every shard, so it asks the
 * rank holding shard idx for it (ss_comm_ask), which sees the request
 * (ss_comm_asked: 1 with *idx, 0 none yet, -1) and sends the piece in chunks
 * of at most an agreed size (ss_comm_piece_send), which rank 0 receives as
 * they come into cap bytes (ss_comm_piece_recv: *got the chunk's length). A
 * piece moves only when asked for; the waits give up when the stop flag is
 * raised, and no send starts after it. Each returns 0, or -1 (an MPI
 * failure, or the run stopped). Main threads of rank 0 and of the piece's
 * rank.
 */
int ss_comm_ask(int owner, int idx);
int ss_comm_asked(int *idx);
int ss_comm_piece_send(const void *buf, size_t len);
int ss_comm_piece_recv(int owner, void *buf, size_t cap, size_t *got);
/*
 * Rank 0 takes no more pieces (its run loop ended, whether the run failed
 * or not): from now on its every MPI wait receives and drops the chunks still
 * sent to it. A rank 0 that stopped taking a piece half way (its write
 * failed, or another rank failed) leaves that piece's sender inside a send
 * MPI cannot cancel, which would keep it from the next collective for ever.
 * Other ranks: nothing.
 */
void ss_comm_pieces_closed(void);

/* ---- collectives ----
 * Each waits by MPI_Test + nanosleep, never in a blocking MPI call, so a rank
 * that arrives early sleeps instead of spinning on a core others need. */

/* Collective: element-wise sum of v[0..n-1] into every rank. Returns 0 or -1. */
int ss_comm_sum_u64(uint64_t *v, size_t n);
/* Collective: element-wise min (max != 0: max) of v[0..n-1] into every rank. 0 or -1. */
int ss_comm_minmax_i64(int64_t *v, size_t n, int max);
/* Collective: max of one int over all ranks. */
int ss_comm_max_int(int v);
/* Collective: gather `size` bytes from every rank to rank 0 (out has size*nranks). */
int ss_comm_gather(const void *in, size_t size, void *out);
/*
 * Collective: gather len bytes from every rank (len may differ by rank) to
 * rank 0, in rank order. On rank 0 *out receives them all (malloc'ed, the
 * caller frees; NULL when the total is 0) and *out_len their total; on the
 * other ranks *out is NULL and *out_len 0. Returns 0, or -1 (*out NULL).
 */
int ss_comm_gatherv(const void *in, size_t len, void **out, size_t *out_len);
/* Collective: rank 0's string to all ranks (buf of cap bytes). */
int ss_comm_bcast_str(char *buf, size_t cap);
/*
 * Collective: rank 0's *len bytes at *buf to every rank. Rank 0 keeps its
 * buffer; the others receive a malloc'ed copy in *buf (the caller frees;
 * NULL when *len is 0) and its length in *len. Rank 0 may send *len
 * SIZE_MAX and no bytes: it has nothing to give (it failed), and so the
 * others learn. Returns 0, or -1 (an MPI failure, or out of memory: *buf
 * NULL). One rank: nothing moves.
 */
int ss_comm_bcast_bytes(void **buf, size_t *len);

/* ---- shared output file (MPI-IO) ---- */

typedef struct ss_comm_file_s ss_comm_file_t;

/*
 * Collective: open (create) path for writing by all ranks; messages name it
 * `shown` (the user's -o for a temporary file; NULL: path). NULL after
 * ss_error(). Open and close wait inside MPI: call them right after an
 * agreement, when every rank arrives at once.
 */
ss_comm_file_t *ss_comm_file_open(const char *path, const char *shown);
/*
 * Write len bytes at offset (independent); a short write is retried, one that
 * writes nothing fails. Returns 0 or -1 after ss_error().
 */
int ss_comm_file_write_at(ss_comm_file_t *f, uint64_t offset, const void *buf, size_t len);
/* Collective: close. Returns 0 or -1. */
int ss_comm_file_close(ss_comm_file_t *f);

/* The MPI library version line, or a "none" line. */
void ss_comm_version(char *buf, size_t size);

#endif

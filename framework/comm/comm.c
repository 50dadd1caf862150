/*
 * comm.c -- the one compilation unit that calls MPI (see comm.h).
 *
 * One RMA window on rank 0 holds 2 + n_shards 64-bit words: word 0 counts
 * shards handed out, word 1 is the stop flag (failing rank + 1), and word
 * 2 + i is shard i's output size once its rank published it (SIZE_UNKNOWN
 * before). Ranks advance the counter with MPI_Fetch_and_op under a shared
 * lock, so a rank that finishes early simply takes more; no rank is a master.
 * Sizes are written with MPI_Accumulate(MPI_REPLACE) and read with
 * MPI_Get_accumulate(MPI_NO_OP), which are atomic per element, so a reader
 * sees a size either unknown or whole.
 *
 * Collectives never wait inside a blocking MPI call: Open MPI's blocking
 * waits spin at 100% CPU, and a rank that finished early would take the core
 * another rank (or this rank's own workers) still computes on. Every
 * collective is started non-blocking and completed by MPI_Test + nanosleep
 * (wait_quietly).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "../../base/ss_base.h"
#include "comm.h"

/* One rank: the gather is a copy. */
static int local_gatherv(const void *in, size_t len, void **out, size_t *out_len)
{
    if (len == 0)
        return 0;
    if (!(*out = malloc(len)))
        return -1;
    memcpy(*out, in, len);
    *out_len = len;
    return 0;
}

#if SS_HAVE_MPI
#include <mpi.h>

#define WORD_COUNTER 0
#define WORD_STOP    1
#define WORD_READS   2 /* reads every rank has told rank 0 of, for the progress line */
#define WORD_SIZES   3 /* shard i's size is word WORD_SIZES + i */

static int inited, rank_, size_ = 1;
static MPI_Win win = MPI_WIN_NULL;
static int64_t *win_mem;
static int n_shards_, local_next, local_stop;

enum { TAG_ASK = 1, TAG_PIECE = 2 };

static int drain_pieces; /* rank 0 takes no more pieces (ss_comm_pieces_closed) */
static int drop_stray_pieces(void);

/*
 * Complete a non-blocking call without spinning: test, then sleep, backing
 * off from 50 us to 2 ms (short enough that a collective's few rounds stay
 * cheap, long enough that a rank waiting for minutes uses no CPU to speak of).
 * With stoppable, give up when some rank raised the stop flag (the peer may
 * never come): the request is cancelled and waited for here, as a send
 * Open MPI cannot cancel ends only when rank 0 drops it. Once rank 0 takes
 * no more pieces, its every wait drops the ones still sent to it, so their
 * senders reach the collective rank 0 waits in. st receives the status
 * (MPI_STATUS_IGNORE: none). 0, 1 stopped, -1 an MPI failure.
 */
static int wait_for(MPI_Request *req, MPI_Status *st, int stoppable)
{
    long ns = 50000;
    for (int round = 0;; round++) {
        int done = 0;
        if (MPI_Test(req, &done, st) != MPI_SUCCESS)
            return -1;
        if (done)
            return 0;
        if (stoppable && round % 16 == 15 && ss_comm_stop_raised()) {
            MPI_Cancel(req);
            return wait_for(req, MPI_STATUS_IGNORE, 0) < 0 ? -1 : 1;
        }
        if (drain_pieces && drop_stray_pieces() < 0)
            return -1;
        struct timespec t = {0, ns};
        nanosleep(&t, NULL);
        if (ns < 2000000)
            ns *= 2;
    }
}

static int wait_quietly(MPI_Request *req)
{
    return wait_for(req, MPI_STATUS_IGNORE, 0);
}

/*
 * A rank whose parent is Open MPI's launcher (mpirun, or orted on other
 * nodes) asks the kernel for a SIGTERM when that parent dies. Otherwise a
 * killed mpirun leaves its ranks running for about a second, until Open
 * MPI's progress thread notices the lost daemon and calls exit() itself,
 * past our handler, so the temporary output stays. With SIGTERM the handler
 * removes it and the rank is gone at once. Only for those parents: the
 * signal follows the thread that forked us, and they fork from their main
 * thread, which lives as long as the job.
 */
static void exit_with_launcher(void)
{
#ifdef __linux__
    static const char *const launchers[] = {"mpirun", "mpiexec", "orterun",
                                            "orted",  "prted",   "prterun"};
    pid_t parent = getppid();
    char path[64], comm[64] = "";
    snprintf(path, sizeof(path), "/proc/%d/comm", (int)parent);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return;
    if (!fgets(comm, sizeof(comm), fp))
        comm[0] = '\0';
    fclose(fp);
    comm[strcspn(comm, "\n")] = '\0';
    for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
        if (strcmp(comm, launchers[i]) == 0) {
            if (prctl(PR_SET_PDEATHSIG, SIGTERM) == 0 && getppid() != parent)
                raise(SIGTERM); /* it died before we asked */
            return;
        }
#endif
}

/* Launched by an MPI launcher? Singleton MPI_Init is slow and noisy, so skip it. */
static int under_launcher(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

int ss_comm_init(int *argc, char ***argv)
{
    if (!under_launcher())
        return 0;
    int provided = 0;
    /* Only the main thread calls MPI; workers never do. FUNNELED is all we need. */
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "seqshard: MPI_Init_thread failed; check the MPI launcher and "
                        "installation (mpirun --version)\n");
        return -1;
    }
    inited = 1;
    if (provided < MPI_THREAD_FUNNELED) {
        fprintf(stderr,
                "seqshard: the MPI library provides thread level %d, below "
                "MPI_THREAD_FUNNELED; use an MPI built with thread support\n",
                provided);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    exit_with_launcher();
    /* Errors come back as codes, so a failing rank can say why before stopping. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return 0;
}

void ss_comm_finalize(void)
{
    if (inited)
        MPI_Finalize();
    inited = 0;
}

void ss_comm_abort(int code)
{
    ss_error_flush(); /* a message deferred in a multi-rank run is said before the end */
    if (inited)
        MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

int ss_comm_rank(void)
{
    return rank_;
}

int ss_comm_size(void)
{
    return size_;
}

int ss_comm_counter_open(int n_shards)
{
    n_shards_ = n_shards;
    local_next = local_stop = drain_pieces = 0;
    if (!inited)
        return 0;
    MPI_Aint bytes = rank_ == 0 ? (MPI_Aint)(WORD_SIZES + (size_t)n_shards) * sizeof(int64_t) : 0;
    if (MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win_mem, &win) !=
        MPI_SUCCESS) {
        ss_error("rank %d: cannot create the MPI shard counter (MPI_Win_allocate of %lld bytes); "
                 "use a larger --shard-size",
                 rank_, (long long)bytes);
        return -1;
    }
    if (rank_ == 0) {
        win_mem[WORD_COUNTER] = win_mem[WORD_STOP] = win_mem[WORD_READS] = 0;
        for (int i = 0; i < n_shards; i++)
            win_mem[WORD_SIZES + i] = SS_COMM_SIZE_UNKNOWN;
    }
    /* the words are initialised before anyone reads them */
    MPI_Request req;
    if (MPI_Ibarrier(MPI_COMM_WORLD, &req) != MPI_SUCCESS || wait_quietly(&req) < 0) {
        ss_error("rank %d: MPI barrier failed creating the shard counter", rank_);
        return -1;
    }
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    return 0;
}

static int64_t fetch_add(int word, int64_t add)
{
    int64_t old = 0;
    MPI_Fetch_and_op(&add, &old, MPI_INT64_T, 0, word, add ? MPI_SUM : MPI_NO_OP, win);
    MPI_Win_flush(0, win);
    return old;
}

int ss_comm_counter_next(void)
{
    if (!inited) {
        if (local_stop || local_next >= n_shards_)
            return -1;
        return local_next++;
    }
    if (fetch_add(WORD_STOP, 0))
        return -1;
    int64_t idx = fetch_add(WORD_COUNTER, 1);
    return idx < n_shards_ ? (int)idx : -1;
}

/*
 * The stop word's bits: STOP_RAISED, and STOP_TOLD once a rank that raised it has a
 * message to print. OR-ed in one atomic step, so of the ranks that fail with a message
 * exactly one sees STOP_TOLD unset: the one whose message is the job's.
 */
#define STOP_RAISED 2
#define STOP_TOLD   1

int ss_comm_raise_stop(int told)
{
    local_stop = 1;
    if (!inited || win == MPI_WIN_NULL)
        return 1;
    int64_t me = STOP_RAISED | (told ? STOP_TOLD : 0), old;
    MPI_Fetch_and_op(&me, &old, MPI_INT64_T, 0, WORD_STOP, MPI_BOR, win);
    MPI_Win_flush(0, win);
    return !(old & STOP_TOLD);
}

int ss_comm_stop_raised(void)
{
    if (!inited || win == MPI_WIN_NULL)
        return local_stop;
    return fetch_add(WORD_STOP, 0) != 0;
}

int ss_comm_counter_peek(void)
{
    if (!inited || win == MPI_WIN_NULL)
        return local_next;
    int64_t v = fetch_add(WORD_COUNTER, 0);
    return v < n_shards_ ? (int)v : n_shards_;
}

int ss_comm_reads_add(uint64_t n)
{
    if (!inited || win == MPI_WIN_NULL || n == 0)
        return 0;
    int64_t v = (int64_t)n;
    if (MPI_Accumulate(&v, 1, MPI_INT64_T, 0, WORD_READS, 1, MPI_INT64_T, MPI_SUM, win) !=
            MPI_SUCCESS ||
        MPI_Win_flush(0, win) != MPI_SUCCESS) {
        ss_error("rank %d: telling rank 0 the reads read failed (MPI_Accumulate)", rank_);
        return -1;
    }
    return 0;
}

uint64_t ss_comm_reads_total(void)
{
    if (!inited || win == MPI_WIN_NULL)
        return 0;
    return (uint64_t)fetch_add(WORD_READS, 0);
}

/* A size slot holds the length and, above it, the rank holding the piece (owner). */
#define SIZE_BITS 48
#define SIZE_MASK (((int64_t)1 << SIZE_BITS) - 1)

int ss_comm_size_publish(int idx, uint64_t len)
{
    if (!inited || win == MPI_WIN_NULL)
        return 0;
    if (len > (uint64_t)SIZE_MASK) {
        ss_error("rank %d: shard %d made %llu bytes, more than a size slot holds (256 TB); "
                 "use a smaller --shard-size",
                 rank_, idx, (unsigned long long)len);
        return -1;
    }
    int64_t v = (int64_t)len | (int64_t)rank_ << SIZE_BITS;
    /* flushed, so any rank that reads after this returns sees it */
    if (MPI_Accumulate(&v, 1, MPI_INT64_T, 0, WORD_SIZES + (MPI_Aint)idx, 1, MPI_INT64_T,
                       MPI_REPLACE, win) != MPI_SUCCESS ||
        MPI_Win_flush(0, win) != MPI_SUCCESS) {
        ss_error("rank %d: publishing the size of shard %d failed (MPI_Accumulate)", rank_, idx);
        return -1;
    }
    return 0;
}

int ss_comm_sizes_read(int from, int n, int64_t *out, int *owner)
{
    if (!inited || win == MPI_WIN_NULL) {
        for (int i = 0; i < n; i++)
            out[i] = SS_COMM_SIZE_UNKNOWN;
        return 0;
    }
    if (MPI_Get_accumulate(NULL, 0, MPI_INT64_T, out, n, MPI_INT64_T, 0,
                           WORD_SIZES + (MPI_Aint)from, n, MPI_INT64_T, MPI_NO_OP,
                           win) != MPI_SUCCESS ||
        MPI_Win_flush(0, win) != MPI_SUCCESS) {
        ss_error("rank %d: reading shard sizes %d-%d failed (MPI_Get_accumulate)", rank_, from,
                 from + n - 1);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (owner)
            owner[i] = out[i] == SS_COMM_SIZE_UNKNOWN ? -1 : (int)(out[i] >> SIZE_BITS);
        if (out[i] != SS_COMM_SIZE_UNKNOWN)
            out[i] &= SIZE_MASK;
    }
    return 0;
}

/* ---- a piece funnelled to rank 0 (standard output under mpirun) ---- */

int ss_comm_ask(int owner, int idx)
{
    MPI_Request req;
    if (MPI_Isend(&idx, 1, MPI_INT, owner, TAG_ASK, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
        wait_quietly(&req) < 0) {
        ss_error("rank 0: asking rank %d for shard %d failed (MPI_Isend)", owner, idx);
        return -1;
    }
    return 0;
}

int ss_comm_asked(int *idx)
{
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(0, TAG_ASK, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
        return -1;
    if (!flag)
        return 0;
    return MPI_Recv(idx, 1, MPI_INT, 0, TAG_ASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE) == MPI_SUCCESS
               ? 1
               : -1;
}

int ss_comm_piece_send(const void *buf, size_t len)
{
    MPI_Request req;
    if (ss_comm_stop_raised()) /* rank 0 takes no more pieces */
        return -1;
    if (MPI_Isend(buf, (int)len, MPI_BYTE, 0, TAG_PIECE, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return -1;
    return wait_for(&req, MPI_STATUS_IGNORE, 1) == 0 ? 0 : -1;
}

int ss_comm_piece_recv(int owner, void *buf, size_t cap, size_t *got)
{
    MPI_Request req;
    MPI_Status st;
    int n = 0;
    if (MPI_Irecv(buf, (int)cap, MPI_BYTE, owner, TAG_PIECE, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
        wait_for(&req, &st, 1) != 0 || MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS)
        return -1;
    *got = (size_t)n;
    return 0;
}

/*
 * Rank 0, once it takes no more pieces: receive and drop every piece message
 * already on its way (a chunk of a piece rank 0 asked for before the run
 * failed). Open MPI cannot cancel a send, so its sender would otherwise wait
 * for ever, and never reach the agreement rank 0 waits in. 0, or -1.
 */
static int drop_stray_pieces(void)
{
    for (;;) {
        int flag = 0, n = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_PIECE, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS)
            return -1;
        if (!flag)
            return 0;
        if (MPI_Get_count(&st, MPI_BYTE, &n) != MPI_SUCCESS)
            return -1;
        void *buf = malloc(n > 0 ? (size_t)n : 1);
        if (!buf)
            return -1;
        int rc =
            MPI_Recv(buf, n, MPI_BYTE, st.MPI_SOURCE, TAG_PIECE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        free(buf);
        if (rc != MPI_SUCCESS)
            return -1;
    }
}

void ss_comm_pieces_closed(void)
{
    drain_pieces = inited && rank_ == 0;
}

void ss_comm_counter_close(void)
{
    if (!inited || win == MPI_WIN_NULL)
        return;
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    win = MPI_WIN_NULL;
}

int ss_comm_sum_u64(uint64_t *v, size_t n)
{
    if (!inited)
        return 0;
    /* in chunks: counts are int */
    for (size_t off = 0; off < n; off += 1 << 24) {
        int c = (int)(n - off < (1u << 24) ? n - off : 1u << 24);
        MPI_Request req;
        if (MPI_Iallreduce(MPI_IN_PLACE, v + off, c, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD, &req) !=
                MPI_SUCCESS ||
            wait_quietly(&req) < 0)
            return -1;
    }
    return 0;
}

int ss_comm_minmax_i64(int64_t *v, size_t n, int max)
{
    if (!inited)
        return 0;
    for (size_t off = 0; off < n; off += 1 << 24) {
        int c = (int)(n - off < (1u << 24) ? n - off : 1u << 24);
        MPI_Request req;
        if (MPI_Iallreduce(MPI_IN_PLACE, v + off, c, MPI_INT64_T, max ? MPI_MAX : MPI_MIN,
                           MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
            wait_quietly(&req) < 0)
            return -1;
    }
    return 0;
}

int ss_comm_max_int(int v)
{
    int out = v;
    MPI_Request req;
    if (inited &&
        (MPI_Iallreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
         wait_quietly(&req) < 0))
        return v > 0 ? v : 1;
    return out;
}

int ss_comm_gather(const void *in, size_t size, void *out)
{
    if (!inited) {
        memcpy(out, in, size);
        return 0;
    }
    MPI_Request req;
    if (MPI_Igather(in, (int)size, MPI_BYTE, out, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD, &req) !=
        MPI_SUCCESS)
        return -1;
    return wait_quietly(&req);
}

/* The first step of a gatherv: every rank's length to rank 0 (lens, size_ ints, rank 0). */
static int gather_lens(size_t len, int *lens)
{
    if (len > INT_MAX)
        return -1;
    int mine = (int)len;
    MPI_Request req;
    if (MPI_Igather(&mine, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return -1;
    return wait_quietly(&req);
}

/* Rank 0: where each rank's bytes go, and the total (which must fit an int for MPI). */
static int displacements(const int *lens, int *displs, size_t *total)
{
    *total = 0;
    for (int i = 0; i < size_; i++) {
        if (*total > (size_t)INT_MAX - (size_t)lens[i])
            return -1;
        displs[i] = (int)*total;
        *total += (size_t)lens[i];
    }
    return 0;
}

int ss_comm_gatherv(const void *in, size_t len, void **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (!inited)
        return local_gatherv(in, len, out, out_len);
    int *lens = calloc((size_t)size_, sizeof(int)), *displs = calloc((size_t)size_, sizeof(int));
    if (!lens || !displs) {
        /* a few bytes per rank: the other ranks are already inside the collective */
        ss_error("out of memory gathering the report; every rank stops");
        ss_comm_abort(1);
    }
    /* every rank takes part in both steps even after a local failure, or rank 0 waits */
    int rc = len > INT_MAX ? -1 : 0;
    if (gather_lens(rc == 0 ? len : 0, lens) < 0)
        rc = -1;
    size_t total = 0;
    if (rank_ == 0 && rc == 0 && displacements(lens, displs, &total) < 0)
        rc = -1;
    if (rank_ == 0 && rc < 0) /* more than MPI counts: receive nothing, send nothing */
        memset(lens, 0, (size_t)size_ * sizeof(int));
    void *buf = rank_ == 0 && rc == 0 && total ? malloc(total) : NULL;
    if (rank_ == 0 && total && !buf) {
        ss_error("out of memory gathering %zu bytes of report records; every rank stops", total);
        ss_comm_abort(1);
    }
    MPI_Request req;
    if (MPI_Igatherv(in, rc == 0 ? (int)len : 0, MPI_BYTE, buf, lens, displs, MPI_BYTE, 0,
                     MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
        wait_quietly(&req) < 0)
        rc = -1;
    free(lens);
    free(displs);
    if (rc < 0) {
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = total;
    return 0;
}

int ss_comm_bcast_str(char *buf, size_t cap)
{
    if (!inited)
        return 0;
    MPI_Request req;
    if (MPI_Ibcast(buf, (int)cap, MPI_CHAR, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS)
        return -1;
    return wait_quietly(&req);
}

int ss_comm_bcast_bytes(void **buf, size_t *len)
{
    if (!inited)
        return 0;
    int root = rank_ == 0;
    uint64_t n = *len == SIZE_MAX ? UINT64_MAX : (uint64_t)*len;
    MPI_Request req;
    if (MPI_Ibcast(&n, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
        wait_quietly(&req) < 0)
        return -1;
    if (!root) {
        *len = n == UINT64_MAX ? SIZE_MAX : (size_t)n;
        *buf = n && n != UINT64_MAX ? malloc((size_t)n) : NULL;
    }
    int ok = n == 0 || n == UINT64_MAX || *buf != NULL;
    if (ss_comm_max_int(!ok)) /* every rank learns that one cannot take the bytes */
        goto fail;
    for (uint64_t at = 0; n != UINT64_MAX && at < n;) { /* MPI counts are ints */
        int part = n - at > (1u << 30) ? 1 << 30 : (int)(n - at);
        if (MPI_Ibcast((char *)*buf + at, part, MPI_BYTE, 0, MPI_COMM_WORLD, &req) != MPI_SUCCESS ||
            wait_quietly(&req) < 0)
            goto fail;
        at += (uint64_t)part;
    }
    return 0;
fail:
    if (!root) {
        free(*buf);
        *buf = NULL;
    }
    return -1;
}

struct ss_comm_file_s {
    MPI_File fh;
    char path[4096];
};

ss_comm_file_t *ss_comm_file_open(const char *path, const char *shown)
{
    ss_comm_file_t *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    snprintf(f->path, sizeof(f->path), "%s", shown ? shown : path);
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                           &f->fh);
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        ss_error("%s: cannot open for parallel writing (%s); check the directory is "
                 "writable and on a file system all ranks share",
                 f->path, msg);
        free(f);
        return NULL;
    }
    return f;
}

/*
 * Open MPI's MPI_File_write_at returns MPI_SUCCESS on a short write (a full
 * disk among them): only the status's count says how much went out. Write
 * the rest again; a call that moves nothing is the failure.
 */
int ss_comm_file_write_at(ss_comm_file_t *f, uint64_t offset, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        int chunk = len > (1u << 30) ? 1 << 30 : (int)len, done = 0;
        MPI_Status st;
        int rc = MPI_File_write_at(f->fh, (MPI_Offset)offset, p, chunk, MPI_BYTE, &st);
        if (rc == MPI_SUCCESS && MPI_Get_count(&st, MPI_BYTE, &done) != MPI_SUCCESS)
            done = 0;
        if (rc != MPI_SUCCESS || done <= 0 || done > chunk) {
            char why[MPI_MAX_ERROR_STRING] = "no bytes written: the file system is full?";
            int n = 0;
            if (rc != MPI_SUCCESS && MPI_Error_string(rc, why, &n) != MPI_SUCCESS)
                snprintf(why, sizeof(why), "MPI error %d", rc);
            ss_error("%s: writing %d bytes at offset %llu failed (%s); free space on its "
                     "file system and rerun",
                     f->path, chunk, (unsigned long long)offset, why);
            return -1;
        }
        p += done, offset += (uint64_t)done, len -= (size_t)done;
    }
    return 0;
}

int ss_comm_file_close(ss_comm_file_t *f)
{
    if (!f)
        return 0;
    int rc = MPI_File_close(&f->fh);
    free(f);
    return rc == MPI_SUCCESS ? 0 : -1;
}

void ss_comm_version(char *buf, size_t size)
{
    /* MPI_Get_library_version is one of the few calls allowed before MPI_Init */
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(lib, &len) != MPI_SUCCESS || len <= 0) {
        snprintf(buf, size, "unknown MPI library");
        return;
    }
    lib[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    size_t first = strcspn(lib, "\r\n,"); /* Open MPI appends build details after ',' */
    lib[first] = '\0';
    snprintf(buf, size, "%s", lib);
}

#else /* built without MPI: one rank, local stand-ins */

static int n_shards_, local_next, local_stop;

/* The first of these variables that is set, as a number; -1 when none is. */
static long env_number(const char *const *names)
{
    for (int i = 0; names[i]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return strtol(v, NULL, 10);
    }
    return -1;
}

/*
 * A launcher (mpirun, srun) may start this build as one of several processes.
 * Without MPI each would run the whole job as rank 0 and race the others for
 * the same output: refuse, and say so once (from the launcher's rank 0).
 * 0, or -2 (a usage error) after the message.
 */
int ss_comm_init(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    static const char *const sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS",
                                        NULL};
    /* a rank variable says a launcher started us (a batch script's own SLURM_* do not) */
    static const char *const ranks[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", NULL};
    long size = env_number(sizes), rank = env_number(ranks);
    if (size <= 1 || rank < 0)
        return 0;
    if (rank == 0)
        fprintf(stderr,
                "seqshard: this seqshard was built without MPI, but a launcher started it as "
                "one of %ld processes, each of which would run the whole job; run one process "
                "without mpirun or srun (-@ uses every core), or use a build with MPI "
                "(cmake -DSEQSHARD_MPI=ON)\n",
                size);
    return -2;
}
void ss_comm_finalize(void)
{
}
void ss_comm_abort(int code)
{
    ss_error_flush();
    exit(code);
}
int ss_comm_rank(void)
{
    return 0;
}
int ss_comm_size(void)
{
    return 1;
}
int ss_comm_counter_open(int n_shards)
{
    n_shards_ = n_shards;
    local_next = local_stop = 0;
    return 0;
}
int ss_comm_counter_next(void)
{
    return local_stop || local_next >= n_shards_ ? -1 : local_next++;
}
int ss_comm_raise_stop(int told)
{
    (void)told;
    local_stop = 1;
    return 1;
}
int ss_comm_stop_raised(void)
{
    return local_stop;
}
int ss_comm_counter_peek(void)
{
    return local_next;
}
void ss_comm_counter_close(void)
{
}
int ss_comm_reads_add(uint64_t n)
{
    (void)n;
    return 0;
}
uint64_t ss_comm_reads_total(void)
{
    return 0;
}
int ss_comm_size_publish(int idx, uint64_t len)
{
    (void)idx, (void)len;
    return 0;
}
int ss_comm_sizes_read(int from, int n, int64_t *out, int *owner)
{
    (void)owner;
    (void)from;
    for (int i = 0; i < n; i++)
        out[i] = SS_COMM_SIZE_UNKNOWN;
    return 0;
}
int ss_comm_ask(int owner, int idx)
{
    (void)owner, (void)idx;
    return -1;
}
int ss_comm_asked(int *idx)
{
    (void)idx;
    return 0;
}
int ss_comm_piece_send(const void *buf, size_t len)
{
    (void)buf, (void)len;
    return -1;
}
int ss_comm_piece_recv(int owner, void *buf, size_t cap, size_t *got)
{
    (void)owner, (void)buf, (void)cap, (void)got;
    return -1;
}
void ss_comm_pieces_closed(void)
{
}
int ss_comm_sum_u64(uint64_t *v, size_t n)
{
    (void)v, (void)n;
    return 0;
}
int ss_comm_minmax_i64(int64_t *v, size_t n, int max)
{
    (void)v, (void)n, (void)max;
    return 0;
}
int ss_comm_max_int(int v)
{
    return v;
}
int ss_comm_gather(const void *in, size_t size, void *out)
{
    memcpy(out, in, size);
    return 0;
}
int ss_comm_gatherv(const void *in, size_t len, void **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    return local_gatherv(in, len, out, out_len);
}
int ss_comm_bcast_str(char *buf, size_t cap)
{
    (void)buf, (void)cap;
    return 0;
}
int ss_comm_bcast_bytes(void **buf, size_t *len)
{
    (void)buf, (void)len;
    return 0;
}
ss_comm_file_t *ss_comm_file_open(const char *path, const char *shown)
{
    ss_error("%s: parallel output needs an MPI build", shown ? shown : path);
    return NULL;
}
int ss_comm_file_write_at(ss_comm_file_t *f, uint64_t offset, const void *buf, size_t len)
{
    (void)f, (void)offset, (void)buf, (void)len;
    return -1;
}
int ss_comm_file_close(ss_comm_file_t *f)
{
    (void)f;
    return 0;
}
void ss_comm_version(char *buf, size_t size)
{
    snprintf(buf, size, "none (built without MPI)");
}
#endif

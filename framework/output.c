/*
 * output.c -- an output file (-o, --report): written under a temporary name
 * in the same directory and renamed into place only when the whole run
 * succeeded, so a failed or interrupted run never leaves a FILE that looks
 * complete (and an existing FILE stays untouched). Without -o, or when FILE
 * is not a regular file (a device, a FIFO, our own standard output through
 * /dev/stdout), bytes go straight there: there is nothing to rename, and
 * renaming over /dev/stdout would replace the link, not write the file.
 *
 * A terminating signal while a temporary file exists removes it and the
 * index that may be being built beside it (signals.c; the paths are stored
 * before the handler may use them). In a multi-rank run the other ranks
 * guard rank 0's temporary file the same way (ss_output_guard): when one
 * rank dies, mpirun sends SIGTERM to the rest, and the dead one may be rank 0.
 *
 * The run's -o output (ss_output_open_resumable) is the exception: its
 * temporary has a fixed name, .FILE.tmp.seqshard, so a rerun with --resume
 * finds it, and a signal leaves it (only an index being built beside it
 * goes); errors still remove it (abort). A lock (flock) on it keeps two runs
 * from writing the same FILE at once.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ss_internal.h"

const unsigned char ss_bgzf_eof[28] = {
    0x1f, 0x8b, 0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff, 0x06, 0x00, 0x42, 0x43,
    0x02, 0x00, 0x1b, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00
};

#define N_NAMES 4 /* a temporary file and the index names beside it */

struct ss_output_s {
    int fd;
    int own_fd;     /* we opened fd and close it (not our standard output) */
    char *shown;    /* the name as given, for messages; NULL for standard output */
    char *path;     /* where the rename goes: shown, or the file a symlink names */
    char *tmp;      /* temporary name, NULL when writing in place */
    int slot[N_NAMES]; /* signals.c slots of tmp and its index names; -1 when none */
    uint64_t bytes;
    int indexed;    /* an index of tmp is being built beside it (tmp + an index_exts) */
    int fixed;      /* tmp is the resumable .BASE.tmp.seqshard: kept when a signal ends us */
};

static const char *shown(const ss_output_t *o);
static void output_free(ss_output_t *o);

/* The index names an index builder may write beside a file: tabix's, CSI, CRAM's. */
static const char *const index_exts[N_NAMES - 1] = {".tbi", ".csi", ".crai"};
static int guard_slot[N_NAMES] = {-1, -1, -1, -1};

/*
 * Remove tmp and tmp + each index_exts if a signal ends the process; slot
 * gets their slots. A resumable temporary (keep) stays for --resume: only
 * the index names, which are rebuilt from the whole file anyway, go.
 */
static void arm_removal(const char *tmp, int keep, int slot[N_NAMES])
{
    char p[PATH_MAX + 8];
    slot[0] = keep ? -1 : ss_signals_remove_on_exit(tmp);
    for (int i = 0; i < N_NAMES - 1; i++) {
        snprintf(p, sizeof(p), "%s%s", tmp, index_exts[i]);
        slot[i + 1] = ss_signals_remove_on_exit(p);
    }
}

static void disarm_removal(int slot[N_NAMES])
{
    for (int i = 0; i < N_NAMES; i++) {
        ss_signals_forget(slot[i]);
        slot[i] = -1;
    }
}

/*
 * The temporary name of final: hidden, in the same directory (so the rename
 * is atomic), ".BASE.tmp.XXXXXX" with BASE cut so that the name and an index
 * name beside it (+4 bytes) fit NAME_MAX: a final name near 255 bytes still
 * has a temporary. 0, or -1 when the directory part is too long.
 */
static int tmp_name(const char *final, char *buf, size_t size)
{
    static const char suffix[] = ".tmp.XXXXXX";
    const char *slash = strrchr(final, '/');
    const char *base = slash ? slash + 1 : final;
    int dir_len = (int)(base - final);
    int keep = NAME_MAX - 1 - (int)(sizeof(suffix) - 1) - 4;
    int len = snprintf(buf, size, "%.*s.%.*s%s", dir_len, final, keep, base, suffix);
    return len < 0 || (size_t)len >= size ? -1 : 0;
}

/*
 * The resumable temporary: always the same name, ".BASE.tmp.seqshard", so a
 * rerun finds it; BASE is cut so that the manifest's longest name beside it
 * (".BASE.resume.rankNNNNNNNNNN", SS_OUTPUT_RESUME_SUFFIX_MAX) fits NAME_MAX.
 */
static int fixed_tmp_name(const char *final, char *buf, size_t size)
{
    const char *slash = strrchr(final, '/');
    const char *base = slash ? slash + 1 : final;
    int dir_len = (int)(base - final);
    int keep = NAME_MAX - 1 - SS_OUTPUT_RESUME_SUFFIX_MAX;
    int len = snprintf(buf, size, "%.*s.%.*s%s", dir_len, final, keep, base, SS_OUTPUT_TMP_FIXED);
    return len < 0 || (size_t)len >= size ? -1 : 0;
}

static int open_tmp(ss_output_t *o)
{
    char tmp[PATH_MAX];
    if (tmp_name(o->path, tmp, sizeof(tmp)) < 0) {
        ss_error("%s: output path too long; use a shorter one", o->shown);
        return -1;
    }
    if ((o->fd = mkstemp(tmp)) < 0) {
        ss_error("%s: cannot create a temporary file next to it: %s; check that its directory "
                 "exists and is writable", o->shown, strerror(errno));
        return -1;
    }
    o->own_fd = 1;
    if (!(o->tmp = strdup(tmp))) {
        unlink(tmp);
        ss_error("out of memory opening the output");
        return -1;
    }
    arm_removal(tmp, 0, o->slot);
    /* mkstemp makes 0600; the final file gets what open(..., 0666) would under the umask */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(o->fd, 0666 & ~mask) != 0)
        ss_warn("%s: cannot set permissions: %s", o->shown, strerror(errno));
    return 0;
}

/*
 * Open the resumable temporary without truncating it (--resume reads what an
 * earlier run left there), locked, so a second run writing the same FILE at
 * the same time is refused instead of mixing its bytes in. File systems
 * without flock (ENOLCK, EOPNOTSUPP) run unlocked.
 */
static int open_fixed_tmp(ss_output_t *o)
{
    char tmp[PATH_MAX];
    if (fixed_tmp_name(o->path, tmp, sizeof(tmp)) < 0) {
        ss_error("%s: output path too long; use a shorter one", o->shown);
        return -1;
    }
    if ((o->fd = open(tmp, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0) {
        ss_error("%s: cannot create a temporary file next to it: %s; check the -o directory "
                 "exists and is writable", o->shown, strerror(errno));
        return -1;
    }
    o->own_fd = 1;
    if (flock(o->fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        ss_error("%s: another seqshard run is writing it (its temporary %s is locked); wait "
                 "for that run or give another -o", o->shown, tmp);
        close(o->fd);
        o->fd = -1;
        return -1;
    }
    if (!(o->tmp = strdup(tmp))) {
        ss_error("out of memory opening the output");
        return -1;
    }
    o->fixed = 1;
    arm_removal(tmp, 1, o->slot);
    return 0;
}

/* Is st the file our standard output already has open (a redirect, /dev/stdout)? */
static int is_our_stdout(const struct stat *st)
{
    struct stat out;
    return fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st->st_dev &&
           out.st_ino == st->st_ino;
}

/*
 * Where the bytes go, decided on the file a path names (stat follows
 * symlinks): our own standard output (`-o /dev/stdout > f`, /proc/self/fd/1)
 * is written through fd 1, so the shell's redirect (append or truncate) holds;
 * a device, FIFO or socket is opened and written in place; a regular file,
 * existing or new, gets a temporary beside the file itself (through a
 * symlink: beside its target, so the rename replaces the target, not the link).
 * 1: a temporary is needed (o->path set), 0: in place (o->fd set), -1: error.
 */
static int choose_target(ss_output_t *o)
{
    struct stat st;
    if (stat(o->shown, &st) != 0) {
        if (errno != ENOENT) {
            ss_error("%s: cannot use as the output: %s", o->shown, strerror(errno));
            return -1;
        }
        if (lstat(o->shown, &st) == 0) {
            ss_error("%s: is a symbolic link to a missing file; give -o the target's path",
                     o->shown);
            return -1;
        }
        if (!(o->path = strdup(o->shown))) {
            ss_error("out of memory opening the output");
            return -1;
        }
        return 1;
    }
    if (S_ISDIR(st.st_mode)) {
        ss_error("%s: is a directory; give -o a file name", o->shown);
        return -1;
    }
    if (is_our_stdout(&st)) {
        o->fd = STDOUT_FILENO;
        return 0;
    }
    if (!S_ISREG(st.st_mode)) {
        if ((o->fd = open(o->shown, O_WRONLY)) < 0) {
            ss_error("%s: cannot open for writing: %s", o->shown, strerror(errno));
            return -1;
        }
        o->own_fd = 1;
        return 0;
    }
    if (!(o->path = realpath(o->shown, NULL))) {
        ss_error("%s: cannot resolve the output's path: %s", o->shown, strerror(errno));
        return -1;
    }
    return 1;
}

/* The output, with a temporary made by mkstemp (fixed = 0) or the resumable one. */
static ss_output_t *output_open(const char *path, int fixed)
{
    ss_output_t *o = calloc(1, sizeof(*o));
    if (!o) {
        ss_error("out of memory opening the output");
        return NULL;
    }
    o->fd = -1;
    for (int i = 0; i < N_NAMES; i++)
        o->slot[i] = -1;
    if (!path || strcmp(path, "-") == 0) {
        o->fd = STDOUT_FILENO;
        return o;
    }
    if (!(o->shown = strdup(path))) {
        ss_error("out of memory opening the output");
        free(o);
        return NULL;
    }
    int r = choose_target(o);
    if (r == 0 || (r == 1 && (fixed ? open_fixed_tmp(o) : open_tmp(o)) == 0))
        return o;
    if (o->fixed)
        ss_output_close_keep(o); /* an earlier run's temporary is not ours to remove */
    else
        ss_output_abort(o);
    return NULL;
}

ss_output_t *ss_output_open(const char *path)
{
    return output_open(path, 0);
}

ss_output_t *ss_output_open_resumable(const char *path)
{
    return output_open(path, 1);
}

int ss_output_fd(const ss_output_t *o)
{
    return o ? o->fd : -1;
}

int ss_output_skip(ss_output_t *o, uint64_t len)
{
    if (lseek(o->fd, (off_t)len, SEEK_CUR) < 0) {
        ss_error("%s: cannot seek in the temporary output: %s", shown(o), strerror(errno));
        return -1;
    }
    o->bytes += len;
    return 0;
}

int ss_output_set_length(ss_output_t *o, uint64_t len)
{
    if (!o->tmp || ftruncate(o->fd, (off_t)len) == 0)
        return 0;
    ss_error("%s: cannot set the temporary output's length: %s", shown(o), strerror(errno));
    return -1;
}

void ss_output_close_keep(ss_output_t *o)
{
    if (!o)
        return;
    if (o->fd >= 0 && o->own_fd)
        close(o->fd);
    disarm_removal(o->slot);
    output_free(o);
}

/* The name messages use. */
static const char *shown(const ss_output_t *o)
{
    return o->shown ? o->shown : "standard output";
}

int ss_output_write(ss_output_t *o, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(o->fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            ss_error("%s: write failed: %s; check free space on its file system", shown(o),
                     w < 0 ? strerror(errno) : "no bytes written");
            return -1;
        }
        p += w;
        len -= (size_t)w;
        o->bytes += (uint64_t)w;
    }
    return 0;
}

uint64_t ss_output_bytes(const ss_output_t *o)
{
    return o ? o->bytes : 0;
}

const char *ss_output_tmp_path(const ss_output_t *o)
{
    return o ? o->tmp : NULL;
}

int ss_output_index_tabix(ss_output_t *o, int csi)
{
    if (!o->tmp) {
        ss_error("%s: a .gz output is indexed, which needs a regular file; give -o a file "
                 "name", shown(o));
        return -1;
    }
    if (fsync(o->fd) != 0 && errno != EINVAL) {
        ss_error("%s: cannot flush the output before indexing: %s; check free space on its "
                 "file system", shown(o), strerror(errno));
        return -1;
    }
    /* set first: a failed build may leave a partial index, which abort then removes */
    o->indexed = 1;
    return ss_tabix_index(o->tmp, o->shown, csi);
}

const char *ss_output_index_path(ss_output_t *o)
{
    if (o && o->tmp)
        o->indexed = 1;
    return o ? o->tmp : NULL;
}

/* Remove the index names beside tmp. */
static void drop_index(ss_output_t *o)
{
    char p[PATH_MAX + 8];
    for (int i = 0; o->indexed && o->tmp && i < N_NAMES - 1; i++) {
        snprintf(p, sizeof(p), "%s%s", o->tmp, index_exts[i]);
        unlink(p);
    }
}

/*
 * Rename tmp+ext to FILE+ext for each index built. When that fails FILE is
 * already the new data: an index of an older FILE must not stay beside it.
 */
static int move_index(ss_output_t *o)
{
    char from[PATH_MAX + 8], to[PATH_MAX + 8];
    for (int i = 0; o->indexed && i < N_NAMES - 1; i++) {
        snprintf(from, sizeof(from), "%s%s", o->tmp, index_exts[i]);
        snprintf(to, sizeof(to), "%s%s", o->path, index_exts[i]);
        if (access(from, F_OK) != 0 || rename(from, to) == 0)
            continue;
        ss_error("%s: the output is in place but its index could not be renamed to %s: %s; "
                 "index it again (tabix, samtools index)", o->shown, to, strerror(errno));
        unlink(to);
        drop_index(o);
        return -1;
    }
    return 0;
}

static void output_free(ss_output_t *o)
{
    free(o->shown);
    free(o->path);
    free(o->tmp);
    free(o);
}

/* Rename tmp (and its index) into place. 0, or -1 after ss_error(). */
static int rename_into_place(ss_output_t *o)
{
    int rc = 0;
    /* no signal between the rename and the handler forgetting tmp: it would unlink nothing,
     * but then report "no output written" while FILE is complete */
    sigset_t saved;
    ss_signals_block(&saved);
    if (rename(o->tmp, o->path) != 0) {
        ss_error("%s: cannot rename the finished output into place: %s; nothing was written",
                 o->shown, strerror(errno));
        unlink(o->tmp);
        drop_index(o);
        rc = -1;
    } else if (move_index(o) < 0) {
        rc = -1;
    }
    disarm_removal(o->slot);
    ss_signals_restore(&saved);
    return rc;
}

int ss_output_commit(ss_output_t *o)
{
    int fd = o->fd;
    o->fd = -1;
    if (o->own_fd && close(fd) != 0) {
        ss_error("%s: error finishing the output: %s; check free space on its file system",
                 shown(o), strerror(errno));
        ss_output_abort(o);
        return -1;
    }
    int rc = o->tmp ? rename_into_place(o) : 0;
    output_free(o);
    return rc;
}

int ss_output_guard(const char *tmp_path, int keep)
{
    if (guard_slot[0] >= 0 || guard_slot[1] >= 0)
        return -1;
    arm_removal(tmp_path, keep, guard_slot);
    int armed = 1;
    for (int i = keep ? 1 : 0; i < N_NAMES; i++)
        armed = armed && guard_slot[i] >= 0;
    if (armed)
        return 0;
    disarm_removal(guard_slot);
    return -1;
}

void ss_output_unguard(void)
{
    disarm_removal(guard_slot);
}

void ss_output_abort(ss_output_t *o)
{
    if (!o)
        return;
    if (o->fd >= 0 && o->own_fd)
        close(o->fd);
    if (o->tmp) {
        unlink(o->tmp);
        drop_index(o);
    }
    disarm_removal(o->slot);
    output_free(o);
}

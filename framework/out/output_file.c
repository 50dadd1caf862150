/*
 * output_file.c -- an output file (-o, --report): written under a temporary name
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
 *
 * The directory may be shared and hostile (contract 9): another user may have
 * put a symbolic link, a FIFO or a hard link at any name we are about to use.
 * So no file is ever opened through a name someone else made: temporaries are
 * created with O_EXCL|O_NOFOLLOW (mkstemp does the same), an existing name is
 * reused only when it is a regular file of ours with no other link
 * (ss_output_open_own), and htslib's index writers, which open by name and
 * truncate, are only given names we have just created ourselves. In a sticky
 * directory (/tmp, mode 1777) nobody else can then remove or replace them.
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

#include "../run/run.h"
#include "compress.h"
#include "output_file.h"

const unsigned char ss_bgzf_eof[28] = {0x1f, 0x8b, 0x08, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0xff,
                                       0x06, 0x00, 0x42, 0x43, 0x02, 0x00, 0x1b, 0x00, 0x03, 0x00,
                                       0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};

#define N_NAMES 4 /* a temporary file and the index names beside it */
#define EXT_MAX 5 /* the longest index suffix, ".crai" */

struct ss_output_s {
    int fd;
    int own_fd;        /* we opened fd and close it (not our standard output) */
    char *shown;       /* the name as given, for messages; NULL for standard output */
    char *path;        /* where the rename goes: shown, or the file a symlink names */
    char *tmp;         /* temporary name, NULL when writing in place */
    int slot[N_NAMES]; /* signals.c slots: [0] tmp, [1] idx_tmp; -1 when none */
    uint64_t bytes;
    char *idx_tmp;       /* the index being built of tmp, NULL when none (ss_output_index_tmp) */
    const char *idx_ext; /* its suffix beside FILE: ".tbi", ".csi" or ".crai" */
    char *idx_final;     /* where it goes when -o named it (FILE##idx##INDEX); NULL: beside */
    int fixed;           /* tmp is the resumable .BASE.tmp.seqshard: kept when a signal ends us */
};

static const char *shown(const ss_output_t *o);
static void output_free(ss_output_t *o);
static void drop_index(ss_output_t *o);

/* The index names an index builder may write beside a file: tabix's, CSI, CRAM's. */
static const char *const index_exts[N_NAMES - 1] = {".tbi", ".csi", ".crai"};
static int guard_slot[N_NAMES] = {-1, -1, -1, -1};
static int guarded;

/*
 * Another rank's temporary tmp (ss_output_guard): remove it (unless keep, a
 * resumable one that stays for --resume) and tmp + each index_exts, the names
 * its owner builds an index under, if a signal ends this process. 0, or -1
 * when a slot could not be had.
 */
static int arm_guard(const char *tmp, int keep)
{
    char p[PATH_MAX + 8];
    int ok = 1;
    guard_slot[0] = keep ? -1 : ss_signals_remove_on_exit(tmp);
    ok = keep || guard_slot[0] >= 0;
    for (int i = 0; i < N_NAMES - 1; i++) {
        snprintf(p, sizeof(p), "%s%s", tmp, index_exts[i]);
        guard_slot[i + 1] = ss_signals_remove_on_exit(p);
        ok = ok && guard_slot[i + 1] >= 0;
    }
    return ok ? 0 : -1;
}

static void disarm_removal(int slot[N_NAMES])
{
    for (int i = 0; i < N_NAMES; i++) {
        ss_signals_forget(slot[i]);
        slot[i] = -1;
    }
}

/* ---- files that are ours: never opened through a name someone else made ---- */

/* 0 when st is a regular file this user owns with no other name; else -1, errno EPERM. */
static int check_own(const struct stat *st)
{
    if (S_ISREG(st->st_mode) && st->st_uid == geteuid() && st->st_nlink == 1)
        return 0;
    errno = EPERM;
    return -1;
}

int ss_output_open_own(const char *path, int flags)
{
    /* O_NONBLOCK: a FIFO put there must not stop us in open() before fstat says what it is */
    int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fstat(fd, &st) != 0 || check_own(&st) != 0 || fl < 0 ||
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int ss_output_create_own(const char *path, int flags)
{
    for (int tries = 0;; tries++) {
        int fd = open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        struct stat st;
        if (fd >= 0 || errno != EEXIST)
            return fd;
        /* a regular file of ours with no other link: an earlier run's, which it left when killed;
         * in a sticky directory nobody else can put one there or swap it before the unlink */
        if (tries > 0 || lstat(path, &st) != 0 || check_own(&st) != 0 ||
            (unlink(path) != 0 && errno != ENOENT)) {
            errno = EEXIST;
            return -1;
        }
    }
}

void ss_output_own_error(const char *shown, const char *path, int err)
{
    const char *what = err == ELOOP    ? "is a symbolic link"
                       : err == EPERM  ? "is not a regular file of this user's with one name"
                       : err == EEXIST ? "is already there and is not this user's to replace"
                                       : NULL;
    const char *sep = ": ";
    if (strcmp(shown, path) == 0) /* the message names it once */
        shown = sep = "";
    if (what)
        ss_error("%s%s%s %s (someone else may have put it there); remove it and rerun", shown, sep,
                 path, what);
    else
        ss_error("%s%scannot create or open %s: %s; check that its directory exists and is "
                 "writable",
                 shown, sep, path, strerror(err));
}

/* The mode a new file gets from open(..., 0666) under the umask, for what mkstemp made 0600. */
static void set_default_mode(int fd, const char *shown)
{
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0)
        ss_warn("%s: cannot set permissions: %s", shown, strerror(errno));
}

/*
 * The temporary name of final: hidden, in the same directory (so the rename
 * is atomic), ".BASE.tmp.XXXXXX" with BASE cut so that the name and an index
 * name beside it (+EXT_MAX bytes) fit NAME_MAX: a final name near 255 bytes
 * still has a temporary. 0, or -1 when the directory part is too long.
 */
static int tmp_name(const char *final, char *buf, size_t size)
{
    static const char suffix[] = ".tmp.XXXXXX";
    const char *slash = strrchr(final, '/');
    const char *base = slash ? slash + 1 : final;
    int dir_len = (int)(base - final);
    int keep = NAME_MAX - 1 - (int)(sizeof(suffix) - 1) - EXT_MAX;
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
                 "exists and is writable",
                 o->shown, strerror(errno));
        return -1;
    }
    o->own_fd = 1;
    if (!(o->tmp = strdup(tmp))) {
        unlink(tmp);
        ss_error("out of memory opening the output");
        return -1;
    }
    o->slot[0] = ss_signals_remove_on_exit(tmp);
    set_default_mode(o->fd, o->shown);
    return 0;
}

/*
 * Open the resumable temporary without truncating it (--resume reads what an
 * earlier run left there), locked, so a second run writing the same FILE at
 * the same time is refused instead of mixing its bytes in. File systems
 * without flock (ENOLCK, EOPNOTSUPP) run unlocked. Its name is fixed, so
 * anyone can put something there first: what is there is used only when it
 * is a regular file of ours with no other link; else the run is refused.
 */
static int open_fixed_tmp(ss_output_t *o)
{
    char tmp[PATH_MAX];
    if (fixed_tmp_name(o->path, tmp, sizeof(tmp)) < 0) {
        ss_error("%s: output path too long; use a shorter one", o->shown);
        return -1;
    }
    o->fd = ss_output_open_own(tmp, O_RDWR);
    if (o->fd < 0 && errno == ENOENT)
        o->fd = ss_output_create_own(tmp, O_RDWR);
    if (o->fd < 0) {
        ss_output_own_error(o->shown, tmp, errno);
        return -1;
    }
    o->own_fd = 1;
    if (flock(o->fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        ss_error("%s: another seqshard run is writing it (its temporary %s is locked); wait "
                 "for that run or give another -o",
                 o->shown, tmp);
        close(o->fd);
        o->fd = -1;
        return -1;
    }
    if (!(o->tmp = strdup(tmp))) {
        ss_error("out of memory opening the output");
        return -1;
    }
    o->fixed = 1;
    return 0;
}

/* Is st the file our standard output already has open (a redirect, /dev/stdout)? */
static int is_our_stdout(const struct stat *st)
{
    struct stat out;
    return fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st->st_dev && out.st_ino == st->st_ino;
}

/*
 * A symbolic link at the output is followed only when this user or root made
 * it: one another user put in a shared directory would have us replace
 * whatever file it names (the rename goes beside the target). 0, or -1 after
 * ss_error().
 */
static int check_link(const char *shown)
{
    struct stat st;
    if (lstat(shown, &st) != 0 || !S_ISLNK(st.st_mode) || st.st_uid == geteuid() || st.st_uid == 0)
        return 0;
    ss_error("%s: is a symbolic link another user (uid %ld) made; seqshard does not write "
             "through it: remove it, or give the target's path if that file is yours",
             shown, (long)st.st_uid);
    return -1;
}

/*
 * A device, FIFO or socket, written in place: opened, then checked to be the
 * file stat saw, so a regular file swapped in between is never written over.
 */
static int open_in_place(ss_output_t *o, const struct stat *seen)
{
    struct stat st;
    if ((o->fd = open(o->shown, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0) {
        ss_error("%s: cannot open for writing: %s", o->shown, strerror(errno));
        return -1;
    }
    o->own_fd = 1;
    if (fstat(o->fd, &st) != 0 || S_ISREG(st.st_mode) || st.st_dev != seen->st_dev ||
        st.st_ino != seen->st_ino) {
        ss_error("%s: changed while it was being opened (now a regular file, or another "
                 "file); rerun, and check who else writes in its directory",
                 o->shown);
        return -1;
    }
    return 0;
}

/*
 * Where the bytes go, decided on the file a path names (stat follows
 * symlinks): our own standard output (`-o /dev/stdout > f`, /proc/self/fd/1)
 * is written through fd 1, so the shell's redirect (append or truncate) holds;
 * a device, FIFO or socket is opened and written in place; a regular file,
 * existing or new, gets a temporary beside the file itself (through a
 * symlink of ours: beside its target, so the rename replaces the target, not
 * the link).
 * 1: a temporary is needed (o->path set), 0: in place (o->fd set), -1: error.
 */
static int choose_target(ss_output_t *o)
{
    struct stat st;
    if (check_link(o->shown) < 0)
        return -1;
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
    if (!S_ISREG(st.st_mode))
        return open_in_place(o, &st) < 0 ? -1 : 0;
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
        int fl = fcntl(STDOUT_FILENO, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) { /* closed: cli.c held it read-only */
            ss_error("standard output: is closed or not open for writing, so the output has "
                     "nowhere to go; run with it open (redirect it: > out.txt, or a pipe) or "
                     "give -o FILE");
            free(o);
            return NULL;
        }
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

int ss_output_index_ext_len(const ss_out_spec_t *spec, const char *output)
{
    if (!output || strcmp(output, "-") == 0)
        return 0;
    if (spec->format == SS_FMT_TEXT && ss_bgzf_wanted(output))
        return 4; /* .tbi, or .csi */
    if (spec->write_index)
        return spec->format == SS_FMT_CRAM ? 5 : 4; /* .crai, .csi */
    return 0;
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
    drop_index(o); /* rebuilt from the whole file by the run that finishes it */
    disarm_removal(o->slot);
    output_free(o);
}

/* The name messages use. */
static const char *shown(const ss_output_t *o)
{
    return o->shown ? o->shown : "standard output";
}

/* What to do after a write to o failed with err (0: a write that moved nothing). */
static const char *write_fix(const ss_output_t *o, int err)
{
    switch (err) {
    case 0:
    case ENOSPC:
    case EDQUOT:
        return "check free space on its file system";
    case EBADF:
        return o->shown ? "it is not open for writing; rerun"
                        : "standard output is closed or not open for writing: run with it open "
                          "(redirect it: > out.txt, or a pipe) or give -o FILE";
    case EPIPE:
        return "its reader (the other end of the pipe) went away before the end: keep the "
               "reader running, or give -o FILE";
    default:
        return "check the device or file system it goes to, and rerun";
    }
}

int ss_output_write(ss_output_t *o, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = write(o->fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int err = w < 0 ? errno : 0;
            ss_error("%s: write failed: %s; %s", shown(o), err ? strerror(err) : "no bytes written",
                     write_fix(o, err));
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
                 "name",
                 shown(o));
        return -1;
    }
    if (fsync(o->fd) != 0 && errno != EINVAL) {
        ss_error("%s: cannot flush the output before indexing: %s; check free space on its "
                 "file system",
                 shown(o), strerror(errno));
        return -1;
    }
    const char *idx = ss_output_index_tmp(o, csi ? ".csi" : ".tbi");
    return idx ? ss_tabix_index(o->tmp, idx, o->shown, csi) : -1;
}

/*
 * Make the index temporary at p: tmp + ext when that name is free or an
 * earlier run's file of ours (so another rank's guard, which knows only tmp,
 * can remove it), else a fresh mkstemp name. fd, or -1 with errno.
 */
static int make_index_tmp(const ss_output_t *o, const char *ext, char *p, size_t size)
{
    snprintf(p, size, "%s%s", o->tmp, ext);
    int fd = ss_output_create_own(p, O_WRONLY);
    if (fd >= 0 || (errno != EEXIST && errno != ENAMETOOLONG))
        return fd;
    if (tmp_name(o->path, p, size) < 0 || (fd = mkstemp(p)) < 0)
        return -1;
    set_default_mode(fd, o->shown);
    return fd;
}

const char *ss_output_index_tmp(ss_output_t *o, const char *ext)
{
    char p[PATH_MAX + 8];
    if (!o || !o->tmp)
        return NULL;
    if (o->idx_tmp) {
        ss_error("internal: %s is indexed twice", o->shown);
        return NULL;
    }
    sigset_t saved; /* created and registered for removal as one step */
    ss_signals_block(&saved);
    int fd = make_index_tmp(o, ext, p, sizeof(p));
    int e = errno;
    if (fd >= 0) {
        close(fd); /* htslib opens it again by name: ours, so it cannot lead elsewhere */
        if ((o->idx_tmp = strdup(p)))
            o->slot[1] = ss_signals_remove_on_exit(p);
        else
            unlink(p);
    }
    ss_signals_restore(&saved);
    if (fd < 0)
        ss_error("%s: cannot create a temporary file for its index: %s; check that its "
                 "directory is writable",
                 o->shown, strerror(e));
    else if (!o->idx_tmp)
        ss_error("out of memory indexing %s", o->shown);
    o->idx_ext = ext;
    return o->idx_tmp;
}

/* Remove the index being built, if any. */
static void drop_index(ss_output_t *o)
{
    if (o->idx_tmp)
        unlink(o->idx_tmp);
}

static void output_free(ss_output_t *o)
{
    free(o->shown);
    free(o->path);
    free(o->tmp);
    free(o->idx_tmp);
    free(o->idx_final);
    free(o);
}

int ss_output_name_index(ss_output_t *o, const char *index_path)
{
    free(o->idx_final);
    if (!(o->idx_final = strdup(index_path))) {
        ss_error("out of memory indexing %s", shown(o));
        return -1;
    }
    return 0;
}

/*
 * Before FILE is replaced: remove every index beside it (FILE + index_exts,
 * and .bai), as they describe the old data. htslib tries FILE.csi before
 * FILE.tbi or FILE.bai, so an old one left there would be used with the new
 * data even when the new index has another suffix. 0, or -1 after ss_error().
 */
static int drop_old_indexes(const ss_output_t *o, char *to, size_t size)
{
    static const char *const old[] = {".tbi", ".csi", ".crai", ".bai"};
    char p[PATH_MAX + 8];
    const char *slash = strrchr(o->path, '/');
    if (o->idx_final) {
        snprintf(to, size, "%s", o->idx_final);
    } else if (strlen(slash ? slash + 1 : o->path) + strlen(o->idx_ext) > NAME_MAX) {
        ss_error("%s: file name too long for the index beside it (%s); nothing was written: "
                 "give -o a name at most %d bytes long",
                 o->shown, o->idx_ext, NAME_MAX - (int)strlen(o->idx_ext));
        return -1;
    } else {
        snprintf(to, size, "%s%s", o->path, o->idx_ext);
    }
    for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++) {
        snprintf(p, sizeof(p), "%s%s", o->path, old[i]);
        if (unlink(p) == 0 || errno == ENOENT || errno == ENAMETOOLONG)
            continue;
        ss_error("%s: cannot remove the old index %s: %s; nothing was written: remove it and "
                 "rerun",
                 o->shown, p, strerror(errno));
        return -1;
    }
    return 0;
}

/*
 * Rename tmp (and its index) into place. 0, or -1 after ss_error(), with
 * nothing of this run under FILE's name.
 *
 * The order keeps data and index from ever being seen mismatched, by readers
 * or by a rerun: first the old indexes go (FILE is the old data, unindexed),
 * then the data (the new data, unindexed), then the index. A kill between two
 * steps leaves a file without an index, which htslib refuses to query with a
 * clear error and samtools index mends; the index first instead would leave a
 * new index beside the old data, which htslib takes as valid (it is not older
 * than the data) and reads at the wrong offsets. --resume keys on the
 * temporary, which stays until the data's rename: before it the rerun
 * resumes, after it there is nothing to resume and the rerun starts afresh.
 */
static int rename_into_place(ss_output_t *o)
{
    int rc = 0;
    char to[PATH_MAX + 8];
    /* no signal between the rename and the handler forgetting tmp: it would unlink nothing,
     * but then report "no output written" while FILE is complete */
    sigset_t saved;
    ss_signals_block(&saved);
    if (o->idx_tmp && drop_old_indexes(o, to, sizeof(to)) < 0) {
        rc = -1;
    } else if (rename(o->tmp, o->path) != 0) {
        ss_error("%s: cannot rename the finished output into place: %s; nothing was written",
                 o->shown, strerror(errno));
        rc = -1;
    } else if (o->idx_tmp && rename(o->idx_tmp, to) != 0) {
        /* a file asked for with its index is not left without it */
        ss_error("%s: cannot rename its index into place as %s: %s; the output is removed too "
                 "(it would be unindexed): rerun",
                 o->shown, to, strerror(errno));
        unlink(o->path);
        rc = -1;
    }
    if (rc < 0) {
        unlink(o->tmp);
        drop_index(o);
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
    if (guarded)
        return -1;
    if (arm_guard(tmp_path, keep) < 0) {
        disarm_removal(guard_slot);
        return -1;
    }
    guarded = 1;
    return 0;
}

void ss_output_unguard(void)
{
    disarm_removal(guard_slot);
    guarded = 0;
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

/*
 * outcheck.c -- every path the run will write, checked before any work:
 * -o and --report (and the index beside a .gz -o) must be creatable where
 * they go, --tmp-dir must be a writable directory, and no output may be the
 * same file as an input, an input's index, the reference or its index, the
 * BED file, or another output. A bad path found only at the end would cost
 * the whole run, and an output over an input would destroy the input.
 *
 * Files are compared by identity (st_dev, st_ino), so a hard link or a
 * symlink to an input is caught too; a file not yet created is identified
 * by its directory's identity and its base name.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ss_internal.h"

typedef struct {
    int exists;
    dev_t dev;
    ino_t ino;
    const char *base; /* missing files only: the name in that directory */
} file_id_t;

/* The directory part of path ("." when none) into buf. */
static void dir_of(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(buf, size, ".");
    else if (slash == path)
        snprintf(buf, size, "/");
    else
        snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* 0 and *id, or -1 when neither the file nor its directory can be stat'ed. */
static int file_id(const char *path, file_id_t *id)
{
    struct stat st;
    char dir[PATH_MAX];
    memset(id, 0, sizeof(*id));
    if (stat(path, &st) == 0) {
        id->exists = 1;
    } else {
        dir_of(path, dir, sizeof(dir));
        if (stat(dir, &st) != 0)
            return -1;
        id->base = base_of(path);
    }
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    return 0;
}

static int same_file(const file_id_t *a, const file_id_t *b)
{
    if (a->exists != b->exists || a->dev != b->dev || a->ino != b->ino)
        return 0;
    return a->exists || strcmp(a->base, b->base) == 0;
}

/*
 * The directory a new (or replaced) regular file goes into: it must exist,
 * be a directory we may create files in, and take the name (and an index name
 * ext_len bytes longer) within NAME_MAX. 0 or -1 after ss_error().
 */
static int check_new_file(const char *path, const char *opt, size_t ext_len)
{
    char dir[PATH_MAX];
    struct stat st;
    dir_of(path, dir, sizeof(dir));
    if (stat(dir, &st) != 0) {
        ss_error("%s: its directory %s: %s; create it or give %s another path", path, dir,
                 strerror(errno), opt);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        ss_error("%s: %s is not a directory; give %s another path", path, dir, opt);
        return -1;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        ss_error("%s: cannot create files in %s: %s; give %s a writable directory", path, dir,
                 strerror(errno), opt);
        return -1;
    }
    if (strlen(base_of(path)) + ext_len > NAME_MAX) {
        ss_error("%s: file name too long (%zu bytes, at most %d%s); give %s a shorter name",
                 path, strlen(base_of(path)), NAME_MAX - (int)ext_len,
                 ext_len ? " for the index beside it" : "", opt);
        return -1;
    }
    return 0;
}

/*
 * An output path (-o, --report): not a directory; a device, FIFO or our own
 * standard output is written in place and needs no directory; a regular file
 * (new, or the target of a symlink) needs check_new_file. ext_len: the
 * length of the index suffix written beside it (0 for none). 0 or -1.
 */
static int check_output(const char *path, const char *opt, size_t ext_len)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno != ENOENT) {
            ss_error("%s: cannot use as %s: %s", path, opt, strerror(errno));
            return -1;
        }
        return check_new_file(path, opt, ext_len);
    }
    if (S_ISDIR(st.st_mode)) {
        ss_error("%s: is a directory; give %s a file name", path, opt);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        if (ext_len) {
            ss_error("%s: a .gz output is indexed, which needs a regular file; give %s a file "
                     "name", path, opt);
            return -1;
        }
        return 0;
    }
    char *real = realpath(path, NULL);
    int rc = real ? check_new_file(real, opt, ext_len) : -1;
    if (!real)
        ss_error("%s: cannot resolve %s's path: %s", path, opt, strerror(errno));
    free(real);
    return rc;
}

static int check_tmp_dir(const char *dir)
{
    struct stat st;
    const char *why = NULL;
    if (stat(dir, &st) != 0)
        why = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "not a directory";
    else if (access(dir, W_OK | X_OK) != 0)
        why = strerror(errno);
    if (!why)
        return 0;
    ss_error("%s: %s; give --tmp-dir a writable directory", dir, why);
    return -1;
}

/* The index beside a .gz -o is renamed into place at the end: no directory may be there. */
static int check_index_names(const char *out)
{
    static const char *const ext[] = {".tbi", ".csi"};
    char p[PATH_MAX + 8];
    struct stat st;
    for (int i = 0; i < 2; i++) {
        snprintf(p, sizeof(p), "%s%s", out, ext[i]);
        if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            ss_error("%s: is a directory, where the index of -o goes; remove it or give -o "
                     "another name", p);
            return -1;
        }
    }
    return 0;
}

/* Is output (id) the file at path? Then say so: what names the input side. */
static int clashes(const char *out, const char *opt, const file_id_t *id, const char *path,
                   const char *what)
{
    file_id_t in;
    if (!path || file_id(path, &in) < 0 || !in.exists || !same_file(id, &in))
        return 0;
    if (strcmp(out, path) == 0)
        ss_error("%s: %s names %s, which the run reads; give %s another file", out, opt, what,
                 opt);
    else
        ss_error("%s: %s is the same file as %s (%s), which the run reads; give %s another "
                 "file", out, opt, path, what, opt);
    return 1;
}

/* path with its extension (after the last '.' of the base name) replaced by ext. */
static void swap_ext(const char *path, const char *ext, char *buf, size_t size)
{
    const char *dot = strrchr(base_of(path), '.');
    int keep = dot ? (int)(dot - path) : (int)strlen(path);
    snprintf(buf, size, "%.*s%s", keep, path, ext);
}

/* Does output `out` name an input, an index htslib may load, the reference or the BED? */
static int clashes_input(const ss_common_opts_t *o, const char *out, const char *opt)
{
    static const char *const idx_ext[] = {".bai", ".csi", ".crai"};
    char p[PATH_MAX + 8];
    file_id_t id;
    if (file_id(out, &id) < 0)
        return 0; /* its directory is missing: check_output says so */
    for (int i = 0; i < o->n_inputs; i++) {
        const char *in = o->inputs[i];
        if (clashes(out, opt, &id, in, "an input"))
            return 1;
        if (o->index_paths && clashes(out, opt, &id, o->index_paths[i], "an input's index"))
            return 1;
        for (int k = 0; k < 3; k++) {
            snprintf(p, sizeof(p), "%s%s", in, idx_ext[k]);
            if (clashes(out, opt, &id, p, "an input's index"))
                return 1;
            swap_ext(in, idx_ext[k], p, sizeof(p));
            if (clashes(out, opt, &id, p, "an input's index"))
                return 1;
        }
    }
    if (o->reference) {
        if (clashes(out, opt, &id, o->reference, "the reference"))
            return 1;
        snprintf(p, sizeof(p), "%s.fai", o->reference);
        if (clashes(out, opt, &id, p, "the reference's index"))
            return 1;
        snprintf(p, sizeof(p), "%s.gzi", o->reference);
        if (clashes(out, opt, &id, p, "the reference's index"))
            return 1;
    }
    return clashes(out, opt, &id, o->bed, "the -l file");
}

/* --report and -o must be two files (the second rename would replace the first). */
static int same_outputs(const char *out, const char *report)
{
    file_id_t a, b;
    if (file_id(out, &a) < 0 || file_id(report, &b) < 0 || !same_file(&a, &b))
        return 0;
    ss_error("%s: --report names the same file as -o; give the report another name", report);
    return 1;
}

int ss_outputs_check(const ss_common_opts_t *o, int indexed)
{
    const char *out = o->output && strcmp(o->output, "-") != 0 ? o->output : NULL;
    /* indexed: the index suffix's length (.tbi, .csi, .crai) */
    if (out && (check_output(out, "-o", (size_t)indexed) < 0 || clashes_input(o, out, "-o") ||
                (indexed && check_index_names(out) < 0)))
        return -1;
    if (o->report && (check_output(o->report, "--report", 0) < 0 ||
                      clashes_input(o, o->report, "--report") ||
                      (out && same_outputs(out, o->report))))
        return -1;
    if (o->tmp_dir && check_tmp_dir(o->tmp_dir) < 0)
        return -1;
    return 0;
}

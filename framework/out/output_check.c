/*
 * output_check.c -- every path the run will write, checked before any work:
 * -o and --report (and the index beside a .gz -o) must be creatable where
 * they go, --tmp-dir must be a writable directory, and no file the run
 * writes (-o and its index, --report, the side streams and the kernel's
 * files: ss_run_writes) may be a file it reads (inputs, indexes, the
 * reference, BED, lists, the kernel's VCFs and read-group files:
 * ss_run_reads) or another file it writes. A bad path found only at the end
 * would cost the whole run, and an output over an input would destroy it.
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

#include "../plan/plan.h"
#include "output_check.h"
#include "output_file.h"

typedef struct {
    int exists;
    dev_t dev;
    ino_t ino;
    const char *base; /* missing files only: the name in that directory */
} file_id_t;

void ss_out_dir_of(const char *path, char *buf, size_t size)
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
        ss_out_dir_of(path, dir, sizeof(dir));
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
    ss_out_dir_of(path, dir, sizeof(dir));
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
        ss_error("%s: file name too long (%zu bytes, at most %d%s); give %s a shorter name", path,
                 strlen(base_of(path)), NAME_MAX - (int)ext_len,
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
                     "name",
                     path, opt);
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
                     "another name",
                     p);
            return -1;
        }
    }
    return 0;
}

/* Each file's identity; ok[i] is 0 where neither it nor its directory can be stat'ed. */
static int identify(const ss_run_files_t *l, file_id_t **ids, char **ok)
{
    *ids = calloc((size_t)(l->n ? l->n : 1), sizeof(**ids));
    *ok = calloc((size_t)(l->n ? l->n : 1), 1);
    if (!*ids || !*ok) {
        ss_error("out of memory checking the output paths");
        return -1;
    }
    for (int i = 0; i < l->n; i++)
        (*ok)[i] = file_id(l->f[i].path, &(*ids)[i]) == 0;
    return 0;
}

/* Is written file w one the run reads? Then say which, with both roles. 1 or 0. */
static int clashes_read(const ss_run_file_t *w, const file_id_t *wid, const ss_run_files_t *rd,
                        const file_id_t *rid, const char *rok)
{
    for (int i = 0; i < rd->n; i++) {
        const ss_run_file_t *r = &rd->f[i];
        if (!rok[i] || !rid[i].exists || !same_file(wid, &rid[i]))
            continue;
        if (strcmp(w->path, r->path) == 0)
            ss_error("%s: %s names %s, which the run reads; give %s another name", w->path, w->role,
                     r->role, w->key);
        else
            ss_error("%s: %s is the same file as %s (%s), which the run reads; give %s another "
                     "name",
                     w->path, w->role, r->path, r->role, w->key);
        return 1;
    }
    return 0;
}

/* Is written file j one written before it in the list? Then say which. 1 or 0. */
static int clashes_written(const ss_run_files_t *wr, const file_id_t *wid, const char *wok, int j)
{
    const ss_run_file_t *w = &wr->f[j];
    for (int i = 0; i < j; i++) {
        if (!wok[i] || !same_file(&wid[j], &wid[i]))
            continue;
        const ss_run_file_t *o = &wr->f[i];
        if (strcmp(w->path, o->path) == 0)
            ss_error("%s: %s names the same file as %s; give %s another name", w->path, w->role,
                     o->role, w->key);
        else
            ss_error("%s: %s names the same file as %s (%s); give %s another name", w->path,
                     w->role, o->role, o->path, w->key);
        return 1;
    }
    return 0;
}

/*
 * No file the run writes may be one it reads (by name, hard link or
 * symlink), or another file it writes (the second rename would replace the
 * first). 0, or -1 after ss_error().
 */
static int check_clashes(const ss_common_opts_t *o, const ss_out_spec_t *spec)
{
    ss_run_files_t rd, wr;
    file_id_t *rid = NULL, *wid = NULL;
    char *rok = NULL, *wok = NULL;
    int rc = -1;
    if (ss_run_reads(o, &rd) < 0)
        return -1;
    if (ss_run_writes(o, spec, &wr) < 0)
        goto out_rd;
    if (identify(&rd, &rid, &rok) < 0 || identify(&wr, &wid, &wok) < 0)
        goto out;
    rc = 0;
    for (int j = 0; rc == 0 && j < wr.n; j++)
        if (wok[j] &&
            (clashes_read(&wr.f[j], &wid[j], &rd, rid, rok) || clashes_written(&wr, wid, wok, j)))
            rc = -1;
out:
    free(rid), free(rok), free(wid), free(wok);
    ss_run_files_free(&wr);
out_rd:
    ss_run_files_free(&rd);
    return rc;
}

int ss_outputs_check(const ss_common_opts_t *o, const ss_out_spec_t *spec)
{
    const char *out = o->output && strcmp(o->output, "-") != 0 && !spec->no_main ? o->output : NULL;
    /* the index suffix's length (.tbi, .csi, .crai), when an index goes beside -o */
    size_t ext = out ? (size_t)ss_output_index_ext_len(spec, out) : 0;
    if (out && (check_output(out, "-o", ext) < 0 || (ext && check_index_names(out) < 0)))
        return -1;
    if (o->report && check_output(o->report, "--report", 0) < 0)
        return -1;
    if (check_clashes(o, spec) < 0)
        return -1;
    if (o->tmp_dir && check_tmp_dir(o->tmp_dir) < 0)
        return -1;
    return 0;
}

/*
 * resume.c -- the run's resume state (resume.h): what identifies a run,
 * which shards of an interrupted run's temporary output can be trusted, and
 * the records this run appends as it writes shards.
 *
 * Why reuse is safe: a shard's bytes depend only on the inputs, the options
 * and the plan (contract 1), all of which the identity pins down; a record is
 * appended only after its shard's bytes were synced; and on resume each
 * record's bytes are read back and must match its CRC, and its offset must
 * agree with its neighbours', before the shard is kept. The others are
 * recomputed; being deterministic they come out the same size, so the kept
 * shards' offsets stay right (the writers check that as they pass them).
 *
 * Ownership: rank 0 (or the one process) reads and verifies, writes the new
 * manifest and removes the files at the end; every rank appends the records
 * of the shards it wrote to its own file, so no two processes write one file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../cli/cli.h"
#include "../comm/comm.h"
#include "../plan/plan.h"
#include "resume.h"

struct ss_resume_s {
    int n;                /* shards in the plan */
    unsigned char *kept;  /* [n] 1: the shard's bytes are in the file already */
    ss_resume_rec_t *rec; /* [n] the kept shards' records */
    int n_kept;
    uint64_t nonce;       /* this run's id: record files of other runs are ignored */
    char man[PATH_MAX];   /* .BASE.resume */
    ss_resume_log_t *log; /* this rank's record file */
    int data_fd;          /* a descriptor of our own for syncing (ranks > 0), or -1 */
};

int ss_resume_check_opts(const ss_common_opts_t *o, int stream_input)
{
    struct stat st;
    if (!o->resume)
        return 0;
    if (stream_input) {
        ss_error("--resume: standard input cannot be read again; give the BAM/CRAM file");
        return -1;
    }
    if (!o->output || strcmp(o->output, "-") == 0) {
        ss_error("--resume needs -o FILE: output to standard output cannot be resumed");
        return -1;
    }
    if (stat(o->output, &st) == 0 && !S_ISREG(st.st_mode)) {
        ss_error("%s: --resume needs -o FILE to name a regular file, not a FIFO or device",
                 o->output);
        return -1;
    }
    return 0;
}

/* .BASE.resume from .BASE.tmp.seqshard. */
static void manifest_path(const char *tmp, char *buf, size_t size)
{
    size_t l = strlen(tmp), s = strlen(SS_OUTPUT_TMP_FIXED);
    snprintf(buf, size, "%.*s.resume", (int)(l - s), tmp);
}

/* ---- the identity ---- */

static uint64_t fnv64(uint64_t h, const void *p, size_t len)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < len; i++)
        h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

/*
 * Options that change how the work runs but not one output byte (the @PG CL
 * leaves them out too), and -o, which the "output" line covers: they may
 * differ on resume. --shard-size does change the bytes of compressed output,
 * but the plan line catches that with a clearer message.
 */
static int run_only(const char *a, int *takes_value)
{
    if (ss_opt_run_word(a, takes_value))
        return 1;
    if (strncmp(a, "--output", 8) == 0 && (a[8] == '\0' || a[8] == '=')) {
        *takes_value = a[8] == '\0';
        return 1;
    }
    if (a[0] == '-' && a[1] == 'o') {
        *takes_value = a[2] == '\0';
        return 1;
    }
    return 0;
}

/* "options ARGS": the command line as given, but for run_only's, one line. */
static int add_options(kstring_t *ks)
{
    int argc;
    char **argv = ss_cli_argv(&argc);
    int ok = kputs("options", ks) >= 0;
    for (int i = 1; ok && i < argc; i++) { /* not argv[0]: the program's path may differ */
        int takes = 0;
        if (i > 1 && run_only(argv[i], &takes)) {
            i += takes;
            continue;
        }
        ok = kputc(' ', ks) >= 0;
        for (const char *c = argv[i]; ok && *c; c++)
            ok = kputc(*c == '\n' ? ' ' : *c, ks) >= 0;
    }
    return ok && kputc('\n', ks) >= 0 ? 0 : -1;
}

/*
 * "KEY SIZE MTIME PATH" for a file that exists, nothing for one that does not;
 * a kernel's file ("file") ends with a tab and its role, for the message.
 */
static int add_file(kstring_t *ks, const ss_run_file_t *f)
{
    struct stat st;
    if (stat(f->path, &st) != 0)
        return 0;
    if (ksprintf(ks, "%s %lld %lld.%09ld ", f->key, (long long)st.st_size,
                 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec) < 0)
        return -1;
    for (const char *c = f->path; *c; c++)
        if (kputc(*c == '\n' || *c == '\t' ? ' ' : *c, ks) < 0)
            return -1;
    if (!strcmp(f->key, "file") && (kputc('\t', ks) < 0 || kputs(f->role, ks) < 0))
        return -1;
    return kputc('\n', ks) < 0 ? -1 : 0;
}

/* Every file the run reads (ss_run_reads): inputs, indexes, reference, BED, the kernel's. */
static int add_inputs(kstring_t *ks, const ss_common_opts_t *o)
{
    ss_run_files_t l;
    if (ss_run_reads(o, &l) < 0)
        return -2; /* said why */
    int r = 0;
    for (int i = 0; r == 0 && i < l.n; i++)
        r = add_file(ks, &l.f[i]);
    ss_run_files_free(&l);
    return r;
}

/*
 * "output PATH": the temporary output with its directory resolved, so that
 * one file named two ways (relative, absolute, through a symlinked
 * directory) is one output.
 */
static int add_output(kstring_t *ks, const char *tmp)
{
    const char *slash = strrchr(tmp, '/');
    char *dir = slash ? strndup(tmp, slash == tmp ? 1 : (size_t)(slash - tmp)) : strdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    int r = real ? ksprintf(ks, "output %s%s%s\n", real, strcmp(real, "/") ? "/" : "",
                            slash ? slash + 1 : tmp)
                 : ksprintf(ks, "output %s\n", tmp);
    free(real);
    free(dir);
    return r < 0 ? -1 : 0;
}

/* The plan's shape (what each shard covers) and the output header: hashed. */
static int add_plan(kstring_t *ks, const ss_resume_args_t *a)
{
    uint64_t h = FNV_INIT;
    for (int i = 0; i < a->n_shards; i++) {
        int64_t v[3] = {a->shards[i].tid, a->shards[i].beg, a->shards[i].end};
        h = fnv64(h, v, sizeof(v));
    }
    uint64_t hh = fnv64(FNV_INIT, a->header ? a->header : "", a->header_len);
    return ksprintf(ks, "plan %d %016" PRIx64 "\nheader %zu %016" PRIx64 "\n", a->n_shards, h,
                    a->header_len, hh) < 0
               ? -1
               : 0;
}

/* The identity text: what must be equal for an earlier run's shards to be reused. */
static char *identity(const ss_resume_args_t *a, const char *tmp)
{
    kstring_t ks = KS_INITIALIZE;
    int r = ksprintf(&ks, "kernel %s\n", a->kernel) < 0 ? -1 : 0;
    r = r ? r : add_output(&ks, tmp);
    r = r ? r : add_options(&ks);
    r = r ? r : add_plan(&ks, a);
    r = r ? r : add_inputs(&ks, a->opts);
    if (r < 0) {
        free(ks.s);
        if (r == -1)
            ss_error("out of memory describing the run for --resume");
        return NULL;
    }
    return ks_release(&ks);
}

/* Identity lines that describe a file ("KEY SIZE MTIME PATH", add_file). */
static int is_file_key(const char *key)
{
    static const char *const keys[] = {"input", "index", "reference", "bed", "file", NULL};
    for (int i = 0; keys[i]; i++)
        if (!strcmp(key, keys[i]))
            return 1;
    return 0;
}

/* Why an earlier run's shards cannot be reused, in words, from the key of the line that differs. */
static const char *why_changed(const ss_resume_diff_t *d)
{
    if (is_file_key(d->key))
        return "inputs changed";
    if (!strcmp(d->key, "options") || !strcmp(d->key, "kernel"))
        return "options changed";
    if (!strcmp(d->key, "plan"))
        return "the shard plan changed (--shard-size, the regions, -l or an index differ)";
    if (!strcmp(d->key, "header"))
        return "the output header changed";
    if (!strcmp(d->key, "output"))
        return "the manifest belongs to another output";
    return "the manifest does not match this run";
}

/* A file line's PATH (after KEY SIZE MTIME, up to the role's tab) within its n bytes. */
static const char *line_path(const char *line, size_t n, size_t *len)
{
    const char *p = line;
    for (int f = 0; f < 3 && p; f++)
        if ((p = memchr(p, ' ', n - (size_t)(p - line))))
            p++;
    if (!p)
        return NULL;
    *len = strcspn(p, "\t\n");
    return p;
}

/* Does identity text list a file line for path (of any size or time)? */
static int lists_path(const char *text, const char *path, size_t len)
{
    for (const char *l = text; l && *l;) {
        const char *end = strchr(l, '\n');
        size_t pl, n = end ? (size_t)(end - l) : strlen(l);
        const char *p = line_path(l, n, &pl);
        if (p && pl == len && !memcmp(p, path, len))
            return 1;
        l = end ? end + 1 : NULL;
    }
    return 0;
}

/*
 * The file line that names what changed: the earlier run's, unless that file
 * is still listed now (then this run lists a new file before it).
 */
static const char *changed_line(const ss_resume_diff_t *d, const char *now_text)
{
    size_t len;
    const char *p = *d->was ? line_path(d->was, strlen(d->was), &len) : NULL;
    if (!*d->now || !p || !lists_path(now_text, p, len))
        return *d->was ? d->was : d->now;
    size_t nl;
    const char *np = line_path(d->now, strlen(d->now), &nl);
    return np && (nl != len || memcmp(np, p, len)) ? d->now : d->was;
}

/* Refuse with one line that says what changed and what to do. */
static void refuse(const char *shown, const ss_resume_diff_t *d, const char *now_text)
{
    const char *line = *d->was ? d->was : d->now;
    const char *sp = strchr(line, ' ');
    size_t len;
    const char *path = NULL;
    if (is_file_key(d->key)) {
        line = changed_line(d, now_text);
        path = line_path(line, strlen(line), &len);
    }
    if (path) {
        /* "KEY SIZE MTIME PATH[\tROLE]": say which file, and that it was touched */
        const char *role = path[len] == '\t' ? path + len + 1 : NULL;
        int kl = (int)strcspn(line, " ");
        ss_error("%s: cannot resume: inputs changed (%.*s %.*s: size or modification time "
                 "differs, or it is new or gone); rerun without --resume to start again",
                 shown, role ? (int)strlen(role) : kl, role ? role : line, (int)len, path);
    } else if (!strcmp(d->key, "options")) {
        ss_error("%s: cannot resume: options changed (was '%s', now '%s'); rerun without "
                 "--resume to start again",
                 shown, *d->was ? d->was + 8 : "", *d->now ? d->now + 8 : "");
    } else {
        ss_error("%s: cannot resume: %s (was '%s'); rerun without --resume to start again", shown,
                 why_changed(d), sp ? sp + 1 : line);
    }
}

/* ---- verifying what an earlier run wrote ---- */

/* crc32 of len bytes of fd at off; 0, or -1 when they are not all there. */
static int crc_at(int fd, uint64_t off, uint64_t len, char *buf, size_t cap, uint32_t *crc)
{
    uint32_t c = 0;
    while (len > 0) {
        size_t want = len < cap ? (size_t)len : cap;
        ssize_t r = pread(fd, buf, want, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c = ss_resume_crc32(c, buf, (size_t)r);
        off += (uint64_t)r, len -= (uint64_t)r;
    }
    *crc = c;
    return 0;
}

/* Keep rec if its shard is new here, within the file and its bytes match its CRC. */
static void try_keep(ss_resume_t *r, const ss_resume_rec_t *rec, int fd, uint64_t file_len,
                     uint64_t header_len, char *buf, size_t cap)
{
    uint32_t crc;
    if (rec->idx >= (uint32_t)r->n || r->kept[rec->idx] || rec->off < header_len ||
        rec->off > file_len || rec->size > file_len - rec->off)
        return;
    if (crc_at(fd, rec->off, rec->size, buf, cap, &crc) < 0 || crc != rec->crc)
        return; /* damaged, or never reached the disk: recomputed */
    r->kept[rec->idx] = 1;
    r->rec[rec->idx] = *rec;
}

/*
 * Offsets must fit together: shard 0 right after the header, neighbours
 * back to back, and no kept shard overlapping the one before it. A kept
 * shard that does not fit is recomputed instead.
 */
static void check_layout(ss_resume_t *r, uint64_t header_len)
{
    uint64_t end = header_len;
    int prev = -1;
    for (int i = 0; i < r->n; i++) {
        if (!r->kept[i])
            continue;
        const ss_resume_rec_t *c = &r->rec[i];
        int adjacent = prev == i - 1;
        if (adjacent ? c->off != end : c->off < end) {
            r->kept[i] = 0;
            continue;
        }
        end = c->off + c->size;
        prev = i;
    }
    r->n_kept = 0;
    for (int i = 0; i < r->n; i++)
        r->n_kept += r->kept[i];
}

/* Call f(dir, name) for every rank's record file of man (".BASE.resume.rankN"). */
static void each_rank_file(const char *man, void (*f)(void *, const char *), void *ctx)
{
    char dir[PATH_MAX], path[PATH_MAX * 2];
    const char *slash = strrchr(man, '/');
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - man) : 1, slash ? man : ".");
    const char *base = slash ? slash + 1 : man;
    size_t bl = strlen(base);
    DIR *d = opendir(*dir ? dir : "/");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, base, bl) != 0 || strncmp(de->d_name + bl, ".rank", 5) != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", *dir ? dir : "", de->d_name);
        f(ctx, path);
    }
    if (d)
        closedir(d);
}

typedef struct {
    ss_resume_t *r;
    uint64_t nonce;
    int fd;
    uint64_t file_len, header_len;
    char *buf;
    size_t cap;
} verify_t;

static void verify_records(verify_t *v, const ss_resume_rec_t *recs, int n)
{
    for (int i = 0; i < n; i++)
        try_keep(v->r, &recs[i], v->fd, v->file_len, v->header_len, v->buf, v->cap);
}

/* A rank's record file of the same run: verify its records too. */
static void verify_rank_file(void *ctx, const char *path)
{
    verify_t *v = ctx;
    uint64_t nonce;
    char *id;
    ss_resume_rec_t *recs;
    int n;
    if (ss_resume_read(path, &nonce, &id, &recs, &n) == 0 && nonce == v->nonce)
        verify_records(v, recs, n);
    free(id);
    free(recs);
}

static void unlink_cb(void *ctx, const char *path)
{
    (void)ctx;
    unlink(path);
}

/* ---- the run's state ---- */

static ss_resume_t *state_new(int n)
{
    ss_resume_t *r = calloc(1, sizeof(*r));
    if (r && (!(r->kept = calloc((size_t)(n > 0 ? n : 1), 1)) ||
              !(r->rec = calloc((size_t)(n > 0 ? n : 1), sizeof(*r->rec))))) {
        free(r->kept);
        free(r);
        r = NULL;
    }
    if (!r) {
        ss_error("out of memory for the resume state of %d shards", n);
        return NULL;
    }
    r->n = n;
    r->data_fd = -1;
    return r;
}

static uint64_t new_nonce(void)
{
    uint64_t v;
    if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
        return v;
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return ((uint64_t)t.tv_sec << 32) ^ (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 16);
}

/*
 * --resume: read the manifest; refuse (-1) when it is of another run; else
 * keep every shard whose record verifies, from it and from each rank's
 * record file of the same run. 0, also when there is nothing to resume.
 */
static int load_earlier(ss_resume_t *r, const ss_resume_args_t *a, const char *id, int fd)
{
    uint64_t nonce;
    char *was = NULL;
    ss_resume_rec_t *recs = NULL;
    int n = 0, rc = ss_resume_read(r->man, &nonce, &was, &recs, &n);
    const char *shown = a->opts->output;
    if (rc < 0) {
        ss_warn("%s: --resume: %s; starting from scratch", shown,
                rc == -1 ? "no earlier run of this command to resume"
                         : "the resume manifest beside it is damaged");
        return 0;
    }
    ss_resume_diff_t d;
    if (ss_resume_identity_diff(was, id, &d)) {
        refuse(shown, &d, id);
        free(was), free(recs);
        return -1;
    }
    struct stat st;
    verify_t v = {r, nonce, fd, 0, a->header_len, NULL, (size_t)8 << 20};
    if (fstat(fd, &st) == 0 && (v.buf = malloc(v.cap))) {
        v.file_len = (uint64_t)st.st_size;
        verify_records(&v, recs, n);
        each_rank_file(r->man, verify_rank_file, &v);
        check_layout(r, a->header_len);
    }
    free(v.buf), free(was), free(recs);
    return 0;
}

/* Without --resume: an earlier run's files are overwritten; say so. */
static void warn_overwrite(const ss_resume_t *r, const char *shown, int fd)
{
    struct stat st;
    if (access(r->man, F_OK) == 0 || (fstat(fd, &st) == 0 && st.st_size > 0))
        ss_warn("%s: an interrupted run's partial output is beside it; starting from scratch "
                "(rerun with --resume to reuse it)",
                shown);
}

/* The kept records, in shard order, for the new manifest. */
static ss_resume_rec_t *kept_list(const ss_resume_t *r)
{
    ss_resume_rec_t *l = malloc((size_t)(r->n_kept > 0 ? r->n_kept : 1) * sizeof(*l));
    for (int i = 0, k = 0; l && i < r->n; i++)
        if (r->kept[i])
            l[k++] = r->rec[i];
    return l;
}

ss_resume_t *ss_resume_start(const ss_resume_args_t *a, ss_output_t *out, int *refused)
{
    *refused = 0;
    const char *tmp = ss_output_tmp_path(out);
    int fd = ss_output_fd(out);
    ss_resume_t *r = state_new(a->n_shards);
    char *id = r ? identity(a, tmp) : NULL;
    if (!id)
        goto fail;
    manifest_path(tmp, r->man, sizeof(r->man));
    if (a->want ? load_earlier(r, a, id, fd) < 0 : (warn_overwrite(r, a->opts->output, fd), 0)) {
        *refused = 1;
        goto fail;
    }
    if (r->n_kept == 0 && ftruncate(fd, 0) != 0) {
        ss_error("%s: cannot empty the temporary output: %s", a->opts->output, strerror(errno));
        goto fail;
    }
    /* a new run id: record files of earlier runs no longer count, and go */
    r->nonce = new_nonce();
    each_rank_file(r->man, unlink_cb, NULL);
    ss_resume_rec_t *init = kept_list(r);
    if (!init)
        ss_error("out of memory writing the resume manifest");
    else
        r->log = ss_resume_log_create(r->man, r->nonce, id, fd, init, r->n_kept);
    free(init);
    if (!r->log)
        goto fail;
    free(id);
    return r;
fail:
    free(id);
    ss_resume_end(r, 0);
    return NULL;
}

/*
 * Rank 0's kept shards to every rank, in one sum (the others add zeros):
 * v[0] the run id, then per shard offset + 1 (0: not kept) and size.
 */
static int share_kept(ss_resume_t *r, int n)
{
    size_t len = 1 + 2 * (size_t)n;
    uint64_t *v = calloc(len, sizeof(*v));
    if (!v) {
        ss_error("rank %d: out of memory sharing the kept shards", ss_comm_rank());
        return -1;
    }
    if (ss_comm_rank() == 0) {
        v[0] = r->nonce;
        for (int i = 0; i < n; i++)
            if (r->kept[i])
                v[1 + 2 * i] = r->rec[i].off + 1, v[2 + 2 * i] = r->rec[i].size;
    }
    int rc = ss_comm_sum_u64(v, len);
    if (rc == 0 && ss_comm_rank() != 0) {
        r->nonce = v[0];
        for (int i = 0; i < n; i++)
            if (v[1 + 2 * i]) {
                r->kept[i] = 1, r->n_kept++;
                r->rec[i].idx = (uint32_t)i;
                r->rec[i].off = v[1 + 2 * i] - 1, r->rec[i].size = v[2 + 2 * i];
            }
    }
    free(v);
    return rc;
}

/* A rank other than 0: its own record file, and a descriptor to sync the output with. */
static int open_rank_file(ss_resume_t *r, const char *tmp)
{
    char path[PATH_MAX + 32];
    manifest_path(tmp, r->man, sizeof(r->man));
    snprintf(path, sizeof(path), "%s.rank%d", r->man, ss_comm_rank());
    if ((r->data_fd = ss_output_open_own(tmp, O_WRONLY)) < 0) {
        ss_output_own_error(tmp, tmp, errno); /* rank 0 made it: checked as it checked it */
        return -1;
    }
    r->log = ss_resume_log_create(path, r->nonce, NULL, r->data_fd, NULL, 0);
    return r->log ? 0 : -1;
}

int ss_resume_share(ss_resume_t **rp, int n_shards, const char *tmp)
{
    int rank = ss_comm_rank(), bad = 0;
    if (rank != 0 && !(*rp = state_new(n_shards)))
        bad = 1;
    /* rank 0 without a state cannot happen: ss_resume_start failing fails the merge's open */
    if (ss_comm_max_int(bad) != 0 || share_kept(*rp, n_shards) < 0)
        return -1;
    bad = rank != 0 && open_rank_file(*rp, tmp) < 0;
    return ss_comm_max_int(bad) != 0 ? -1 : 0;
}

int ss_resume_kept(const ss_resume_t *r, int idx)
{
    return r && idx >= 0 && idx < r->n && r->kept[idx];
}

int ss_resume_kept_at(const ss_resume_t *r, int idx, uint64_t *off, uint64_t *size)
{
    if (!ss_resume_kept(r, idx))
        return -1;
    *off = r->rec[idx].off;
    *size = r->rec[idx].size;
    return 0;
}

const unsigned char *ss_resume_kept_map(const ss_resume_t *r)
{
    return r && r->n_kept ? r->kept : NULL;
}

int ss_resume_n_kept(const ss_resume_t *r)
{
    return r ? r->n_kept : 0;
}

void ss_resume_kept_stats(const ss_resume_t *r, ss_worker_stats_t *s)
{
    memset(s, 0, sizeof(*s));
    for (int i = 0; r && i < r->n; i++) {
        if (!r->kept[i])
            continue;
        const ss_resume_rec_t *c = &r->rec[i];
        s->reads += c->reads, s->bases += c->bases;
        for (int j = 0; j < SS_KERNEL_COUNTERS; j++)
            s->counts[j] += c->counts[j];
        for (int j = 0; j < SS_SUMMARY_N; j++)
            s->summary[j] += c->summary[j];
    }
}

int ss_resume_note(ss_resume_t *r, const ss_resume_rec_t *rec)
{
    return r && r->log ? ss_resume_log_add(r->log, rec) : 0;
}

void ss_resume_quiesce(ss_resume_t *r)
{
    if (r) {
        ss_resume_log_close(r->log);
        r->log = NULL;
    }
}

void ss_resume_end(ss_resume_t *r, int remove)
{
    if (!r)
        return;
    ss_resume_log_close(r->log);
    if (r->data_fd >= 0)
        close(r->data_fd);
    if (remove && ss_comm_rank() == 0 && *r->man) {
        char p[PATH_MAX + 8];
        snprintf(p, sizeof(p), "%s.new", r->man);
        unlink(p);
        each_rank_file(r->man, unlink_cb, NULL);
        unlink(r->man);
    }
    free(r->kept);
    free(r->rec);
    free(r);
}

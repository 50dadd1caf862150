/*
 * job.c -- open and check every input once, on the main thread, before any
 * worker starts: so a bad input fails in a second with one clear line, not
 * in the middle of a run. The first input stays open for planning.
 *
 * What it loads, the workers share read-only (ss_io_inputs_t): the first
 * header, every BAM's index, each input's format, and the reference every
 * CRAM handle uses (one handle kept open for that), so a worker's cost per
 * input is its data handle alone.
 */
#include <errno.h>
#include <htslib/cram.h>
#include <htslib/faidx.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../io/ss_budget.h"
#include "../../io/ss_diag.h"
#include "../comm/comm.h"
#include "../step/steps.h"
#include "plan.h"

/*
 * htslib 1.16 (cram/cram_io.c, cram_populate_ref) looks a CRAM's reference up
 * by MD5 along REF_PATH, and when REF_PATH is unset OR EMPTY it uses the EBI
 * server (https://www.ebi.ac.uk/ena/cram/md5/%s), so an empty value does not
 * stop network fetches. A non-empty REF_PATH without http:/https:/ftp:/URL=
 * elements is searched as local directories only (open_path_mfile/find_path in
 * cram/open_trace_file.c; htslib also appends "./", which is local), and with
 * REF_CACHE unset nothing is cached. No directory can exist under /dev/null,
 * so this value finds nothing and never fetches: a CRAM whose reference is
 * missing then fails with a local error instead of downloading.
 */
#define SS_REF_PATH_LOCAL_ONLY "/dev/null/seqshard-no-network-reference-fetch/%s"

struct ss_job_s {
    const ss_common_opts_t *opts; /* borrowed; outlives the job */
    const ss_kernel_t *kernel;    /* borrowed; outlives the job */
    ss_io_inputs_t inputs;        /* paths borrowed from opts */
    samFile *fp;                  /* first input, kept for planning */
    sam_hdr_t *h;
    hts_idx_t *idx;
    hts_idx_t **idxs;       /* [n]: each BAM's index, shared by the readers */
    unsigned char *is_cram; /* [n] */
    samFile *cram_anchor;   /* a CRAM handle that keeps the shared reference alive */
    int64_t index_bytes;    /* index file bytes of idxs (SHARED_INDEX_BYTES) */
    ss_bed_t *bed;
    ss_interval_t *regions; /* the regions in the order given, parsed */
    int n_regions, m_regions;
    int user_ref_env;           /* REF_PATH or REF_CACHE set by the user */
    uint64_t *tally_want;       /* what the BAM inputs' indexes count, as the run's tally
                                 * (ss_io_tally_expect); NULL until the first BAM */
    ss_step_reach_t step_reach; /* the steps' reach, summed (ss_job_steps_prepare) */
};

/*
 * BAM indexes the job keeps for the workers, in bytes of index file (about
 * what one takes in memory): all of them for small genomes (a BAI of the
 * benchmark's E. coli is 15 kB, 1000 of them 15 MB), the first few of a
 * human cohort (8-9 MB each). Past it a worker loads an input's index itself
 * when it opens the input, as before they were shared.
 */
#define SHARED_INDEX_BYTES ((int64_t)256 << 20)

/*
 * htslib 1.16 fills some process-wide tables on first use, without a lock:
 * probaln_glocal (BAQ, probaln.c) sets g_qual2prob[0] before the rest of the
 * table, so a second thread arriving meanwhile reads zeros and computes other
 * base qualities (seen as rare, timing-dependent pileup differences under
 * load). Fill it here, on the main thread, before any worker starts.
 */
static void warm_htslib_tables(void)
{
    uint8_t ref[4] = {0, 1, 2, 3}, query[4] = {0, 1, 2, 3}, qual[4] = {30, 30, 30, 30};
    uint8_t q[4];
    int state[4];
    probaln_par_t par = {0.001f, 0.1f, 10};
    (void)probaln_glocal(ref, 4, query, 4, qual, &par, state, q); /* only the side effect */
}

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

static int is_url(const char *s)
{
    return strstr(s, "://") != NULL;
}

/* A local path exists, is a regular file (or FIFO) and is readable. */
static int check_readable(const char *path, const char *what)
{
    struct stat st;
    if (is_url(path))
        return 0;
    if (stat(path, &st) != 0) {
        ss_error("%s: %s; check the %s path", path, strerror(errno), what);
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        ss_error("%s: is a directory; give the %s file itself", path, what);
        return -1;
    }
    if (access(path, R_OK) != 0) {
        ss_error("%s: cannot read: %s; check its permissions", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int check_sorted(const char *path, sam_hdr_t *h)
{
    kstring_t so = KS_INITIALIZE;
    int r = sam_hdr_find_tag_hd(h, "SO", &so);
    if (r == 0 && strcmp(so.s, "coordinate") != 0) {
        ss_error("%s: is not coordinate-sorted (@HD SO:%s); run samtools sort", path, so.s);
        free(so.s);
        return -1;
    }
    free(so.s);
    if (r < -1) {
        ss_error("%s: cannot parse the header's @HD line; check it with samtools view -H", path);
        return -1;
    }
    return 0;
}

/* Every input must name the same contigs, in the same order, with the same lengths. */
static int check_contigs(const char *path, sam_hdr_t *h, const char *first, sam_hdr_t *h0)
{
    int n = sam_hdr_nref(h), n0 = sam_hdr_nref(h0);
    for (int t = 0; t < n || t < n0; t++) {
        const char *a = t < n0 ? sam_hdr_tid2name(h0, t) : NULL;
        const char *b = t < n ? sam_hdr_tid2name(h, t) : NULL;
        if (!a || !b || strcmp(a, b) != 0 || sam_hdr_tid2len(h0, t) != sam_hdr_tid2len(h, t)) {
            /* names alone can be equal: the lengths say which reference each was aligned to */
            ss_error("%s: its @SQ contigs differ from %s's (contig #%d: %s, %lld bp, here; "
                     "%s, %lld bp, there); all inputs must be aligned to the same reference",
                     path, first, t + 1, b ? b : "none", b ? (long long)sam_hdr_tid2len(h, t) : 0LL,
                     a ? a : "none", a ? (long long)sam_hdr_tid2len(h0, t) : 0LL);
            return -1;
        }
    }
    return 0;
}

/*
 * Standard input: one pass, no index, so only what a kernel can read in
 * order: the only input, the whole file (no regions, no -l intervals), one
 * process; SAM text is fine. The job keeps it open for the run's one reader.
 * 0, or -1 after ss_error().
 */
static int open_stdin(ss_job_t *job)
{
    const ss_common_opts_t *o = job->opts;
    const char *why = !job->kernel->stdin_ok ? "this kernel reads files only; give a BAM/CRAM path"
                      : o->n_inputs > 1      ? "it must be the only input; give the others as files"
                      : o->n_regions         ? "regions need an index, which a stream has none of; "
                                               "drop the regions or give a file"
                      : o->bed ? "-l needs shards cut by interval, which a stream cannot be "
                                 "read by; drop -l or give a file"
                      : ss_comm_parallel() ? "it is read by one process, but mpirun/srun started "
                                             "several ranks; run without them, or give a file"
                                           : NULL;
    if (why) {
        ss_error("-: standard input as input: %s", why);
        return -1;
    }
    samFile *fp = sam_open(SS_IO_STDIN, "r");
    sam_hdr_t *h = fp ? sam_hdr_read(fp) : NULL;
    if (!h) {
        ss_error("-: standard input is not SAM, BAM or CRAM (cannot read a header); pipe in "
                 "e.g. 'samtools view -h -u in.bam'");
        if (fp)
            hts_close(fp);
        return -1;
    }
    job->fp = fp, job->h = h;
    job->inputs.stream = fp;
    job->inputs.stream_hdr = h;
    if (fp->format.format == cram && o->reference && hts_set_fai_filename(fp, o->reference) < 0) {
        ss_error("-: cannot use reference %s for the CRAM on standard input", o->reference);
        return -1;
    }
    return check_sorted(SS_IO_STDIN, h);
}

/* Size of input i's index file (-X, or .csi/.bai beside it), 0 if none is found. */
static int64_t index_file_size(const ss_job_t *job, int i)
{
    const char *path = job->inputs.paths[i];
    char name[4096];
    const char *ext[] = {".csi", ".bai"};
    struct stat st;
    if (job->inputs.index_paths && job->inputs.index_paths[i])
        return stat(job->inputs.index_paths[i], &st) == 0 ? (int64_t)st.st_size : 0;
    for (int k = 0; k < 2; k++) {
        snprintf(name, sizeof(name), "%s%s", path, ext[k]);
        if (stat(name, &st) == 0)
            return (int64_t)st.st_size;
    }
    size_t len = strlen(path);
    if (len > 4 && strcmp(path + len - 4, ".bam") == 0) {
        snprintf(name, sizeof(name), "%.*s.bai", (int)(len - 4), path);
        if (stat(name, &st) == 0)
            return (int64_t)st.st_size;
    }
    return 0;
}

/* Whether input i's index fits in what the job keeps for the workers (SHARED_INDEX_BYTES). */
static int keep_index(ss_job_t *job, int i)
{
    int64_t size = index_file_size(job, i);
    if (job->index_bytes + size > SHARED_INDEX_BYTES)
        return 0;
    job->index_bytes += size;
    return 1;
}

/*
 * A CRAM given without -T or REF_PATH/REF_CACHE: htslib (as samtools) then
 * reads each contig's reference from the local FASTA its @SQ UR names. Every
 * @SQ must name one we can read, or a shard would fail late; 0, or -1 after
 * ss_error() naming the first contig without one.
 */
static int check_cram_ur(const char *path, sam_hdr_t *h, const char *ref_option)
{
    kstring_t ur = KS_INITIALIZE;
    const char *bad = NULL;
    for (int t = 0; !bad && t < sam_hdr_nref(h); t++) {
        const char *sn = sam_hdr_tid2name(h, t);
        ur.l = 0;
        if (sam_hdr_find_tag_id(h, "SQ", "SN", sn, "UR", &ur) != 0) {
            bad = sn;
            break;
        }
        const char *file = strncmp(ur.s, "file://", 7) == 0 ? ur.s + 7 : ur.s;
        if (is_url(file) || access(file, R_OK) != 0)
            bad = sn;
    }
    if (bad)
        ss_error("%s: CRAM input needs its reference, and @SQ SN:%s names no readable local "
                 "FASTA in UR; pass %s ref.fa (or set REF_PATH)",
                 path, bad, ref_option);
    free(ur.s);
    return bad ? -1 : 0;
}

/*
 * Add what BAM input i's index counts to the tally the run's end compares
 * with what its shards read (engine's accounting). 0, or -1 after ss_error().
 */
static int tally_expect(ss_job_t *job, int i, const sam_hdr_t *h, const hts_idx_t *idx)
{
    int n = job->inputs.n, nc = sam_hdr_nref(h);
    if (!job->tally_want && !(job->tally_want = calloc(ss_io_tally_len(nc, n), sizeof(uint64_t)))) {
        ss_error("out of memory for the index counts of %d inputs", n);
        return -1;
    }
    ss_io_tally_expect(idx, nc, i, n, job->tally_want);
    return 0;
}

/* Open and check input i; keeps it in the job when i == 0, else closes it. */
static int check_input(ss_job_t *job, int i)
{
    const char *path = job->inputs.paths[i];
    samFile *fp = NULL;
    sam_hdr_t *h = NULL;
    hts_idx_t *idx = NULL;
    if (check_readable(path, "input") < 0)
        return -1;
    if (!(fp = sam_open(path, "r"))) {
        if (ss_io_fds_exhausted(errno))
            ss_io_error_fds(path, errno);
        else
            ss_io_open_error(path, errno);
        return -1;
    }
    enum htsExactFormat fmt = hts_get_format(fp)->format;
    if (fmt == sam) {
        if (job->kernel->stdin_ok)
            ss_error("%s: is SAM text, which cannot be read by region; if it is "
                     "coordinate-sorted, stream it (one worker, no index): seqshard %s ... - < "
                     "%s; else convert it with 'samtools sort -o %s.bam %s' and index the result",
                     path, job->kernel->name, path, path, path);
        else
            ss_error("%s: is SAM text, which cannot be read by region; convert it with "
                     "'samtools sort -o %s.bam %s' and index the result",
                     path, path, path);
        goto fail;
    }
    if (fmt != bam && fmt != cram) {
        ss_error("%s: not a BAM/CRAM file; give coordinate-sorted, indexed BAM or CRAM", path);
        goto fail;
    }
    if (hts_check_EOF(fp) == 0) {
        ss_error("%s: the end-of-file marker is missing, so the file is truncated; re-create it "
                 "(samtools quickcheck lists such files)",
                 path);
        goto fail;
    }
    if (!(h = sam_hdr_read(fp))) {
        ss_error("%s: not a BAM/CRAM file (cannot read its header); check it with samtools "
                 "quickcheck",
                 path);
        goto fail;
    }
    if (fmt == cram && !job->opts->reference && !job->user_ref_env &&
        check_cram_ur(path, h, job->opts->ref_option) < 0)
        goto fail;
    if (check_sorted(path, h) < 0)
        goto fail;
    if (i > 0 && check_contigs(path, h, job->inputs.paths[0], job->h) < 0)
        goto fail;
    if (!(idx = ss_io_load_index(&job->inputs, i, fp)))
        goto fail;
    char problem[8192];
    if (ss_io_index_problem(&job->inputs, i, fp, h, idx, problem, sizeof(problem)) < 0) {
        ss_error("%s: %s", path, problem);
        goto fail;
    }
    job->is_cram[i] = fmt == cram;
    if (fmt == bam && tally_expect(job, i, h, idx) < 0)
        goto fail;
    if (i == 0) {
        job->fp = fp, job->h = h, job->idx = idx;
        if (fmt == bam)
            job->idxs[0] = idx;
        return 0;
    }
    if (fmt == bam && keep_index(job, i))
        job->idxs[i] = idx; /* a BAM's index is read-only once loaded: one for every worker */
    else
        hts_idx_destroy(idx); /* a CRAM's is tied to this handle (htslib) */
    sam_hdr_destroy(h);
    if (hts_close(fp) < 0) {
        ss_error("%s: error closing the file after checking it", path);
        return -1;
    }
    return 0;
fail:
    if (idx)
        hts_idx_destroy(idx);
    if (h)
        sam_hdr_destroy(h);
    hts_close(fp);
    return -1;
}

/*
 * No .fai beside ref, in a directory we may not write: samtools faidx could
 * not make one there either, so say where it can (htslib finds an index by
 * the FASTA's name, so a link in a writable directory carries it). 1 if said.
 */
static int fai_dir_read_only(const char *ref)
{
    kstring_t fai = KS_INITIALIZE, dir = KS_INITIALIZE;
    const char *slash = strrchr(ref, '/'), *base = slash ? slash + 1 : ref;
    int said = 0;
    if (ksprintf(&fai, "%s.fai", ref) >= 0 && access(fai.s, F_OK) != 0 &&
        kputsn(ref, slash ? (size_t)(slash - ref) : 0, &dir) >= 0 &&
        access(dir.l ? dir.s : (slash ? "/" : "."), W_OK) != 0) {
        ss_error("%s: no .fai index, and its directory %s is read-only, so 'samtools faidx' "
                 "cannot write one there; index a link to it in a writable directory: ln -s "
                 "%s /tmp/%s && samtools faidx /tmp/%s, then give /tmp/%s as the reference",
                 ref, dir.l ? dir.s : (slash ? "/" : "."), ref, base, base, base);
        said = 1;
    }
    free(fai.s);
    free(dir.s);
    return said;
}

static int check_reference(const char *ref)
{
    if (check_readable(ref, "reference") < 0)
        return -1;
    /* no FAI_CREATE: we must not write next to the user's FASTA behind their back */
    errno = 0;
    faidx_t *fai = fai_load3(ref, NULL, NULL, 0);
    if (!fai) {
        if (ss_io_fds_exhausted(errno))
            ss_io_error_fds(ref, errno);
        else if (!fai_dir_read_only(ref))
            ss_error("%s: no usable .fai index (bgzipped FASTA also needs .gzi); run 'samtools "
                     "faidx %s'",
                     ref, ref);
        return -1;
    }
    fai_destroy(fai);
    return 0;
}

/* The part of a region string that names the contig ("chr1" of "chr1:5-9", braces removed). */
static char *region_contig(const char *reg)
{
    const char *s = reg, *e;
    if (*s == '{' && (e = strchr(s, '}')))
        return strndup(s + 1, (size_t)(e - s - 1));
    e = strrchr(s, ':');
    return e ? strndup(s, (size_t)(e - s)) : strdup(s);
}

static int region_add(ss_job_t *job, int tid, hts_pos_t beg, hts_pos_t end)
{
    if (job->n_regions == job->m_regions) {
        int m = job->m_regions ? 2 * job->m_regions : 8;
        ss_interval_t *a = realloc(job->regions, (size_t)m * sizeof(*a));
        if (!a) {
            ss_error("out of memory parsing the regions");
            return -1;
        }
        job->regions = a, job->m_regions = m;
    }
    job->regions[job->n_regions++] = (ss_interval_t){.tid = tid, .beg = beg, .end = end};
    return 0;
}

/*
 * "." reads the whole file, as htslib's HTS_IDX_START iterator does: in a
 * sorted file that is every contig in header order, then the unplaced reads.
 */
static int region_add_whole_file(ss_job_t *job)
{
    for (int tid = 0; tid < sam_hdr_nref(job->h); tid++)
        if (region_add(job, tid, 0, HTS_POS_MAX) < 0)
            return -1;
    return region_add(job, SS_TID_UNPLACED, 0, 0);
}

/* Header order, the unplaced reads ("*", tid -1) after every contig. */
static int region_cmp(const void *pa, const void *pb)
{
    const ss_interval_t *a = pa, *b = pb;
    unsigned ta = (unsigned)a->tid, tb = (unsigned)b->tid; /* -1 sorts last */
    if (ta != tb)
        return ta < tb ? -1 : 1;
    if (a->beg != b->beg)
        return a->beg < b->beg ? -1 : 1;
    return (a->end > b->end) - (a->end < b->end);
}

/*
 * samtools view -M: the regions as one set. Sorted, and merged where they
 * overlap or touch (a record overlapping either of two touching regions
 * overlaps their union), so each record belongs to one region.
 */
static void merge_regions(ss_job_t *job)
{
    ss_interval_t *r = job->regions;
    int n = 0;
    if (job->n_regions < 2)
        return;
    qsort(r, (size_t)job->n_regions, sizeof(*r), region_cmp);
    for (int i = 0; i < job->n_regions; i++) {
        if (n > 0 && r[i].tid == r[n - 1].tid && r[i].beg <= r[n - 1].end) {
            if (r[i].end > r[n - 1].end)
                r[n - 1].end = r[i].end;
            continue;
        }
        r[n++] = r[i];
    }
    job->n_regions = n;
}

/* Append one region of the user's list. */
static int parse_region(ss_job_t *job, const char *reg)
{
    int tid = -1;
    hts_pos_t beg = 0, end = 0;
    /* htslib's region queries treat these two names before any contig name */
    if (job->kernel->unplaced && strcmp(reg, "*") == 0)
        return region_add(job, SS_TID_UNPLACED, 0, 0);
    if (job->kernel->unplaced && strcmp(reg, ".") == 0)
        return region_add_whole_file(job);
    if (sam_parse_region(job->h, reg, &tid, &beg, &end, HTS_PARSE_THOUSANDS_SEP)) {
        /*
         * htslib reads "chr:0-5" as from the start. END stays as given (very
         * large for CONTIG and CONTIG:BEG): a region query returns records
         * placed past the contig's end when END reaches them.
         */
        return region_add(job, tid, beg < 0 ? 0 : beg, end);
    }
    char *name = region_contig(reg);
    if (!name) {
        ss_error("out of memory parsing region '%s'", reg);
        return -1;
    }
    if (sam_hdr_name2tid(job->h, name) < 0 && sam_hdr_name2tid(job->h, reg) < 0)
        ss_error("unknown contig '%s' in region '%s'; contigs are listed by samtools view -H", name,
                 reg);
    else if (tid == -1)
        ss_error("region '%s' is ambiguous (a contig is named like a region); write it as "
                 "{%s}:BEG-END or {%s}",
                 reg, name, reg);
    else
        ss_error("malformed region '%s'; write CONTIG, CONTIG:BEG or CONTIG:BEG-END "
                 "(1-based, inclusive, BEG <= END)",
                 reg);
    free(name);
    return -1;
}

/*
 * With -f/-T, one CRAM handle that lives as long as the job lends its
 * reference (htslib's refs_t) to every CRAM handle a worker opens, so the
 * contig is read once per process, not once per handle (333 CRAMs of
 * E. coli: 1.6 GB per worker otherwise), and no handle opens the FASTA
 * again. It is the planning input when that is a CRAM, else the first CRAM
 * opened once more; nothing is decoded through it. 0, or -1 after ss_error().
 */
static int share_cram_reference(ss_job_t *job)
{
    int first = -1;
    for (int i = 0; first < 0 && i < job->inputs.n; i++)
        if (job->is_cram[i])
            first = i;
    if (first < 0 || !job->opts->reference)
        return 0;
    samFile *fp = job->fp;
    if (first == 0 && hts_set_fai_filename(fp, job->opts->reference) != 0) {
        ss_error("%s: cannot use reference %s for this CRAM; check it is the FASTA the CRAM "
                 "was made against, with a .fai index",
                 job->inputs.paths[0], job->opts->reference);
        return -1;
    }
    if (first > 0 && !(fp = job->cram_anchor = ss_io_open_input(&job->inputs, first)))
        return -1;
    if (!(job->inputs.cram_refs = cram_get_refs(fp))) {
        ss_error("%s: cannot set up the reference %s for the CRAM inputs", job->inputs.paths[first],
                 job->opts->reference);
        return -1;
    }
    return 0;
}

ss_job_t *ss_job_open(const ss_common_opts_t *opts, const ss_kernel_t *kernel)
{
    ss_job_t *job = calloc(1, sizeof(*job));
    if (!job) {
        ss_error("out of memory opening the inputs");
        return NULL;
    }
    warm_htslib_tables();
    job->opts = opts;
    job->kernel = kernel;
    job->inputs.paths = opts->inputs;
    job->inputs.n = opts->n_inputs;
    job->inputs.reference = opts->reference;
    job->inputs.index_paths = opts->index_paths;
    job->inputs.fmt_opts = opts->fmt_opts;
    job->inputs.n_fmt_opts = opts->n_fmt_opts;
    job->inputs.cram_md = kernel->cram_md;
    for (int i = 0; i < SS_STEPS_MAX; i++) {
        job->inputs.whole_records |= opts->step_on[i];
        if (opts->step_on[i] && ss_steps_get(i))
            job->inputs.cram_md |= ss_steps_get(i)->cram_md;
    }
    if (opts->n_inputs < 1) {
        ss_error("no input files; give BAM/CRAM paths or -b LIST");
        goto fail;
    }
    /* Checked before we set REF_PATH ourselves: did the user give a way to find references? */
    job->user_ref_env = env_set("REF_PATH") || env_set("REF_CACHE");
    if (!env_set("REF_PATH") && setenv("REF_PATH", SS_REF_PATH_LOCAL_ONLY, 1) != 0) {
        ss_error("cannot set REF_PATH: %s", strerror(errno));
        goto fail;
    }
    /* our messages replace htslib's ("[E::idx_find_and_load] ..."): one line per failure */
    enum htsLogLevel saved = hts_get_log_level();
    hts_set_log_level(HTS_LOG_OFF);
    int ok = !opts->reference || check_reference(opts->reference) == 0;
    job->idxs = calloc((size_t)opts->n_inputs, sizeof(*job->idxs));
    job->is_cram = calloc((size_t)opts->n_inputs, 1);
    if (ok && (!job->idxs || !job->is_cram)) {
        ss_error("out of memory opening the inputs");
        ok = 0;
    }
    for (int i = 0; ok && i < opts->n_inputs; i++)
        ok = (strcmp(opts->inputs[i], SS_IO_STDIN) ? check_input(job, i) : open_stdin(job)) == 0;
    if (ok)
        ok = share_cram_reference(job) == 0;
    for (int i = 0; ok && i < opts->n_regions; i++)
        ok = parse_region(job, opts->regions[i]) == 0;
    if (ok && opts->merge_regions)
        merge_regions(job);
    hts_set_log_level(saved);
    if (!ok)
        goto fail;
    /*
     * Build the header's name lookup now, on the main thread: htslib builds it
     * lazily on first use, which would race when workers call sam_hdr_name2tid.
     */
    if (sam_hdr_nref(job->h) > 0 && sam_hdr_name2tid(job->h, sam_hdr_tid2name(job->h, 0)) < 0) {
        ss_error("%s: cannot index the header's contig names", opts->inputs[0]);
        goto fail;
    }
    if (opts->bed && !(job->bed = ss_bed_read(opts->bed)))
        goto fail;
    job->inputs.hdr = job->h;
    job->inputs.idx = job->idxs;
    job->inputs.is_cram = job->is_cram;
    return job;
fail:
    ss_job_close(job);
    return NULL;
}

void ss_job_close(ss_job_t *job)
{
    if (!job)
        return;
    for (int i = 0; job->idxs && i < job->inputs.n; i++)
        if (job->idxs[i] && job->idxs[i] != job->idx)
            hts_idx_destroy(job->idxs[i]);
    free(job->idxs);
    free(job->is_cram);
    free(job->tally_want);
    if (job->cram_anchor)
        hts_close(job->cram_anchor);
    if (job->idx)
        hts_idx_destroy(job->idx);
    if (job->h)
        sam_hdr_destroy(job->h);
    if (job->fp)
        hts_close(job->fp);
    ss_bed_destroy(job->bed);
    free(job->regions);
    free(job);
}

const ss_common_opts_t *ss_job_opts(const ss_job_t *job)
{
    return job->opts;
}

const ss_kernel_t *ss_job_kernel(const ss_job_t *job)
{
    return job->kernel;
}

sam_hdr_t *ss_job_header(const ss_job_t *job)
{
    return job->h;
}

const uint64_t *ss_job_tally_want(const ss_job_t *job)
{
    return job->tally_want;
}

const ss_io_inputs_t *ss_job_inputs(const ss_job_t *job)
{
    return &job->inputs;
}

const ss_bed_t *ss_job_bed(const ss_job_t *job)
{
    return job->bed;
}

const ss_interval_t *ss_job_regions(const ss_job_t *job, int *n)
{
    *n = job->n_regions;
    return job->n_regions ? job->regions : NULL;
}

const ss_interval_t *ss_job_region(const ss_job_t *job)
{
    return job->n_regions == 1 ? &job->regions[0] : NULL;
}

samFile *ss_job_file(const ss_job_t *job)
{
    return job->fp;
}

hts_idx_t *ss_job_index(const ss_job_t *job)
{
    return job->idx;
}

ss_step_reach_t ss_job_step_reach(const ss_job_t *job)
{
    return job->step_reach;
}

void ss_job_set_step_reach(ss_job_t *job, ss_step_reach_t r)
{
    job->step_reach = r;
}

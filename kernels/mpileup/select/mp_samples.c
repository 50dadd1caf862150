/*
 * mp_samples.c -- which sample each read belongs to, as bcftools mpileup 1.16
 * decides it from the inputs' headers (bam_sample.c): each @RG line with ID
 * and SM maps its read group to the sample SM; samples are numbered in order
 * of first appearance over the inputs. A file whose read groups are all one
 * sample is that sample for every read; a file without read groups (or any
 * file under --ignore-RG) is one sample named by its path; a read whose RG
 * the header does not list goes to the file's first sample.
 */
#include <stdlib.h>
#include <string.h>

#include "base/ss_exact_fp.h"
#include "mp_select.h"

/* The sample named name, added after the others when new. -1 out of memory. */
static int sample_id(mp_samples_t *s, const char *name)
{
    int id;
    if (khash_str2int_get(s->name2idx, name, &id) == 0)
        return id;
    char **names = realloc(s->names, (size_t)(s->n + 1) * sizeof(*names));
    if (!names)
        return -1;
    s->names = names;
    if (!(names[s->n] = strdup(name)) || khash_str2int_set(s->name2idx, names[s->n], s->n) < 0)
        return -1;
    return s->n++;
}

/* Map read group rg of file f to sample id (bcftools keeps the first of duplicate IDs). */
static int map_rg(mp_file_smpl_t *f, const char *rg, int id)
{
    if (!f->rg2idx && !(f->rg2idx = khash_str2int_init()))
        return -1;
    if (khash_str2int_has_key(f->rg2idx, rg))
        return 0;
    char *key = strdup(rg);
    return key && khash_str2int_set(f->rg2idx, key, id) >= 0 ? 0 : -1;
}

/* The text up to the next tab, newline or end, copied into buf. */
static void field(const char *p, char *buf, size_t cap)
{
    size_t k = 0;
    while (p[k] && p[k] != '\t' && p[k] != '\n' && k + 1 < cap) {
        buf[k] = p[k];
        k++;
    }
    buf[k] = 0;
}

/* What one file's @RG lines gave: its first sample, its distinct names, the groups dropped. */
typedef struct {
    int first;     /* the sample of the first read group whose name is a sample, or -1 */
    int n_names;   /* distinct sample names over its read groups, dropped ones too */
    int n_skipped; /* read groups -s/-S or -G dropped */
} rg_walk_t;

/*
 * One @RG line's read group id and sample name: accepted (perhaps renamed) by
 * -s/-S and -G, or dropped (mapped to -1, so its reads are). 0 or -1 OOM.
 */
static int add_rg(mp_samples_t *s, mp_file_smpl_t *f, const char *path, const char *id,
                  const char *sm, rg_walk_t *wk, void *seen)
{
    const char *name = sm;
    int accept = 1;
    if (s->sample_list.idx) {
        const char *ren = mp_namemap_get(&s->sample_list, sm);
        if (!s->sample_include)
            accept = !ren;
        else if (!ren)
            accept = 0;
        else
            name = ren;
    }
    if (accept && s->rg_list.idx)
        accept = mp_rg_keep(s, path, id, &name);
    int sid = accept ? sample_id(s, name) : -1;
    if ((accept && sid < 0) || map_rg(f, id, sid) < 0)
        return -1;
    wk->n_skipped += !accept;
    if (wk->first < 0)
        khash_str2int_get(s->name2idx, name, &wk->first);
    if (!khash_str2int_has_key(seen, name)) {
        char *k = strdup(name);
        if (!k || khash_str2int_inc(seen, k) < 0)
            return -1;
    }
    return 0;
}

/*
 * The @RG lines of one header text. As in bcftools, ID and SM are searched
 * from the line's start onwards through the rest of the text, and the walk
 * stops at the first @RG line where either is missing. 0 or -1 (said).
 */
static int read_groups(mp_samples_t *s, mp_file_smpl_t *f, const char *text, rg_walk_t *wk,
                       const char *path)
{
    char id[1024], sm[1024];
    void *seen = khash_str2int_init();
    const char *p = text, *q;
    *wk = (rg_walk_t){-1, 0, 0};
    while (seen && p && (q = strstr(p, "@RG"))) {
        const char *eol = strchr(q + 3, '\n');
        if (q > text && q[-1] != '\n') {
            p = eol;
            continue;
        }
        p = q + 3;
        const char *idp = strstr(p, "\tID:"), *smp = strstr(p, "\tSM:");
        if (!idp || !smp)
            break;
        field(idp + 4, id, sizeof(id));
        field(smp + 4, sm, sizeof(sm));
        if (!strcmp(id, "*") || !strcmp(id, "?")) {
            ss_error("%s: the read group IDs \"*\" and \"?\" have a special meaning to "
                     "bcftools mpileup; rename that @RG ID",
                     path);
            khash_str2int_destroy_free(seen);
            return -1;
        }
        if (add_rg(s, f, path, id, sm, wk, seen) < 0)
            goto oom;
        p = eol;
    }
    if (!seen)
        goto oom;
    wk->n_names = khash_str2int_size(seen);
    khash_str2int_destroy_free(seen);
    return 0;
oom:
    if (seen)
        khash_str2int_destroy_free(seen);
    ss_error("out of memory reading the read groups of %s", path);
    return -1;
}

/*
 * File i's samples from its header text (NULL: none, as under --ignore-RG):
 * bcftools' bam_smpl_add_bam. 1 when the file is used; 0 when none of its
 * reads can be kept (bcftools drops it from the inputs, and the file keeps no
 * sample here); -1 (said).
 */
static int add_file(mp_samples_t *s, int i, const char *text, const char *path)
{
    mp_file_smpl_t *f = &s->files[i];
    f->default_idx = -1;
    if (!text) {
        if ((f->default_idx = sample_id(s, path)) < 0)
            goto oom;
        return 1;
    }
    rg_walk_t wk;
    if (read_groups(s, f, text, &wk, path) < 0)
        return -1;
    const char *name = NULL;
    int accept_untagged = 1;
    if (s->rg_list.idx && !mp_rg_keep(s, path, "?", &name))
        accept_untagged = 0;
    if (s->sample_list.idx && wk.first < 0)
        accept_untagged = 0;
    if (!accept_untagged)
        return wk.first >= 0; /* reads without a kept read group are dropped */
    if (wk.n_names == 1 && !wk.n_skipped) {
        f->default_idx = wk.first;
        return 1;
    }
    int id = name ? sample_id(s, name) : wk.first < 0 ? sample_id(s, path) : wk.first;
    if (id < 0 || map_rg(f, "?", id) < 0)
        goto oom;
    return 1;
oom:
    ss_error("out of memory reading the read groups of %s", path);
    return -1;
}

/*
 * -s/-S and -G kept no read group of any input: bcftools stops ("failed to
 * find a file header with usable read groups"), and so does seqshard. -1.
 */
static int none_usable(const mp_samples_t *s, const mp_opts_t *o)
{
    const char *rg = s->rg_list.idx ? o->read_groups : NULL;
    const char *sm = s->sample_list.idx ? o->samples : NULL;
    const char *sm_opt = o->samples_is_file ? "-S" : "-s";
    if (sm && rg)
        ss_error("%s %s and -G %s keep no read group of any input; check the names against "
                 "the inputs' @RG SM: and ID: fields (samtools view -H)",
                 sm_opt, sm, rg);
    else if (sm)
        ss_error("%s %s keeps no sample of any input's read groups; check the names against "
                 "the inputs' @RG SM: fields (samtools view -H)",
                 sm_opt, sm);
    else
        ss_error("-G %s keeps no read group of any input; check the IDs against the inputs' "
                 "@RG ID: fields (samtools view -H)",
                 rg);
    return -1;
}

/* One input's samples from its header: 1 used, 0 dropped, -1 (said). */
static int add_input(mp_samples_t *s, const ss_io_inputs_t *in, int i, const mp_opts_t *o)
{
    if (o->ignore_rg)
        return add_file(s, i, NULL, in->paths[i]);
    if (in->stream) /* standard input: the job read its header; it cannot be opened again */
        return add_file(s, i, sam_hdr_str(in->stream_hdr), in->paths[i]);
    /* one header at a time: a thousand inputs hold one descriptor here */
    samFile *fp = ss_io_open_input(in, i);
    sam_hdr_t *h = fp ? sam_hdr_read(fp) : NULL;
    if (fp && !h)
        ss_error("%s: cannot read its header; check the file with samtools view -H", in->paths[i]);
    int rc = h ? add_file(s, i, sam_hdr_str(h), in->paths[i]) : -1;
    sam_hdr_destroy(h);
    if (fp)
        sam_close(fp);
    return rc;
}

int mp_samples_build(mp_samples_t *s, const ss_job_t *job, const mp_opts_t *o)
{
    const ss_io_inputs_t *in = ss_job_inputs(job);
    memset(s, 0, sizeof(*s));
    s->n_files = in->n;
    s->name2idx = khash_str2int_init();
    s->files = calloc((size_t)in->n, sizeof(*s->files));
    if (!s->name2idx || !s->files) {
        ss_error("out of memory reading the inputs' samples");
        return -1;
    }
    if (o->samples && mp_sample_list_read(&s->sample_list, &s->sample_include, o->samples,
                                          o->samples_is_file) < 0)
        return -1;
    if (o->read_groups && mp_rg_list_read(&s->rg_list, &s->rg_include, o->read_groups) < 0)
        return -1;
    int n_used = 0;
    for (int i = 0; i < in->n; i++) {
        int rc = add_input(s, in, i, o);
        if (rc < 0)
            return -1;
        n_used += rc;
    }
    return n_used > 0 || in->n == 0 ? 0 : none_usable(s, o);
}

void mp_samples_free(mp_samples_t *s)
{
    for (int i = 0; s->files && i < s->n_files; i++)
        if (s->files[i].rg2idx)
            khash_str2int_destroy_free(s->files[i].rg2idx);
    free(s->files);
    if (s->name2idx)
        khash_str2int_destroy(s->name2idx);
    for (int i = 0; i < s->n; i++)
        free(s->names[i]);
    free(s->names);
    mp_namemap_free(&s->sample_list);
    mp_namemap_free(&s->rg_list);
    memset(s, 0, sizeof(*s));
}

int mp_samples_of(const mp_samples_t *s, int i, const bam1_t *b)
{
    const mp_file_smpl_t *f = &s->files[i];
    if (f->default_idx >= 0)
        return f->default_idx;
    const uint8_t *rg = bam_aux_get(b, "RG");
    int id;
    if (khash_str2int_get(f->rg2idx, rg ? (const char *)rg + 1 : "?", &id) == 0)
        return id;
    if (khash_str2int_get(f->rg2idx, "?", &id) == 0)
        return id;
    return -1;
}

int mp_samples_one_per_file(const mp_samples_t *s, int *file_sample)
{
    unsigned char *taken = calloc((size_t)(s->n > 0 ? s->n : 1), 1);
    int one = taken != NULL;
    for (int i = 0; one && i < s->n_files; i++) {
        int id = s->files[i].default_idx;
        one = id >= 0 && id < s->n && !taken[id];
        if (one)
            taken[id] = 1, file_sample[i] = id;
    }
    free(taken);
    return one;
}

/*
 * Whether a sample can hold more than 255 bases at a column, so that bcftools
 * draws random numbers: htslib's cap keeps at most -d + 1 reads of a file in
 * a column, and a sample's reads may come from several files.
 */
int mp_samples_can_draw(const mp_samples_t *smpl, int max_depth)
{
    int per_file = max_depth > 0 ? max_depth + 1 : 1;
    int64_t *bound = calloc((size_t)(smpl->n > 0 ? smpl->n : 1), sizeof(*bound));
    int possible = !bound; /* out of memory: count to be safe */
    for (int i = 0; bound && i < smpl->n_files; i++) {
        const mp_file_smpl_t *f = &smpl->files[i];
        unsigned char *seen = calloc((size_t)(smpl->n > 0 ? smpl->n : 1), 1);
        if (!seen) {
            possible = 1;
            break;
        }
        if (f->default_idx >= 0)
            seen[f->default_idx] = 1;
        if (f->rg2idx) {
            khash_t(str2int) *h = f->rg2idx;
            for (khint_t k = kh_begin(h); k != kh_end(h); k++)
                if (kh_exist(h, k) && kh_val(h, k) >= 0)
                    seen[kh_val(h, k)] = 1;
        }
        for (int s = 0; s < smpl->n; s++)
            bound[s] += seen[s] ? per_file : 0;
        free(seen);
    }
    for (int s = 0; bound && s < smpl->n; s++)
        possible |= bound[s] > 255;
    free(bound);
    return possible;
}

/*
 * run_files.c -- the files a run reads and the files it writes, each with
 * what it is, in one list each: --resume's identity (resume.c) and the clash
 * check before any work (output_check.c) read the same lists, so a file a kernel
 * registers (ss_common_add_read, ss_common_add_write) is covered by both.
 *
 * The lists name every file that may be read or written, whether or not it
 * exists yet (an index htslib would load if it were there): callers stat.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../out/compress.h"
#include "plan.h"

/* The index names htslib may load for an input: beside it, or in place of its extension. */
static const char *const input_index_ext[] = {".bai", ".csi", ".crai"};
/* The index names tabix and bcftools index load for a VCF/BCF (hts_idx_load). */
static const char *const vcf_index_ext[] = {".tbi", ".csi"};
/* The index names an index builder writes beside an output (output_file.c renames them too). */
static const char *const output_index_ext[] = {".tbi", ".csi", ".crai"};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

void ss_run_files_free(ss_run_files_t *l)
{
    for (int i = 0; l && i < l->n; i++) {
        free(l->f[i].path);
        free(l->f[i].role);
    }
    if (l) {
        free(l->f);
        memset(l, 0, sizeof(*l));
    }
}

/* Append path + ext, as role + role_ext ("the reference" + "'s index"). 0 or -1 (no memory). */
static int push(ss_run_files_t *l, const char *path, const char *ext, const char *role,
                const char *role_ext, const char *key)
{
    if (l->n == l->m) {
        int m = l->m ? 2 * l->m : 16;
        ss_run_file_t *g = realloc(l->f, (size_t)m * sizeof(*g));
        if (!g)
            return -1;
        l->f = g, l->m = m;
    }
    size_t pl = strlen(path) + strlen(ext) + 1, rl = strlen(role) + strlen(role_ext) + 1;
    char *p = malloc(pl), *r = malloc(rl);
    if (!p || !r) {
        free(p), free(r);
        return -1;
    }
    snprintf(p, pl, "%s%s", path, ext);
    snprintf(r, rl, "%s%s", role, role_ext);
    l->f[l->n++] = (ss_run_file_t){p, r, key};
    return 0;
}

/* Input i, its -X index, and each name htslib may find its index under. */
static int push_input(ss_run_files_t *l, const ss_common_opts_t *o, int i)
{
    const char *in = o->inputs[i];
    const char *slash = strrchr(in, '/'), *dot = strrchr(slash ? slash + 1 : in, '.');
    char *stem = dot ? strndup(in, (size_t)(dot - in)) : NULL;
    int r = push(l, in, "", "an input", "", "input");
    if (r == 0 && o->index_paths && o->index_paths[i])
        r = push(l, o->index_paths[i], "", "an input's index", "", "index");
    for (size_t e = 0; r == 0 && e < N_OF(input_index_ext); e++) {
        r = push(l, in, input_index_ext[e], "an input's index", "", "index");
        if (r == 0 && dot)
            r = stem ? push(l, stem, input_index_ext[e], "an input's index", "", "index") : -1;
    }
    free(stem);
    return r;
}

/* The kernel's side files (and the -b lists), each with its index names when it has one. */
static int push_side_reads(ss_run_files_t *l, const ss_common_opts_t *o)
{
    int r = 0;
    for (int i = 0; r == 0 && i < o->n_side_reads; i++) {
        const ss_side_file_t *f = &o->side_reads[i];
        r = push(l, f->path, "", f->role, "", "file");
        for (size_t e = 0; r == 0 && f->indexed && e < N_OF(vcf_index_ext); e++)
            r = push(l, f->path, vcf_index_ext[e], f->role, "'s index", "file");
    }
    return r;
}

int ss_run_reads(const ss_common_opts_t *o, ss_run_files_t *l)
{
    memset(l, 0, sizeof(*l));
    int r = 0;
    for (int i = 0; r == 0 && i < o->n_inputs; i++)
        r = push_input(l, o, i);
    if (r == 0 && o->reference) {
        r = push(l, o->reference, "", "the reference", "", "reference");
        r = r ? r : push(l, o->reference, ".fai", "the reference", "'s index", "reference");
        r = r ? r : push(l, o->reference, ".gzi", "the reference", "'s index", "reference");
    }
    if (r == 0 && o->bed)
        r = push(l, o->bed, "", "the BED file", "", "bed");
    r = r ? r : push_side_reads(l, o);
    if (r < 0) {
        ss_run_files_free(l);
        ss_error("out of memory listing the files the run reads");
    }
    return r;
}

/* The kernel's registration of path, if it made one (its role and option for messages). */
static const ss_side_file_t *registered(const ss_common_opts_t *o, const char *path)
{
    for (int i = 0; i < o->n_side_writes; i++)
        if (strcmp(o->side_writes[i].path, path) == 0)
            return &o->side_writes[i];
    return NULL;
}

/* Each side stream and the CSI index beside a BED.gz one; then the kernel's other files. */
static int push_side_writes(ss_run_files_t *l, const ss_common_opts_t *o, const ss_out_spec_t *s)
{
    int r = 0;
    for (int k = 0; r == 0 && k < s->n_streams; k++) {
        const ss_stream_spec_t *st = &s->streams[k];
        const ss_side_file_t *reg = registered(o, st->path);
        const char *role = reg ? reg->role : "a side output", *opt = reg ? reg->opt : "it";
        r = push(l, st->path, "", role, "", opt);
        if (r == 0 && st->format == SS_STREAM_BED_GZ)
            r = push(l, st->path, ".csi", role, "'s index", opt);
    }
    for (int i = 0; r == 0 && i < o->n_side_writes; i++) {
        const ss_side_file_t *f = &o->side_writes[i];
        int stream = 0;
        for (int k = 0; k < s->n_streams; k++)
            stream |= strcmp(s->streams[k].path, f->path) == 0;
        r = stream ? 0 : push(l, f->path, "", f->role, "", f->opt);
    }
    return r;
}

int ss_run_writes(const ss_common_opts_t *o, const ss_out_spec_t *spec, ss_run_files_t *l)
{
    memset(l, 0, sizeof(*l));
    const char *out = o->output && strcmp(o->output, "-") != 0 && !spec->no_main ? o->output : NULL;
    int indexed = out && (spec->format == SS_FMT_TEXT ? ss_bgzf_wanted(out) : spec->write_index);
    int r = push_side_writes(l, o, spec);
    if (r == 0 && out)
        r = push(l, out, "", "-o", "", "-o");
    for (size_t e = 0; r == 0 && indexed && e < N_OF(output_index_ext); e++)
        r = push(l, out, output_index_ext[e], "-o", "'s index", "-o");
    if (r == 0 && indexed && o->index_out) /* -o FILE##idx##INDEX */
        r = push(l, o->index_out, "", "-o", "'s index", "-o");
    if (r == 0 && o->report)
        r = push(l, o->report, "", "--report", "", "--report");
    if (r < 0) {
        ss_run_files_free(l);
        ss_error("out of memory listing the files the run writes");
    }
    return r;
}

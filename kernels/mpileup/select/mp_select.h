/*
 * mp_select.h -- what of the input a run reads, and as which sample: the
 * samples (mp_samples.c, from the inputs' read groups; -s/-S and -G in
 * mp_sample_lists.c) and mpileup's -r/-R regions and -t/-T targets
 * (mp_region_select.c). Built on the main thread, read-only afterwards.
 * Private to kernels/mpileup/.
 */
#ifndef SS_MP_SELECT_H
#define SS_MP_SELECT_H

#include <htslib/khash_str2int.h>
#include <htslib/regidx.h>
#include <htslib/sam.h>

#include "../../../framework/ss_framework.h"
#include "../mp_opts.h"

/*
 * The samples, as bcftools' bam_sample.c assigns them: samples in order of
 * first appearance over the inputs' @RG lines (SM), a file without read
 * groups (or every file under --ignore-RG) being one sample named by its path.
 * Built on the main thread, read-only afterwards.
 */
typedef struct {
    int default_idx; /* every read of the file is this sample, or -1: by RG */
    void *rg2idx;    /* khash_str2int: read group -> sample (-1: dropped), or NULL */
} mp_file_smpl_t;

/* A map of names to names (-s renames, -G read groups), in mp_sample_lists.c. */
typedef struct {
    void *idx; /* khash_str2int: name -> index into vals */
    char **vals;
    int n;
} mp_namemap_t;

typedef struct {
    int n;          /* samples */
    char **names;   /* owned */
    void *name2idx; /* khash_str2int over names */
    int n_files;
    mp_file_smpl_t *files;
    mp_namemap_t sample_list; /* -s/-S: sample -> its name in the output; idx NULL: none */
    int sample_include;       /* the list keeps (else drops, '^') its samples */
    mp_namemap_t rg_list;     /* -G: "RG", "RG\tFILE" or "*\tFILE" -> sample, "\t" keeps it */
    int rg_include;
} mp_samples_t;

const char *mp_namemap_get(const mp_namemap_t *m, const char *key);
void mp_namemap_free(mp_namemap_t *m);
/* -s LIST or -S FILE (is_file) into m; *include unless it starts with '^'. 0 or -1 (said). */
int mp_sample_list_read(mp_namemap_t *m, int *include, const char *arg, int is_file);
/* -G FILE into m, as bcftools reads it. 0 or -1 (said). */
int mp_rg_list_read(mp_namemap_t *m, int *include, const char *arg);
/*
 * Whether -G keeps read group rg of file fname (bcftools' bsmpl_keep_readgroup);
 * *name becomes the sample's new name when the list gives one.
 */
int mp_rg_keep(const mp_samples_t *s, const char *fname, const char *rg, const char **name);

int mp_samples_build(mp_samples_t *s, const ss_job_t *job, const mp_opts_t *o);
void mp_samples_free(mp_samples_t *s);
/*
 * Whether bcftools may draw random numbers: some sample can hold more than 255
 * bases at a column with -d max_depth (per file) over the files it spans.
 */
int mp_samples_can_draw(const mp_samples_t *s, int max_depth);
/* The read's sample in file i, or -1 when the read is dropped. Any thread. */
int mp_samples_of(const mp_samples_t *s, int i, const bam1_t *b);
/*
 * Whether each input's reads all go to one sample of its own (no read group
 * splits a file, no sample spans two files): then file_sample[i] (room for
 * every input) is input i's sample, and a column's groups are the inputs'.
 */
int mp_samples_one_per_file(const mp_samples_t *s, int *file_sample);

/* -t/-T: the targets, built on the main thread, read-only after (mp_region_select.c). */
typedef struct {
    regidx_t *idx; /* NULL: no targets */
    int include;   /* else '^': exclude */
} mp_targets_t;

/* -r/-R as the run's regions, in bcftools' order. 0, or -1 after a message. Main thread. */
int mp_regions_add(const mp_opts_t *o, ss_common_opts_t *co);
/* -t/-T into t (t->idx NULL when none). 0, or -1 after ss_error(). Main thread. */
int mp_targets_load(mp_targets_t *t, const mp_opts_t *o);
void mp_targets_free(mp_targets_t *t);
/* bcftools' read test against the targets (itr: the worker's own). 1 keep, 0 drop. */
int mp_targets_read(const mp_targets_t *t, regitr_t *itr, const char *ctg, const bam1_t *b);
/* bcftools' column test: 1 when the column is printed. */
int mp_targets_column(const mp_targets_t *t, const char *ctg, hts_pos_t pos);

#endif

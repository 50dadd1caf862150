/*
 * job_ref.c -- the reference a run reads its contigs' bases from (-f), held
 * against the contigs the run reads, before any work.
 *
 * samtools mpileup and bcftools mpileup take a FASTA of another genome (or
 * another assembly) and go on: N as the reference base, no BAQ, exit 0. That
 * output is seldom what anyone meant, so seqshard stops unless asked to go on.
 * Only the contigs the run reads count: a FASTA without the decoys or alt
 * contigs nobody's reads are on is fine.
 */
#include <stdlib.h>

#include "../../io/ss_ref.h"
#include "../ss_framework_extra.h"
#include "plan.h"

/*
 * The contigs the run reads: those its regions or -l intervals name, else
 * those any input's index says hold mapped reads (every contig, where an index
 * cannot say: a CRAM, standard input). NULL when out of memory.
 */
static unsigned char *contigs_read(const ss_job_t *job)
{
    const sam_hdr_t *h = ss_job_header(job);
    int n = sam_hdr_nref(h), nr = 0;
    unsigned char *need = calloc((size_t)n + 1, 1);
    const ss_interval_t *r = ss_job_regions(job, &nr);
    const ss_bed_t *bed = ss_job_bed(job);
    const ss_io_inputs_t *in = ss_job_inputs(job);
    for (int tid = 0; need && tid < n; tid++) {
        int k = 0;
        if (nr > 0)
            continue; /* below */
        if (bed) {
            need[tid] = ss_bed_intervals(bed, sam_hdr_tid2name((sam_hdr_t *)h, tid), &k) && k > 0;
            continue;
        }
        for (int i = 0; i < in->n && !need[tid]; i++) {
            /* a BAM index has no counts for a contig without reads */
            uint64_t mapped = 0, unmapped = 0;
            need[tid] = !in->idx || !in->idx[i] ||
                        (hts_idx_get_stat(in->idx[i], tid, &mapped, &unmapped) == 0 && mapped > 0);
        }
    }
    for (int i = 0; need && i < nr; i++)
        if (r[i].tid >= 0 && r[i].tid < n)
            need[r[i].tid] = 1;
    return need;
}

int ss_job_check_reference(const ss_job_t *job, const char *tool, const char *allow_opt,
                           int allowed)
{
    const ss_common_opts_t *co = ss_job_opts(job);
    if (!co->reference)
        return 0;
    unsigned char *need = contigs_read(job);
    if (!need) {
        ss_error("out of memory checking %s against the input's contigs", co->reference);
        return -1;
    }
    ss_ref_mismatch_t m;
    int r = ss_ref_check_only(co->reference, ss_job_header(job), need, &m);
    free(need);
    if (r <= 0) /* -2: out of memory, said; -1: the job's own check reported the .fai */
        return r == -2 ? -1 : 0;
    char what[512];
    ss_ref_describe_mismatch(co->reference, ss_job_header(job), co->inputs[0], &m, what,
                             sizeof(what));
    if (allowed) {
        ss_warn("%s: there the reference is N and reads past its end are skipped, as %s does "
                "(%s)",
                what, tool, allow_opt);
        return 0;
    }
    ss_error("%s: give the FASTA the reads were aligned to with %s, or %s to go on as %s does "
             "(N as the reference there)",
             what, co->ref_option, allow_opt, tool);
    return -1;
}

/*
 * out_run.c -- what the output file is, decided in one place before any
 * work, and the bytes that open and close it.
 *
 * A kernel says what it writes (ss_out_spec_t: text, or records as SAM, BAM
 * or CRAM); the -o name adds what samtools would add: BGZF + tabix for text
 * named .gz/.bgz, BGZF for SAM named .sam.gz (samtools view compresses SAM
 * only for that ending; any other name, ".gz" included, is plain SAM, and
 * BAM/CRAM are what -O says whatever the name). Combinations seqshard cannot
 * write are refused here, before the run, with one line.
 *
 * Owned by the main thread; read-only (and shared by the workers) while the
 * run goes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <htslib/bgzf.h>
#include <htslib/thread_pool.h>
#include <htslib/vcf.h>

#include "../cli/cli.h"
#include "compress.h"
#include "out_run.h"

static int ends_with(const char *s, const char *suffix)
{
    size_t l = s ? strlen(s) : 0, e = strlen(suffix);
    return l > e && strcasecmp(s + l - e, suffix) == 0;
}

static const char *format_name(ss_out_format_t f)
{
    static const char *names[] = {"text", "SAM", "BAM", "CRAM"};
    return f >= SS_FMT_TEXT && f <= SS_FMT_CRAM ? names[f] : "?";
}

ss_out_format_t ss_out_format_from(const ss_common_opts_t *co, ss_out_format_t dflt)
{
    if (co->out_format >= 0)
        return (ss_out_format_t)co->out_format;
    if (ends_with(co->output, ".bam"))
        return SS_FMT_BAM;
    if (ends_with(co->output, ".cram"))
        return SS_FMT_CRAM;
    if (ends_with(co->output, ".sam") || ends_with(co->output, ".sam.gz"))
        return SS_FMT_SAM;
    return dflt;
}

/*
 * -o FILE##idx##INDEX: the index's name must say a kind the output can have,
 * as samtools and htslib read it from the name. 0, or -1 after ss_error().
 */
static int check_index_name(const ss_out_spec_t *s, const ss_common_opts_t *co, int bgzf)
{
    const char *idx = co->index_out;
    if (!idx)
        return 0;
    int text = s->format == SS_FMT_TEXT;
    if (!text && !s->write_index) {
        ss_error("-o %s##idx##%s names an index, but none is written; add --write-index",
                 co->output, idx);
        return -1;
    }
    if (text && !bgzf) {
        ss_error("-o %s##idx##%s: only a .gz output has an index; name it FILE.gz##idx##%s",
                 co->output, idx, idx);
        return -1;
    }
    /* SAM.gz as BAM: samtools view writes a .bai for either when the name says so */
    int ok = s->format == SS_FMT_CRAM ? ends_with(idx, ".crai")
             : text                   ? ends_with(idx, ".tbi") || ends_with(idx, ".csi")
                                      : ends_with(idx, ".bai") || ends_with(idx, ".csi");
    if (!ok)
        ss_error("-o %s##idx##%s: a %s output's index is named %s", co->output, idx,
                 text ? "text .gz" : format_name(s->format),
                 s->format == SS_FMT_CRAM ? "*.crai"
                 : text                   ? "*.tbi or *.csi"
                                          : "*.bai or *.csi");
    return ok ? 0 : -1;
}

/* Whether text is BGZF: by the kernel's rule, or by -o's name. */
static int text_bgzf(const ss_out_spec_t *spec, const char *output)
{
    if (spec->text_bgzf != SS_TEXT_BGZF_BY_NAME)
        return spec->text_bgzf == SS_TEXT_BGZF_ALWAYS;
    return ss_bgzf_wanted(output);
}

/* Refuse what cannot be written. 0, or -1 after ss_error(). */
static int check_spec(const ss_out_spec_t *s, const sam_hdr_t *hdr, const char *path)
{
    int to_file = path && strcmp(path, "-") != 0;
    if (s->format != SS_FMT_TEXT && !hdr) {
        ss_error("internal: a %s output needs a header from the kernel", format_name(s->format));
        return -1;
    }
    if (s->write_index && s->format == SS_FMT_TEXT && !text_bgzf(s, path)) {
        ss_error("--write-index: text output is indexed only when compressed; name it FILE.gz");
        return -1;
    }
    if (s->write_index && s->format == SS_FMT_SAM && !ends_with(path, ".sam.gz")) {
        ss_error("--write-index: SAM output is indexed only when compressed; name it "
                 "FILE.sam.gz, or add -O bam or -O cram");
        return -1;
    }
    if (s->write_index && !to_file) {
        ss_error("--write-index needs an output file (-o FILE), not standard output");
        return -1;
    }
    return 0;
}

/* Make every lazily built part of the header now, on the main thread. */
static int freeze_header(sam_hdr_t *h)
{
    if (!sam_hdr_str(h))
        return -1;
    return sam_hdr_nref(h) == 0 || sam_hdr_name2tid(h, sam_hdr_tid2name(h, 0)) >= 0 ? 0 : -1;
}

/* Text whose every line is a '#' meta line (tabix steps over them all). */
static int all_meta(const char *text, size_t len)
{
    for (size_t at = 0; at < len;) {
        if (text[at] != '#')
            return 0;
        const char *nl = memchr(text + at, '\n', len - at);
        at = nl ? (size_t)(nl - text) + 1 : len;
    }
    return 1;
}

/* A BCF's header: its magic, then the text's length and the text. */
static int bcf_header(const ss_out_run_t *r)
{
    return r->text_header_len >= 9 && memcmp(r->text_header, "BCF\2\2", 5) == 0;
}

/*
 * Which outputs' indexes are built from the shards' notes: BAM (.bai, .csi),
 * SAM.gz (.csi, .bai: each line noted as it is formatted), BCF and VCF.gz
 * (bcftools index: .csi, or .tbi for VCF), CRAM (.crai: each shard's lines
 * from htslib's index builder run on the shard's own CRAM, which the encoder
 * holds in memory), and tabix-indexed text whose header is meta lines only
 * (so tabix's data starts after it). The others are read back once written:
 * SAM.gz without header lines (sam_index's first offset is then after the
 * first record, which no shard knows) and text with data lines in its header.
 */
static ss_idx_kind_t index_kind(const ss_out_run_t *r)
{
    if (r->format == SS_FMT_BAM && r->write_index)
        return SS_IDX_RECORDS;
    if (r->format == SS_FMT_SAM && r->write_index && r->bgzf && r->sam_header &&
        sam_hdr_length(r->hdr) > 0)
        return SS_IDX_SAM;
    if (r->format == SS_FMT_CRAM && r->write_index)
        return SS_IDX_CRAI;
    if (r->vcf_index && bcf_header(r))
        return r->vcf_tbi ? SS_IDX_NONE : SS_IDX_BCF; /* no TBI for BCF: htslib says why */
    if (r->vcf_index && all_meta(r->text_header, r->text_header_len))
        return SS_IDX_VCF;
    if (r->tabix && all_meta(r->text_header, r->text_header_len))
        return SS_IDX_LINES;
    return SS_IDX_NONE;
}

ss_out_run_t *ss_out_run_init(ss_out_spec_t *spec, const ss_common_opts_t *co)
{
    ss_out_run_t *r = calloc(1, sizeof(*r));
    if (!r) {
        ss_error("out of memory preparing the output");
        return NULL;
    }
    r->hdr = spec->header;
    spec->header = NULL; /* ours now, freed by ss_out_run_destroy */
    if (check_spec(spec, r->hdr, co->output) < 0)
        goto fail;
    r->format = spec->format;
    r->level = spec->level;
    r->sam_header = spec->sam_header;
    /* text .gz gets its tabix index whatever is asked (the .tbi path below) */
    r->write_index = spec->write_index && spec->format != SS_FMT_TEXT;
    r->index_threads = spec->index_threads > 0 ? spec->index_threads : 1;
    r->tmp_dir = co->tmp_dir;
    r->input = co->n_inputs == 1 ? co->inputs[0] : NULL;
    snprintf(r->spill_dir, sizeof(r->spill_dir), ".");
    r->no_main = spec->no_main;
    r->bgzf = r->format == SS_FMT_TEXT
                  ? text_bgzf(spec, co->output)
                  : r->format == SS_FMT_SAM && ends_with(co->output, ".sam.gz");
    r->tabix = r->format == SS_FMT_TEXT && r->bgzf && spec->text_index == SS_TEXT_INDEX_TABIX;
    r->vcf_tbi = spec->text_index == SS_TEXT_INDEX_VCF_TBI;
    r->vcf_index = r->format == SS_FMT_TEXT && r->bgzf &&
                   (spec->text_index == SS_TEXT_INDEX_VCF || r->vcf_tbi);
    if (!spec->no_main && check_index_name(spec, co, r->bgzf) < 0)
        goto fail;
    r->index_out = co->index_out;
    r->text_header_len = spec->text_header ? spec->text_header_len ? spec->text_header_len
                                                                   : strlen(spec->text_header)
                                           : 0;
    if (spec->text_header && !(r->text_header = malloc(r->text_header_len + 1)))
        r->text_header_len = 0;
    else if (spec->text_header)
        memcpy(r->text_header, spec->text_header, r->text_header_len),
            r->text_header[r->text_header_len] = 0;
    if (spec->text_header && !r->text_header) {
        ss_error("out of memory preparing the output");
        goto fail;
    }
    r->cram_opts =
        (ss_cram_opts_t){.file_id = co->output, .reference = co->reference, .level = r->level};
    if (r->format == SS_FMT_CRAM && ss_cram_frame_build(&r->hdr, &r->cram_opts, &r->cram) < 0)
        goto fail;
    r->idx_kind = index_kind(r);
    if (r->hdr && freeze_header(r->hdr) < 0) {
        ss_error("cannot format the output header (out of memory?)");
        goto fail;
    }
    return r;
fail:
    ss_out_run_destroy(r);
    return NULL;
}

void ss_out_run_destroy(ss_out_run_t *r)
{
    if (!r)
        return;
    if (r->hdr)
        sam_hdr_destroy(r->hdr);
    ss_cram_frame_free(&r->cram);
    free(r->text_header);
    if (r->zpool)
        hts_tpool_destroy(r->zpool);
    free(r);
}

void ss_out_run_zpool(ss_out_run_t *r, int threads)
{
    r->cores = threads;
    if (r->format == SS_FMT_BAM && r->idx_kind == SS_IDX_NONE && r->level != 0 && threads > 1)
        r->zpool = hts_tpool_init(threads);
}

void ss_out_run_busy(ss_out_run_t *r, int delta)
{
    atomic_fetch_add_explicit(&r->busy, delta, memory_order_relaxed);
}

/* The BAM header in its own BGZF blocks, as htslib writes it. 0 or -1. */
static int bam_header(const ss_out_run_t *r, kstring_t *out)
{
    kstring_t raw = KS_INITIALIZE;
    ss_bgzf_pack_t z;
    int rc = -1;
    if (ss_bgzf_pack_init(&z, r->level) == 0 && ss_bam_encode_header(r->hdr, &raw) == 0 &&
        ss_bgzf_pack_write(&z, raw.s, raw.l, 0, out) == 0 && ss_bgzf_pack_flush(&z, out) == 0)
        rc = 0;
    ss_bgzf_pack_destroy(&z);
    free(raw.s);
    return rc;
}

/* Text (a header, a summary) as the output writes it: BGZF-compressed when it is. 0 or -1. */
static int text_bytes(const ss_out_run_t *r, const char *text, size_t len, kstring_t *out)
{
    if (!len)
        return 0;
    if (!r->bgzf)
        return kputsn(text, len, out) < 0 ? -1 : 0;
    kstring_t z = KS_INITIALIZE;
    int rc = ss_bgzf_compress_ks(text, len, &z, r->level);
    if (rc == 0)
        rc = kputsn(z.s, z.l, out) < 0 ? -1 : 0;
    free(z.s);
    return rc;
}

int ss_out_run_header(const ss_out_run_t *r, kstring_t *out)
{
    int rc = 0;
    switch (r->format) {
    case SS_FMT_TEXT:
        rc = r->text_header ? text_bytes(r, r->text_header, r->text_header_len, out) : 0;
        break;
    case SS_FMT_SAM:
        rc = r->sam_header ? text_bytes(r, sam_hdr_str(r->hdr), sam_hdr_length(r->hdr), out) : 0;
        break;
    case SS_FMT_BAM:
        rc = bam_header(r, out);
        break;
    case SS_FMT_CRAM:
        rc = kputsn(r->cram.head.s, r->cram.head.l, out) < 0 ? -1 : 0;
        break;
    }
    if (rc < 0)
        ss_error("cannot encode the %s output header (out of memory?)", format_name(r->format));
    return rc;
}

int ss_out_run_text(const ss_out_run_t *r, const char *text, size_t len, kstring_t *out)
{
    return text_bytes(r, text, len, out);
}

int ss_out_run_trailer(const ss_out_run_t *r, kstring_t *out)
{
    int rc = 0;
    if (r->format == SS_FMT_CRAM)
        rc = kputsn(r->cram.eof.s, r->cram.eof.l, out) < 0 ? -1 : 0;
    else if (r->format == SS_FMT_BAM || r->bgzf)
        rc = kputsn((const char *)ss_bgzf_eof, sizeof(ss_bgzf_eof), out) < 0 ? -1 : 0;
    if (rc < 0)
        ss_error("out of memory ending the output");
    return rc;
}

static int save_merged(ss_output_t *out, const char *output, ss_idx_merge_t *m, const char *ext,
                       uint64_t data_end);

/* bcftools index: a CSI of the finished BCF or VCF.gz, or with -t a TBI (min_shift 0 makes
 * htslib build tabix's index of a VCF.gz); merged from the shards' pieces in m, or (m NULL)
 * read back from the file. 0, or -1 after ss_error(). */
static int vcf_index(const ss_out_run_t *r, ss_output_t *out, const char *output, ss_idx_merge_t *m,
                     uint64_t data_end)
{
    const char *tmp_path = ss_output_tmp_path(out);
    if (!tmp_path) {
        ss_error("%s: --write-index needs -o naming a regular file, not a stream or device",
                 output ? output : "standard output");
        return -1;
    }
    if (r->index_out && ss_output_name_index(out, r->index_out) < 0)
        return -1;
    if (m)
        return save_merged(out, output, m, r->vcf_tbi ? ".tbi" : ".csi", data_end);
    const char *idx = ss_output_index_tmp(out, r->vcf_tbi ? ".tbi" : ".csi");
    if (!idx)
        return -1;
    int rc = bcf_index_build3(tmp_path, idx, r->vcf_tbi ? 0 : 14, r->index_threads);
    if (rc < 0) {
        ss_error("%s: building its index failed (htslib code %d); nothing was written: free "
                 "space on its file system and rerun",
                 output, rc);
        return -1;
    }
    return 0;
}

/* -o FILE##idx##NAME.bai, for BAM or SAM.gz: BAI rather than samtools view's CSI. */
static int wants_bai(const ss_out_run_t *r)
{
    return (r->format == SS_FMT_BAM || r->format == SS_FMT_SAM) && ends_with(r->index_out, ".bai");
}

/*
 * bcf_index's view of a BCF header: the contigs it counts and the longest
 * (2^31 - 1 when no contig has a length). 0, or -1 out of memory or unparsable.
 */
static int bcf_contigs(const ss_out_run_t *r, int *n_ids, hts_pos_t *max_len)
{
    size_t n = r->text_header_len - 9;
    char *text = malloc(n + 1);
    bcf_hdr_t *h = bcf_hdr_init("r");
    int rc = -1;
    if (text && h) {
        memcpy(text, r->text_header + 9, n);
        text[n] = '\0';
        rc = bcf_hdr_parse(h, text) < 0 ? -1 : 0;
    }
    *n_ids = 0, *max_len = 0;
    for (int i = 0; rc == 0 && i < h->n[BCF_DT_CTG]; i++) {
        if (!h->id[BCF_DT_CTG][i].val)
            continue;
        hts_pos_t len = (hts_pos_t)h->id[BCF_DT_CTG][i].val->info[0];
        if (*max_len < len)
            *max_len = len;
        ++*n_ids;
    }
    if (*max_len == 0)
        *max_len = ((hts_pos_t)1 << 31) - 1; /* bcf_index's guess for broken contig lines */
    if (h)
        bcf_hdr_destroy(h);
    free(text);
    return rc;
}

ss_idx_merge_t *ss_out_run_index_merge(const ss_out_run_t *r, uint64_t header_len, int text_csi)
{
    int n_ids;
    hts_pos_t max_len = 0;
    switch (r->idx_kind) {
    case SS_IDX_RECORDS:
    case SS_IDX_SAM:
        for (int i = 0; i < sam_hdr_nref(r->hdr); i++)
            if (max_len < sam_hdr_tid2len(r->hdr, i))
                max_len = sam_hdr_tid2len(r->hdr, i);
        return ss_idx_merge_init(r->idx_kind, wants_bai(r) ? HTS_FMT_BAI : HTS_FMT_CSI,
                                 sam_hdr_nref(r->hdr), max_len, header_len);
    case SS_IDX_BCF:
        if (bcf_contigs(r, &n_ids, &max_len) < 0)
            return NULL;
        return ss_idx_merge_init(SS_IDX_BCF, HTS_FMT_CSI, n_ids, max_len, header_len);
    case SS_IDX_VCF:
        max_len = ss_idx_vcf_max_len(r->text_header, r->text_header_len);
        return ss_idx_merge_init(SS_IDX_VCF, r->vcf_tbi ? HTS_FMT_TBI : HTS_FMT_CSI, 0, max_len,
                                 header_len);
    case SS_IDX_CRAI:
        return ss_idx_merge_init(SS_IDX_CRAI, 0, 0, 0, header_len);
    case SS_IDX_LINES:
        return ss_idx_merge_init(SS_IDX_LINES, text_csi ? HTS_FMT_CSI : HTS_FMT_TBI, 0, 0,
                                 header_len);
    case SS_IDX_NONE:
        break;
    }
    return NULL;
}

/* Save the index merged from the shards as out's index (suffix ext). 0, or -1 after ss_error(). */
static int save_merged(ss_output_t *out, const char *output, ss_idx_merge_t *m, const char *ext,
                       uint64_t data_end)
{
    const char *idx = ss_output_index_tmp(out, ext);
    if (!idx)
        return -1;
    errno = 0;
    int rc = ss_idx_merge_save(m, data_end, idx);
    if (rc == -2)
        ss_error("internal: %s: its shards' index pieces do not end where its data does (byte "
                 "%llu); nothing was written: please report it",
                 output, (unsigned long long)data_end);
    else if (rc < 0)
        ss_error("%s: writing its index failed (%s); nothing was written: free space on its "
                 "file system and rerun",
                 output, errno ? strerror(errno) : "unknown cause");
    return rc < 0 ? -1 : 0;
}

int ss_out_run_index_tabix(const ss_out_run_t *r, ss_output_t *out, const char *output, int csi,
                           ss_idx_merge_t *m, uint64_t data_end)
{
    if (r->index_out && ss_output_name_index(out, r->index_out) < 0)
        return -1;
    if (!m)
        return ss_output_index_tabix(out, csi);
    if (!ss_output_tmp_path(out)) {
        ss_error("%s: a .gz output is indexed, which needs a regular file; give -o a file name",
                 output ? output : "standard output");
        return -1;
    }
    return save_merged(out, output, m, csi ? ".csi" : ".tbi", data_end);
}

int ss_out_run_index(const ss_out_run_t *r, ss_output_t *out, const char *output, ss_idx_merge_t *m,
                     uint64_t data_end)
{
    if (r->vcf_index)
        return vcf_index(r, out, output, m, data_end);
    if (!r->write_index)
        return 0;
    const char *tmp_path = ss_output_tmp_path(out);
    if (!tmp_path) {
        ss_error("%s: --write-index needs -o naming a regular file, not a stream or device",
                 output ? output : "standard output");
        return -1;
    }
    /* samtools view --write-index: CSI for BAM and SAM.gz, CRAI for CRAM; BAI for BAM and
     * SAM.gz when -o FILE##idx##NAME.bai asks for it (min_shift 0 there means BAI) */
    int bai = wants_bai(r);
    int min_shift = r->format == SS_FMT_CRAM || bai ? 0 : 14;
    const char *ext = bai ? ".bai" : min_shift ? ".csi" : ".crai";
    if (r->index_out && ss_output_name_index(out, r->index_out) < 0)
        return -1;
    if (m)
        return save_merged(out, output, m, ext, data_end);
    const char *idx = ss_output_index_tmp(out, ext);
    if (!idx)
        return -1;
    /* no threads for SAM: htslib then parses SAM lines ahead of the file position, and
     * the index's offsets would point at the wrong records */
    int threads = r->format == SS_FMT_SAM ? 0 : r->index_threads;
    int rc = sam_index_build3(tmp_path, idx, min_shift, threads);
    if (rc < 0) {
        if (bai && rc == -2)
            ss_error("%s: a .bai index cannot hold contigs of 2^29 bp or more (samtools says "
                     "the same); nothing was written: name the index .csi",
                     output);
        else
            ss_error("%s: building its index failed (htslib code %d); nothing was written: "
                     "free space on its file system and rerun",
                     output, rc);
        return -1;
    }
    return 0;
}

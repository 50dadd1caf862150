/*
 * test_shard_index.c -- the output's index merged from the shards' pieces
 * (framework/out/shard_index.h): pieces with offsets relative to their
 * shard, shifted by each shard's file offset, give the bytes of an index
 * built from the whole file's absolute offsets (BAM records, .csi and .bai)
 * and of tabix's own index of the same file (text lines, .tbi and .csi),
 * across block edges, shard edges inside one contig, several contigs,
 * unplaced reads at the end, empty shards and text that left memory in
 * pieces; VCF.gz and BCF as bcftools index builds theirs (.csi, .tbi for
 * VCF); SAM.gz as samtools index builds its .csi and .bai; a shard dropped
 * or out of order is refused.
 */
#include <htslib/bgzf.h>
#include <htslib/tbx.h>
#include <htslib/vcf.h>

#include "../framework/out/compress.h"
#include "../framework/out/shard_index.h"
#include "../framework/ss_framework_extra.h"
#include "ss_testutil.h"

/* A record of the synthetic layout: where it starts, relative to its shard. */
typedef struct {
    int tid;
    hts_pos_t beg, end;
    int mapped;
    uint64_t coff, uoff;
} rec_t;

#define MAX_RECS 64

typedef struct {
    rec_t r[MAX_RECS];
    int n;
    uint64_t len; /* the shard's bytes */
} shard_t;

/* A fresh name under /tmp (the caller frees it). */
static char *tmp_path(const char *ext)
{
    return strdup(ss_test_path("shidx", ext));
}

static int file_bytes(const char *path, kstring_t *out)
{
    FILE *f = fopen(path, "rb");
    char buf[65536];
    size_t n;
    if (!f)
        return -1;
    out->l = 0;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        kputsn(buf, n, out);
    fclose(f);
    return 0;
}

/* The two files have the same bytes. */
static void same_file(const char *a, const char *b)
{
    kstring_t x = KS_INITIALIZE, y = KS_INITIALIZE;
    SS_EQ_FATAL(file_bytes(a, &x), 0);
    SS_EQ_FATAL(file_bytes(b, &y), 0);
    SS_EQ(x.l, y.l);
    CU_ASSERT(x.l == y.l && memcmp(x.s, y.s, x.l) == 0);
    free(x.s), free(y.s);
}

/* Where a reader stands after record i of shard s (the next one's start, or the shard's end). */
static uint64_t end_voff(const shard_t *s, int i, uint64_t file_off)
{
    if (i + 1 < s->n)
        return (file_off + s->r[i + 1].coff) << 16 | s->r[i + 1].uoff;
    return (file_off + s->len) << 16;
}

/* Index the shards both ways (absolute offsets into htslib; pieces merged); same bytes. */
static void check_records(const shard_t *sh, int n, int fmt, uint64_t header_len)
{
    char *direct = tmp_path(fmt == HTS_FMT_BAI ? ".bai" : ".csi");
    char *merged = tmp_path(fmt == HTS_FMT_BAI ? ".bai" : ".csi");
    int lvls = fmt == HTS_FMT_BAI ? 5 : 1; /* CSI: contigs up to 100000 bp, as sam_index */
    hts_idx_t *idx = hts_idx_init(3, fmt, header_len << 16, 14, lvls);
    ss_idx_merge_t *m = ss_idx_merge_init(SS_IDX_RECORDS, fmt, 3, 100000, header_len);
    CU_ASSERT_FATAL(idx && m);
    uint64_t off = header_len;
    ss_idx_piece_t p = {0};
    kstring_t piece = KS_INITIALIZE;
    for (int k = 0; k < n; k++) {
        const shard_t *s = &sh[k];
        ss_idx_piece_reset(&p, SS_IDX_RECORDS);
        for (int i = 0; i < s->n; i++) {
            const rec_t *r = &s->r[i];
            SS_EQ(hts_idx_push(idx, r->tid, r->beg, r->end, end_voff(s, i, off), r->mapped), 0);
            SS_EQ(ss_idx_piece_record_at(&p, r->tid, r->beg, r->end, r->mapped,
                                         r->coff << 16 | r->uoff),
                  0);
        }
        SS_EQ(ss_idx_piece_end(&p, s->len, 0), 0);
        ss_idx_piece_take(&p, &piece);
        SS_EQ(ss_idx_piece_shard_len(piece.s, piece.l), (long long)s->len);
        SS_EQ(ss_idx_merge_add(m, piece.s, piece.l, off), 0);
        free(piece.s);
        piece = (kstring_t)KS_INITIALIZE;
        off += s->len;
    }
    SS_EQ(hts_idx_finish(idx, off << 16), 0);
    SS_EQ(hts_idx_save_as(idx, direct, direct, fmt), 0);
    SS_EQ(ss_idx_merge_save(m, off, merged), 0);
    same_file(direct, merged);
    hts_idx_destroy(idx);
    ss_idx_merge_destroy(m);
    ss_idx_piece_free(&p);
    unlink(direct), unlink(merged);
    free(direct), free(merged);
}

/* n records on tid from beg, 150 bp, 400 bytes each, from block coff offset uoff on. */
static void add_recs(shard_t *s, int tid, hts_pos_t beg, int n, uint64_t coff, uint64_t uoff)
{
    for (int i = 0; i < n && s->n < MAX_RECS; i++) {
        if (uoff + 400 > BGZF_BLOCK_SIZE)
            coff += 9000, uoff = 0; /* the next block (its compressed size, say) */
        s->r[s->n++] =
            (rec_t){tid,  beg + 37 * i, tid < 0 ? 0 : beg + 37 * i + 150, tid >= 0 && i % 5 != 4,
                    coff, uoff};
        uoff += 400;
    }
}

/* shards: 0 one contig across two blocks; 1 the same contig on (a chunk over the shard edge);
 * 2 empty; 3 the contig's end and the next contig; 4 the unplaced reads at the file's end. */
static int make_shards(shard_t *sh)
{
    memset(sh, 0, 5 * sizeof(*sh));
    add_recs(&sh[0], 0, 100, 40, 0, 0); /* 160 blocks of 400 bytes: two blocks */
    sh[0].len = 2 * 9000;
    add_recs(&sh[1], 0, 20000, 10, 0, 0);
    sh[1].len = 9000;
    sh[2].len = 0;
    add_recs(&sh[3], 0, 99000, 3, 0, 0);
    add_recs(&sh[3], 2, 5, 20, 0, 1200);
    sh[3].len = 9000;
    add_recs(&sh[4], -1, -1, 12, 0, 0);
    sh[4].len = 9000;
    return 5;
}

static void test_records_csi(void)
{
    shard_t sh[5];
    check_records(sh, make_shards(sh), HTS_FMT_CSI, 731);
}

static void test_records_bai(void)
{
    shard_t sh[5];
    check_records(sh, make_shards(sh), HTS_FMT_BAI, 731);
}

/* A piece added at another offset than where the previous shard ended (one dropped, or
 * written out of order), or cut short, is refused, and so is an end the shards do not reach. */
static void test_gap_refused(void)
{
    shard_t sh[5];
    make_shards(sh);
    ss_idx_merge_t *m = ss_idx_merge_init(SS_IDX_RECORDS, HTS_FMT_CSI, 3, 100000, 100);
    ss_idx_piece_t p = {0};
    kstring_t a = KS_INITIALIZE, b = KS_INITIALIZE;
    CU_ASSERT_FATAL(m != NULL);
    for (int k = 0; k < 2; k++) {
        ss_idx_piece_reset(&p, SS_IDX_RECORDS);
        for (int i = 0; i < sh[k].n; i++)
            ss_idx_piece_record_at(&p, sh[k].r[i].tid, sh[k].r[i].beg, sh[k].r[i].end, 1,
                                   sh[k].r[i].coff << 16 | sh[k].r[i].uoff);
        SS_EQ(ss_idx_piece_end(&p, sh[k].len, 0), 0);
        ss_idx_piece_take(&p, k ? &b : &a);
    }
    SS_EQ(ss_idx_merge_add(m, a.s, a.l, 100), 0);
    SS_EQ(ss_idx_merge_add(m, b.s, b.l, 100 + sh[0].len + 5), -1); /* a gap */
    SS_EQ(ss_idx_merge_add(m, a.s, a.l - 1, 100 + sh[0].len), -1); /* a cut piece */
    SS_EQ(ss_idx_merge_save(m, 100 + sh[0].len + sh[1].len, "/nonexistent/x.csi"), -2);
    SS_EQ(ss_idx_merge_add(m, b.s, b.l, 100 + sh[0].len), 0);
    ss_idx_merge_destroy(m);
    ss_idx_piece_free(&p);
    free(a.s), free(b.s);
}

/* Pileup-like lines: contig, 1-based position, then padding to width bytes. */
static void pileup_lines(kstring_t *s, const char *ctg, int from, int n, int width)
{
    for (int i = 0; i < n; i++) {
        size_t l0 = s->l;
        ksprintf(s, "%s\t%d\tA\t", ctg, from + i);
        while ((int)(s->l - l0) < width - 1)
            kputc('.', s);
        kputc('\n', s);
    }
}

/* SAM: the header the shards' lines are read with (test_sam_like_samtools sets it). */
static sam_hdr_t *sam_test_hdr;

/* The line of t at `at` (ending in a newline) into line, without it; where the next starts. */
static size_t next_line(const kstring_t *t, size_t at, kstring_t *line)
{
    const char *nl = memchr(t->s + at, '\n', t->l - at);
    line->l = 0;
    kputsn(t->s + at, (size_t)(nl - (t->s + at)), line);
    return (size_t)(nl - t->s) + 1;
}

/* SAM: each line of the shard's text noted as out_shard.c notes it, at the raw offset after it. */
static void note_sam(ss_idx_piece_t *p, const kstring_t *t)
{
    bam1_t *b = bam_init1();
    kstring_t line = KS_INITIALIZE;
    for (size_t at = 0; at < t->l;) {
        at = next_line(t, at, &line);
        SS_EQ_FATAL(sam_parse1(&line, sam_test_hdr, b), 0);
        SS_EQ(ss_idx_piece_text_record(p, b->core.tid, b->core.pos, bam_endpos(b),
                                       !(b->core.flag & BAM_FUNMAP), at),
              0);
    }
    free(line.s);
    bam_destroy1(b);
}

/*
 * One shard's text as out_shard.c hands it over: `cuts` spills of whole blocks
 * (a line may straddle each), then the rest; its bytes appended to file.
 */
static void text_shard(ss_idx_piece_t *p, ss_idx_kind_t kind, const kstring_t *t, int cuts,
                       kstring_t *file, kstring_t *piece)
{
    kstring_t z = KS_INITIALIZE;
    uint64_t done = 0, shard_len = 0;
    ss_idx_piece_reset(p, kind);
    if (kind == SS_IDX_SAM)
        note_sam(p, t);
    for (int c = 0; c <= cuts; c++) {
        uint64_t n = c < cuts ? (t->l - done) / 2 : t->l - done;
        if (c < cuts)
            n -= n % BGZF_BLOCK_SIZE;
        SS_EQ(ss_idx_piece_lines(p, t->s + done, t->l - done, done, n, c == cuts), 0);
        z.l = 0;
        if (n)
            SS_EQ(ss_bgzf_compress_ks(t->s + done, n, &z, 1), 0);
        SS_EQ(ss_idx_piece_blocks(p, z.s, z.l), 0);
        if (z.l)
            kputsn(z.s, z.l, file);
        shard_len += z.l;
        done += n;
    }
    SS_EQ(ss_idx_piece_end(p, shard_len, t->l), 0);
    ss_idx_piece_take(p, piece);
    free(z.s);
}

/* The file's index as the tool builds it: tabix -s1 -b2 -e2, samtools index (SAM), or
 * bcftools index (VCF, BCF). */
static int their_index(ss_idx_kind_t kind, const char *path, const char *theirs, int csi)
{
    tbx_conf_t conf = {TBX_GENERIC, 1, 2, 2, '#', 0};
    if (kind == SS_IDX_LINES)
        return tbx_index_build2(path, theirs, csi ? 14 : 0, &conf);
    if (kind == SS_IDX_SAM)
        return sam_index_build3(path, theirs, csi ? 14 : 0, 0);
    return bcf_index_build3(path, theirs, csi ? 14 : 0, 0);
}

/*
 * The shards' text (BCF: records) merged as pieces, against the tool's index
 * of the same file (their_index). header: the file's first bytes (hlen), or
 * NULL. BCF: n_ids contigs up to max_len bp; VCF: max_len from the header.
 */
static void check_text(ss_idx_kind_t kind, const char *header, size_t hlen, kstring_t *t, int n,
                       int cuts, int csi, int n_ids, hts_pos_t max_len)
{
    char *path = tmp_path(kind == SS_IDX_BCF   ? ".bcf"
                          : kind == SS_IDX_VCF ? ".vcf.gz"
                          : kind == SS_IDX_SAM ? ".sam.gz"
                                               : ".txt.gz");
    char *merged = tmp_path(csi ? ".csi" : ".tbi");
    char theirs[4200];
    snprintf(theirs, sizeof(theirs), "%s%s", path, csi ? ".csi" : ".tbi");
    kstring_t file = KS_INITIALIZE, piece = KS_INITIALIZE;
    if (header)
        SS_EQ(ss_bgzf_compress_ks(header, hlen, &file, 1), 0);
    if (kind == SS_IDX_VCF)
        max_len = ss_idx_vcf_max_len(header, hlen);
    int fmt = csi ? HTS_FMT_CSI : kind == SS_IDX_SAM ? HTS_FMT_BAI : HTS_FMT_TBI;
    ss_idx_merge_t *m = ss_idx_merge_init(kind, fmt, n_ids, max_len, file.l);
    ss_idx_piece_t p = {0};
    CU_ASSERT_FATAL(m != NULL);
    for (int k = 0; k < n; k++) {
        uint64_t off = file.l;
        free(piece.s); /* take wants an empty string */
        piece = (kstring_t)KS_INITIALIZE;
        text_shard(&p, kind, &t[k], cuts, &file, &piece);
        SS_EQ(ss_idx_merge_add(m, piece.s, piece.l, off), 0);
    }
    uint64_t data_end = file.l;
    kputsn((const char *)ss_bgzf_eof, sizeof(ss_bgzf_eof), &file);
    FILE *f = fopen(path, "wb");
    CU_ASSERT_FATAL(f && fwrite(file.s, 1, file.l, f) == file.l);
    fclose(f);
    SS_EQ(their_index(kind, path, theirs, csi), 0);
    SS_EQ(ss_idx_merge_save(m, data_end, merged), 0);
    same_file(theirs, merged);
    ss_idx_merge_destroy(m);
    ss_idx_piece_free(&p);
    unlink(path), unlink(merged), unlink(theirs);
    free(path), free(merged), free(file.s), free(piece.s);
}

static void check_lines(const char *header, kstring_t *t, int n, int cuts, int csi)
{
    check_text(SS_IDX_LINES, header, header ? strlen(header) : 0, t, n, cuts, csi, 0, 0);
}

static void test_lines_like_tabix(void)
{
    kstring_t t[4] = {KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE};
    pileup_lines(&t[0], "chrA", 1, 9000, 47);    /* several blocks; lines across their edges */
    pileup_lines(&t[1], "chrA", 9001, 1360, 48); /* 65280 bytes: the last line ends the block */
    pileup_lines(&t[2], "chrA", 10361, 20, 30);
    pileup_lines(&t[2], "chrB", 1, 4000, 61); /* a new contig inside a shard */
    /* t[3] empty */
    for (int csi = 0; csi < 2; csi++)
        for (int cuts = 0; cuts < 3; cuts++) {
            check_lines(NULL, t, 4, cuts, csi);
            check_lines("#CHROM\tPOS\n##more\n", t, 4, cuts, csi);
        }
    for (int i = 0; i < 4; i++)
        free(t[i].s);
}

/* A base per line, as pileup writes: the piece keeps two entries per 16 kb window (its first
 * line, and the last, which carries the count of those left out), not a line each; the
 * merged index still has tabix's bytes, pseudo-bin counts included. */
static void test_lines_runs_are_short(void)
{
    kstring_t t[2] = {KS_INITIALIZE, KS_INITIALIZE}, piece = KS_INITIALIZE, file = KS_INITIALIZE;
    pileup_lines(&t[0], "chrA", 1, 100000, 12);
    pileup_lines(&t[1], "chrA", 100001, 30000, 12);
    pileup_lines(&t[1], "chrB", 1, 40000, 12);
    ss_idx_piece_t p = {0};
    text_shard(&p, SS_IDX_LINES, &t[0], 1, &file, &piece);
    uint64_t n_ent = 0;
    for (int i = 7; i >= 0; i--)
        n_ent = n_ent << 8 | (uint8_t)piece.s[24 + i]; /* header field 3: the entries */
    CU_ASSERT(n_ent <= 2 * (100000 / 16384 + 1));
    for (int csi = 0; csi < 2; csi++)
        check_lines(NULL, t, 2, 1, csi);
    ss_idx_piece_free(&p);
    free(piece.s), free(file.s), free(t[0].s), free(t[1].s);
}

/* A meta line before any data line moves tabix's first offset; an unparsable line is
 * skipped; the merge of a shard with no lines at all is tabix's empty index. */
static void test_lines_meta_and_empty(void)
{
    kstring_t t[2] = {KS_INITIALIZE, KS_INITIALIZE};
    kputs("#first\nno-tab-here\n", &t[0]);
    pileup_lines(&t[0], "chrZ", 5, 10, 20);
    check_lines(NULL, t, 2, 0, 0);
    check_lines(NULL, &t[1], 1, 0, 1);
    free(t[0].s);
}

/* A last line without its newline cannot be placed from the shard alone: the piece says so. */
static void test_unterminated_line(void)
{
    ss_idx_piece_t p = {0};
    ss_idx_piece_reset(&p, SS_IDX_LINES);
    const char *text = "chrA\t1\tx\nchrA\t2";
    SS_EQ(ss_idx_piece_lines(&p, text, strlen(text), 0, strlen(text), 1), -1);
    SS_EQ(ss_idx_piece_end(&p, 100, strlen(text)), -1);
    ss_idx_piece_free(&p);
}

static const char vcf_header[] = "##fileformat=VCFv4.2\n"
                                 "##contig=<ID=chrA,length=700000>\n"
                                 "##contig=<ID=chrB,length=900>\n"
                                 "##contig=<ID=chrC,length=5000>\n"
                                 "##INFO=<ID=END,Number=1,Type=Integer,Description=\"End\">\n"
                                 "##INFO=<ID=DP,Number=1,Type=Integer,Description=\"Depth\">\n"
                                 "##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n"
                                 "#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT\tS1\n";

/* VCF lines from pos on, step apart: REFs of 1-7 bases, INFO/END now and then (gVCF blocks). */
static void vcf_lines(kstring_t *s, const char *ctg, int pos, int n, int step)
{
    static const char *refs[] = {"A", "ACG", "ACGTACG", "C"};
    for (int i = 0; i < n; i++, pos += step) {
        ksprintf(s, "%s\t%d\t.\t%s\tT\t30\t.\t", ctg, pos, refs[i % 4]);
        if (i % 5 == 1)
            ksprintf(s, "END=%d", pos + 40 + i % 200);
        else if (i % 5 == 2)
            ksprintf(s, "DP=7;END=%d", pos + 3);
        else
            kputs("DP=12", s);
        kputs("\tGT\t0/1\n", s);
    }
}

/* Four shards of VCF lines: blocks, contigs changing inside and between shards, one empty. */
static void vcf_shards(kstring_t t[4])
{
    vcf_lines(&t[0], "chrA", 1, 2000, 100); /* several blocks */
    vcf_lines(&t[1], "chrA", 200001, 10, 1000);
    vcf_lines(&t[1], "chrB", 1, 30, 20);
    /* t[2] empty */
    vcf_lines(&t[3], "chrC", 10, 300, 7);
}

/* VCF.gz lines as bcftools index reads them (tbx_index, VCF preset): .csi and -t's .tbi. */
static void test_vcf_like_bcftools(void)
{
    kstring_t t[4] = {KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE};
    vcf_shards(t);
    /* INFO/END tabix ignores (not past POS, '.', another tag's tail), a line without REF */
    kputs("chrC\t2200\t.\tA\tT\t.\t.\tEND=2100\tGT\t0\n"
          "chrC\t2300\t.\tA\tT\t.\t.\tEND=.;DP=1\tGT\t0\n"
          "chrC\t2400\t.\tA\tT\t.\t.\tXEND=2900\tGT\t0\n"
          "chrC\t2500\t.\tA\tT\t.\t.\tDP=1;END=2600\n"
          "chrC\t2700\t.\t\tT\t.\t.\tDP=1\n"
          "chrC\t2800\n",
          &t[3]);
    for (int csi = 0; csi < 2; csi++)
        for (int cuts = 0; cuts < 3; cuts++)
            check_text(SS_IDX_VCF, vcf_header, strlen(vcf_header), t, 4, cuts, csi, 0, 0);
    for (int i = 0; i < 4; i++)
        free(t[i].s);
}

/* A BCF's header bytes (magic, text length, text and its NUL) for the VCF header's text. */
static void bcf_head_bytes(kstring_t *out)
{
    uint32_t n = (uint32_t)strlen(vcf_header) + 1;
    kputsn("BCF\2\2", 5, out);
    for (int i = 0; i < 4; i++)
        kputc((char)(n >> (8 * i)), out);
    kputsn(vcf_header, n, out);
}

/* VCF text lines as BCF records, as mpileup's writer lays them out (htslib parses them). */
static void to_bcf(bcf_hdr_t *h, const kstring_t *vcf, kstring_t *out)
{
    bcf1_t *v = bcf_init1();
    kstring_t line = KS_INITIALIZE;
    for (size_t at = 0; at < vcf->l;) {
        at = next_line(vcf, at, &line);
        SS_EQ_FATAL(vcf_parse(&line, h, v), 0);
        uint32_t x[8] = {(uint32_t)v->shared.l + 24,
                         (uint32_t)v->indiv.l,
                         (uint32_t)v->rid,
                         (uint32_t)v->pos,
                         (uint32_t)v->rlen,
                         0,
                         (uint32_t)v->n_info | (uint32_t)v->n_allele << 16,
                         (uint32_t)v->n_fmt << 24 | v->n_sample};
        memcpy(&x[5], &v->qual, 4);
        for (int k = 0; k < 8; k++)
            for (int j = 0; j < 4; j++)
                kputc((char)(x[k] >> (8 * j)), out);
        kputsn(v->shared.s, v->shared.l, out);
        kputsn(v->indiv.s, v->indiv.l, out);
    }
    free(line.s);
    bcf_destroy1(v);
}

/* BCF records as bcftools index reads them (bcf_index): rlen from REF or END; records across
 * block edges and spills. */
static void test_bcf_like_bcftools(void)
{
    kstring_t t[4] = {KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE};
    kstring_t b[4] = {KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE};
    kstring_t head = KS_INITIALIZE, text = KS_INITIALIZE;
    vcf_shards(t);
    bcf_hdr_t *h = bcf_hdr_init("r");
    kputs(vcf_header, &text);
    CU_ASSERT_FATAL(h && bcf_hdr_parse(h, text.s) == 0);
    for (int i = 0; i < 4; i++)
        to_bcf(h, &t[i], &b[i]);
    bcf_head_bytes(&head);
    for (int cuts = 0; cuts < 3; cuts++)
        check_text(SS_IDX_BCF, head.s, head.l, b, 4, cuts, 1, 3, 700000);
    bcf_hdr_destroy(h);
    for (int i = 0; i < 4; i++)
        free(t[i].s), free(b[i].s);
    free(head.s), free(text.s);
}

/* A BCF shard whose text ends inside a record cannot be indexed from its piece. */
static void test_bcf_cut_record(void)
{
    ss_idx_piece_t p = {0};
    ss_idx_piece_reset(&p, SS_IDX_BCF);
    uint8_t rec[40] = {24 + 4, 0, 0, 0, 4, 0, 0, 0}; /* 8 + 28 + 4 = 40 bytes */
    SS_EQ(ss_idx_piece_lines(&p, (const char *)rec, 40, 0, 0, 0), 0);
    SS_EQ(ss_idx_piece_lines(&p, (const char *)rec, 30, 0, 30, 1), -1);
    SS_EQ(ss_idx_piece_end(&p, 100, 30), -1);
    ss_idx_piece_free(&p);
}

static const char sam_header[] = "@HD\tVN:1.6\tSO:coordinate\n"
                                 "@SQ\tSN:chrA\tLN:700000\n"
                                 "@SQ\tSN:chrB\tLN:900\n"
                                 "@SQ\tSN:chrC\tLN:5000\n";

/*
 * SAM lines of width bytes each (the name padded): 10 bp reads from pos on,
 * step apart, every 7th unmapped at its place; ctg "*": unplaced reads.
 */
static void sam_lines(kstring_t *s, const char *ctg, int pos, int n, int step, int width)
{
    for (int i = 0; i < n; i++, pos += step) {
        int placed = strcmp(ctg, "*") != 0, unmapped = !placed || i % 7 == 3;
        char rest[256];
        int len =
            snprintf(rest, sizeof(rest), "\t%d\t%s\t%d\t60\t%s\t*\t0\t0\tACGTACGTAC\tIIIIIIIIII\n",
                     unmapped ? 4 : 0, ctg, placed ? pos : 0, unmapped ? "*" : "10M");
        size_t l0 = s->l;
        ksprintf(s, "r%d.", i);
        while ((int)(s->l - l0) < width - len)
            kputc('x', s);
        kputs(rest, s);
    }
}

/* SAM.gz as samtools index reads it (sam_index): records across block edges and spills, a
 * shard ending exactly at a block's end, unmapped reads placed and unplaced (n_no_coor). */
static void test_sam_like_samtools(void)
{
    kstring_t t[5] = {KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE, KS_INITIALIZE};
    sam_lines(&t[0], "chrA", 1, 3000, 100, 90);     /* several blocks */
    sam_lines(&t[1], "chrA", 300001, 680, 300, 96); /* 65280 bytes: the last line ends the block */
    sam_lines(&t[2], "chrA", 600000, 10, 1000, 80);
    sam_lines(&t[2], "chrB", 1, 30, 20, 70); /* a new contig inside a shard */
    /* t[3] empty */
    sam_lines(&t[4], "chrC", 10, 300, 7, 85);
    sam_lines(&t[4], "*", 0, 40, 0, 75);
    CU_ASSERT_FATAL((sam_test_hdr = sam_hdr_parse(strlen(sam_header), sam_header)) != NULL);
    for (int csi = 0; csi < 2; csi++)
        for (int cuts = 0; cuts < 3; cuts++)
            check_text(SS_IDX_SAM, sam_header, strlen(sam_header), t, 5, cuts, csi, 3, 700000);
    sam_hdr_destroy(sam_test_hdr);
    sam_test_hdr = NULL;
    for (int i = 0; i < 5; i++)
        free(t[i].s);
}

/* SAM: text no record of the shard's wrote (after its last line) makes the piece unusable. */
static void test_sam_text_after_records(void)
{
    ss_idx_piece_t p = {0};
    ss_idx_piece_reset(&p, SS_IDX_SAM);
    SS_EQ(ss_idx_piece_text_record(&p, 0, 9, 19, 1, 60), 0);
    SS_EQ(ss_idx_piece_end(&p, 100, 75), -1);
    ss_idx_piece_reset(&p, SS_IDX_SAM);
    SS_EQ(ss_idx_piece_text_record(&p, 0, 9, 19, 1, 60), 0);
    SS_EQ(ss_idx_piece_end(&p, 100, 60), 0);
    ss_idx_piece_free(&p);
}

/* One shard's .crai lines as a piece: offsets count from a CRAM whose frame is head bytes. */
static void crai_piece(const char *lines, uint64_t shard_len, uint64_t head, kstring_t *piece)
{
    ss_idx_piece_t p = {0};
    ss_idx_piece_reset(&p, SS_IDX_CRAI);
    SS_EQ(ss_idx_piece_crai(&p, lines, strlen(lines)), 0);
    SS_EQ(ss_idx_piece_end(&p, shard_len, head), 0);
    ss_idx_piece_take(&p, piece);
    ss_idx_piece_free(&p);
}

/* CRAM: each shard's container offsets move to where its containers were written; the
 * lines come out gzip-compressed in shard order; a line without its fields is refused. */
static void test_crai_shifted(void)
{
    kstring_t a = KS_INITIALIZE, b = KS_INITIALIZE, c = KS_INITIALIZE, got = KS_INITIALIZE;
    crai_piece("0\t1\t500\t1000\t200\t3000\n0\t480\t900\t4300\t210\t2500\n", 6000, 1000, &a);
    crai_piece("", 0, 1000, &b); /* an empty shard */
    crai_piece("1\t1\t70\t1000\t190\t800\n", 1100, 1000, &c);
    ss_idx_merge_t *m = ss_idx_merge_init(SS_IDX_CRAI, 0, 0, 0, 1000);
    CU_ASSERT_FATAL(m != NULL);
    SS_EQ(ss_idx_merge_add(m, a.s, a.l, 1000), 0);
    SS_EQ(ss_idx_merge_add(m, b.s, b.l, 7000), 0);
    SS_EQ(ss_idx_merge_add(m, c.s, c.l, 7000), 0);
    char *path = tmp_path(".crai");
    SS_EQ(ss_idx_merge_save(m, 8100, path), 0);
    BGZF *z = bgzf_open(path, "r");
    CU_ASSERT_FATAL(z != NULL);
    char buf[4096];
    ssize_t n = bgzf_read(z, buf, sizeof(buf));
    bgzf_close(z);
    CU_ASSERT_FATAL(n > 0);
    kputsn(buf, (size_t)n, &got);
    const char *want = "0\t1\t500\t1000\t200\t3000\n0\t480\t900\t4300\t210\t2500\n"
                       "1\t1\t70\t7000\t190\t800\n";
    SS_EQ(strcmp(got.s, want), 0);
    ss_idx_merge_destroy(m);
    free(a.s), free(c.s);
    a = (kstring_t)KS_INITIALIZE;
    crai_piece("0\t1\t500\n", 10, 1000, &a);
    m = ss_idx_merge_init(SS_IDX_CRAI, 0, 0, 0, 1000);
    SS_EQ(ss_idx_merge_add(m, a.s, a.l, 1000), -1);
    ss_idx_merge_destroy(m);
    unlink(path);
    free(path), free(a.s), free(b.s), free(got.s);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("shard_index", NULL, NULL);
    if (!s || !CU_add_test(s, "records_csi", test_records_csi) ||
        !CU_add_test(s, "records_bai", test_records_bai) ||
        !CU_add_test(s, "gap_refused", test_gap_refused) ||
        !CU_add_test(s, "lines_like_tabix", test_lines_like_tabix) ||
        !CU_add_test(s, "lines_runs_are_short", test_lines_runs_are_short) ||
        !CU_add_test(s, "lines_meta_and_empty", test_lines_meta_and_empty) ||
        !CU_add_test(s, "unterminated_line", test_unterminated_line) ||
        !CU_add_test(s, "vcf_like_bcftools", test_vcf_like_bcftools) ||
        !CU_add_test(s, "bcf_like_bcftools", test_bcf_like_bcftools) ||
        !CU_add_test(s, "bcf_cut_record", test_bcf_cut_record) ||
        !CU_add_test(s, "sam_like_samtools", test_sam_like_samtools) ||
        !CU_add_test(s, "sam_text_after_records", test_sam_text_after_records) ||
        !CU_add_test(s, "crai_shifted", test_crai_shifted))
        return 1;
    return ss_test_run();
}

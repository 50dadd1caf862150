/*
 * rl_known.c -- --known indels: indexed VCF.gz (tabix or CSI) or BCF, read per
 * shard by region, so memory follows the shard, not the file. Checked once
 * before work: each file opens, has an index, and every contig it holds
 * records for is one of the input's (else one line, and nothing runs).
 * Each worker holds one descriptor per file (at most 2: the kernel's own
 * share of the descriptor budget).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <htslib/bgzf.h>
#include <htslib/tbx.h>
#include <htslib/vcf.h>

#include "realign.h"

typedef struct {
    const char *path;
    htsFile *fp;
    bcf_hdr_t *hdr;
    tbx_t *tbx;     /* VCF.gz */
    hts_idx_t *idx; /* BCF */
    bcf1_t *rec;
    kstring_t line;
} known_file_t;

struct rl_known_s {
    known_file_t f[2];
    int n;
};

static void close_file(known_file_t *f)
{
    if (f->rec)
        bcf_destroy(f->rec);
    if (f->tbx)
        tbx_destroy(f->tbx);
    if (f->idx)
        hts_idx_destroy(f->idx);
    if (f->hdr)
        bcf_hdr_destroy(f->hdr);
    if (f->fp)
        hts_close(f->fp);
    free(f->line.s);
    memset(f, 0, sizeof(*f));
}

static int open_file(known_file_t *f, const char *path)
{
    memset(f, 0, sizeof(*f));
    f->path = path;
    if (!(f->fp = hts_open(path, "r"))) {
        ss_error("--known %s: cannot open it; give an indexed VCF.gz or BCF", path);
        return -1;
    }
    enum htsExactFormat fmt = hts_get_format(f->fp)->format;
    if ((fmt != vcf && fmt != bcf) || !(f->hdr = bcf_hdr_read(f->fp))) {
        ss_error("--known %s: not a VCF or BCF file (or its header is damaged)", path);
        return -1;
    }
    /* cut at a block boundary, htslib reads it to its end with no error: the index's
     * records past the cut would be missing, so a file without its BGZF EOF block is refused */
    int eof = f->fp->format.compression == bgzf ? bgzf_check_EOF(f->fp->fp.bgzf) : 1;
    if (eof != 1 && eof != 2) { /* 2: not seekable, nothing to check */
        ss_error("--known %s: no BGZF end-of-file block: the file is truncated; compress it "
                 "again with bgzip (or bcftools view -O b) and index it",
                 path);
        return -1;
    }
    if (fmt == bcf)
        f->idx = bcf_index_load(path);
    else if (f->fp->format.compression == bgzf)
        f->tbx = tbx_index_load(path);
    if (!f->idx && !f->tbx) {
        ss_error("--known %s: no index; compress it with bgzip and run tabix -p vcf (or "
                 "bcftools index) on it",
                 path);
        return -1;
    }
    if (!(f->rec = bcf_init())) {
        ss_error("--known %s: out of memory", path);
        return -1;
    }
    return 0;
}

/* Every contig the index holds records for must be one of the input's. */
static int check_contigs(known_file_t *f, const sam_hdr_t *h, const char *fasta)
{
    int n = 0;
    const char **names = f->tbx ? tbx_seqnames(f->tbx, &n) : bcf_index_seqnames(f->idx, f->hdr, &n);
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (sam_hdr_name2tid((sam_hdr_t *)h, names[i]) < 0)
            bad = i;
    if (bad >= 0)
        ss_error("--known %s: contig '%s' is not in the input's header (nor, so, in %s); "
                 "give known sites made against the same reference",
                 f->path, names[bad], fasta ? fasta : "the reference");
    free(names);
    return bad >= 0 ? -1 : 0;
}

int rl_known_check(const rl_opts_t *o, const sam_hdr_t *h, const char *fasta)
{
    for (int i = 0; i < o->n_known; i++) {
        known_file_t f;
        int r = open_file(&f, o->known[i]);
        if (r == 0)
            r = check_contigs(&f, h, fasta);
        close_file(&f);
        if (r < 0)
            return -1;
    }
    return 0;
}

rl_known_t *rl_known_open(const rl_opts_t *o)
{
    rl_known_t *kn = calloc(1, sizeof(*kn));
    if (!kn) {
        ss_error("out of memory opening the --known files");
        return NULL;
    }
    for (; kn->n < o->n_known; kn->n++)
        if (open_file(&kn->f[kn->n], o->known[kn->n]) < 0) {
            kn->n++;
            rl_known_close(kn);
            return NULL;
        }
    return kn;
}

void rl_known_close(rl_known_t *kn)
{
    if (!kn)
        return;
    for (int i = 0; i < kn->n; i++)
        close_file(&kn->f[i]);
    free(kn);
}

static int same_base(char a, char b)
{
    return (a & ~0x20) == (b & ~0x20);
}

int rl_indel_from_alleles(hts_pos_t pos, const char *ref, const char *alt, rl_indel_t *e)
{
    int lr = (int)strlen(ref), la = (int)strlen(alt), p = 0;
    if (lr == la || strchr(alt, '<') || strchr(alt, '[') || strchr(alt, ']') || alt[0] == '*')
        return -1;
    while (lr > 0 && la > 0 && same_base(ref[lr - 1], alt[la - 1])) /* common suffix */
        lr--, la--;
    while (p < lr && p < la && same_base(ref[p], alt[p])) /* common prefix */
        p++;
    int dl = lr - p, il = la - p;
    if ((dl > 0 && il > 0) || dl + il == 0 || dl > RL_MAX_INDEL || il > RL_MAX_INDEL)
        return -1; /* not one simple indel, or too long to be a candidate */
    e->pos = pos + p;
    e->len = il > 0 ? il : -dl;
    for (int i = 0; i < il; i++)
        e->seq[i] = (char)(alt[p + i] & ~0x20);
    e->seq[il > 0 ? il : 0] = '\0';
    return 0;
}

/* Each simple indel allele of the record, normalised, into the block. */
static int add_record(known_file_t *f, const rl_ref_t *ref, rl_block_t *k)
{
    bcf1_t *r = f->rec;
    if (bcf_unpack(r, BCF_UN_STR) < 0)
        return -1;
    for (int a = 1; a < r->n_allele; a++) {
        rl_indel_t e;
        if (rl_indel_from_alleles(r->pos, r->d.allele[0], r->d.allele[a], &e) < 0)
            continue;
        rl_indel_norm(&e, ref);
        if (rl_block_add_known(k, &e) < 0)
            return -1;
    }
    return 0;
}

static int load_file(known_file_t *f, const char *name, hts_pos_t beg, hts_pos_t end,
                     const rl_ref_t *ref, rl_block_t *k)
{
    int tid = f->tbx ? tbx_name2id(f->tbx, name) : bcf_hdr_name2id(f->hdr, name);
    if (tid < 0)
        return 0; /* no records on this contig */
    hts_itr_t *it =
        f->tbx ? tbx_itr_queryi(f->tbx, tid, beg, end) : bcf_itr_queryi(f->idx, tid, beg, end);
    if (!it) {
        ss_error("--known %s: out of memory querying %s:%lld-%lld", f->path, name,
                 (long long)beg + 1, (long long)end);
        return -1;
    }
    int r, ret = 0;
    while (ret == 0) {
        if (f->tbx) {
            if ((r = tbx_itr_next(f->fp, f->tbx, it, &f->line)) < 0)
                break;
            r = vcf_parse1(&f->line, f->hdr, f->rec);
        } else if ((r = bcf_itr_next(f->fp, it, f->rec)) < 0) {
            break;
        }
        ret = r < 0 ? -1 : add_record(f, ref, k);
    }
    hts_itr_destroy(it);
    if (ret == 0 && r < -1)
        ret = -1;
    if (ret < 0)
        ss_error("--known %s: cannot read the records of %s:%lld-%lld: the file is damaged "
                 "or out of memory; check it with bcftools view",
                 f->path, name, (long long)beg + 1, (long long)end);
    return ret;
}

int rl_known_load(rl_known_t *kn, const char *name, hts_pos_t beg, hts_pos_t end,
                  const rl_ref_t *ref, rl_block_t *k)
{
    for (int i = 0; kn && i < kn->n; i++)
        if (load_file(&kn->f[i], name, beg, end, ref, k) < 0)
            return -1;
    return 0;
}

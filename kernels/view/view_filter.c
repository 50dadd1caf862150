/*
 * view_filter.c -- samtools view 1.16's filters and record edits that go
 * beyond flags and mapping quality: -e expressions, -s/--subsample,
 * -l/--library, -x/--remove-tag and --keep-tag. Parsing on the main thread
 * (vw_parse), the per-record parts on worker threads, each with its own
 * compiled expression.
 */
#include <htslib/hts_expr.h>
#include <htslib/khash.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

/* ---- options ---- */

/*
 * A comma-separated list of two-character tags ("XA,MD"), added to *list:
 * samtools' rule, where anything but exact pairs is an error. 0, or -1 after
 * a usage message naming opt.
 */
int vw_tag_list_add(vw_tags_t *list, const char *opt, const char *arg)
{
    const char *p = arg;
    while (strlen(p) >= 2) {
        uint16_t *grown = realloc(list->tags, (size_t)(list->n + 1) * sizeof(*grown));
        if (!grown)
            return -1;
        list->tags = grown;
        list->tags[list->n++] = (uint16_t)((unsigned char)p[0] << 8 | (unsigned char)p[1]);
        p += 2;
        if (*p == ',')
            p++;
        else if (*p)
            break;
    }
    if (*p) {
        fprintf(stderr,
                "seqshard view: %s '%s': tags are exactly two characters, separated "
                "by commas (e.g. XA,MD); see 'seqshard view --help'\n",
                opt, arg);
        return -1;
    }
    return 0;
}

/* glibc's rand() after srand(seed): samtools turns seeds 1, 2, ... into such values. */
static uint32_t scrambled_seed(uint32_t seed)
{
    if (seed == 0)
        return 0;
    srand(seed);
    return (uint32_t)rand();
}

/*
 * -s INT.FRAC: seed INT, fraction 0.FRAC (a fraction of 0 keeps everything,
 * as in samtools); --subsample FLOAT in [0, 1]. 0, or -1 after a message.
 */
int vw_subsample_arg(vw_opts_t *o, const char *opt, const char *arg)
{
    char *end;
    if (strcmp(opt, "-s") == 0) {
        long seed = strtol(arg, &end, 10);
        if (*end != '.')
            goto bad;
        o->subsam_seed = (uint32_t)seed;
        o->subsam_frac = strtod(end, &end);
    } else {
        o->subsam_frac = strtod(arg, &end);
        if (o->subsam_frac < 0.0 || o->subsam_frac > 1.0)
            goto bad;
    }
    if (*end)
        goto bad;
    return 0;
bad:
    fprintf(stderr, "seqshard view: %s '%s': need %s; see 'seqshard view --help'\n", opt, arg,
            strcmp(opt, "-s") == 0 ? "INT.FRAC, e.g. 42.25 (seed 42, keep 25%)"
                                   : "a fraction from 0 to 1");
    return -1;
}

/* After parsing, as samtools does once all options are read. */
void vw_subsample_finish(vw_opts_t *o)
{
    o->subsam_seed = scrambled_seed(o->subsam_seed);
}

/* ---- run state: the read groups of -l's library ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The @RG IDs whose LB is library, sorted, into run->lib_rgs: samtools keeps
 * a read when its RG's library (the first @RG line of that ID) is library.
 * 0, or -1 after ss_error().
 */
int vw_library_prepare(vw_run_t *run, const sam_hdr_t *h, const char *library)
{
    int n = sam_hdr_count_lines((sam_hdr_t *)h, "RG");
    run->lib_rgs = calloc((size_t)(n > 0 ? n : 1), sizeof(char *));
    if (!run->lib_rgs)
        goto oom;
    kstring_t id = KS_INITIALIZE, lb = KS_INITIALIZE;
    for (int i = 0; i < n; i++) {
        if (sam_hdr_find_tag_pos((sam_hdr_t *)h, "RG", i, "ID", &id) < 0 ||
            sam_hdr_find_tag_pos((sam_hdr_t *)h, "RG", i, "LB", &lb) < 0)
            continue;
        if (strcmp(lb.s, library) == 0 && !(run->lib_rgs[run->n_lib_rgs++] = strdup(id.s))) {
            free(id.s);
            free(lb.s);
            goto oom;
        }
    }
    free(id.s);
    free(lb.s);
    qsort(run->lib_rgs, (size_t)run->n_lib_rgs, sizeof(char *), cmp_str);
    return 0;
oom:
    ss_error("out of memory reading the read groups for -l");
    return -1;
}

/* ---- per record, worker threads ---- */

/* samtools' subsampling: a hash of the read name, so both mates go the same way. */
static int subsampled_out(const vw_opts_t *o, const bam1_t *b)
{
    uint32_t k = __ac_Wang_hash(__ac_X31_hash_string(bam_get_qname(b)) ^ o->subsam_seed);
    return (double)(k & 0xffffff) / 0x1000000 >= o->subsam_frac;
}

static int in_library(const vw_run_t *run, const bam1_t *b)
{
    const uint8_t *rg = bam_aux_get(b, "RG");
    if (!rg || *rg != 'Z')
        return 0;
    const char *id = (const char *)rg + 1;
    return bsearch(&id, run->lib_rgs, (size_t)run->n_lib_rgs, sizeof(char *), cmp_str) != NULL;
}

int vw_keep_more(const vw_opts_t *o, const vw_run_t *run, hts_filter_t *expr, const sam_hdr_t *h,
                 bam1_t *b)
{
    /* samtools tests the expression first; a failing evaluation drops the read as well */
    if (expr && sam_passes_filter(h, b, expr) < 1)
        return 0;
    if (o->subsam_frac > 0.0 && subsampled_out(o, b))
        return 0;
    if (o->library && !in_library(run, b))
        return 0;
    return 1;
}

/* Bytes of the aux field whose type byte is at s (after its tag), or 0 when malformed. */
static size_t aux_size(const uint8_t *s, const uint8_t *end)
{
    static const char sizes[] = "A1c1C1s2S2i4I4f4d8";
    const char *t = memchr(sizes, *s, sizeof(sizes) - 1);
    if (t && (t - sizes) % 2 == 0)
        return end - s > t[1] - '0' ? 1 + (size_t)(t[1] - '0') : 0;
    if (*s == 'Z' || *s == 'H') {
        const uint8_t *nul = memchr(s + 1, 0, (size_t)(end - s - 1));
        return nul ? (size_t)(nul - s) + 1 : 0;
    }
    if (*s == 'B' && end - s >= 6) {
        const char *e = memchr(sizes, s[1], sizeof(sizes) - 1);
        uint32_t n;
        memcpy(&n, s + 2, 4);
        size_t len = e && (e - sizes) % 2 == 0 ? 6 + (size_t)n * (size_t)(e[1] - '0') : 0;
        return len && len <= (size_t)(end - s) ? len : 0;
    }
    return 0;
}

static int listed(const vw_tags_t *l, uint16_t tag)
{
    for (int i = 0; i < l->n; i++)
        if (l->tags[i] == tag)
            return 1;
    return 0;
}

/*
 * --keep-tag (which wins, as in samtools) or -x: keep the listed tags, or
 * drop them, in place, order kept. 0, or -1 when the aux data is malformed.
 */
int vw_adjust_tags(const vw_opts_t *o, bam1_t *b)
{
    const vw_tags_t *l = o->keep.n ? &o->keep : &o->remove;
    if (!l->n)
        return 0;
    uint8_t *from = bam_get_aux(b), *to = from, *end = b->data + b->l_data;
    while (from < end) {
        if (end - from < 3)
            return -1;
        uint16_t tag = (uint16_t)(from[0] << 8 | from[1]);
        size_t len = aux_size(from + 2, end);
        if (!len)
            return -1;
        if (listed(l, tag) == (l == &o->keep)) {
            memmove(to, from, 2 + len);
            to += 2 + len;
        }
        from += 2 + len;
    }
    b->l_data = (int)(to - b->data);
    return 0;
}

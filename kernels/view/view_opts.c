/*
 * view_opts.c -- `seqshard view` options: samtools view 1.16's names and
 * rules for the subset we support, plus the framework's common options.
 *
 * -l is samtools' --library filter. Earlier seqshard builds took it as
 * the compression level (CHANGELOG.md, Changed); that is now --output-fmt-option level=N (or -O
 * bam,level=N), as in samtools, and --help says so.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "view.h"

void vw_opts_default(vw_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->fmt = VW_SAM;
    o->level = -1;
    o->subsam_frac = -1.0;
}

void vw_opts_free(vw_opts_t *o)
{
    if (!o)
        return;
    free(o->target_path);
    free(o->cmdline);
    free(o->output);
    free(o->expr);
    free(o->library);
    free(o->remove.tags);
    free(o->keep.tags);
}

void vw_usage(FILE *fp)
{
    fprintf(fp,
            "Usage: seqshard view [options] in.bam|in.cram [region ...]\n"
            "\n"
            "Prints or converts records as samtools view 1.16 does (same records, same order),\n"
            "decoding and encoding genomic shards in parallel. The input must be\n"
            "coordinate-sorted and indexed.\n"
            "\n"
            "'-' as the input reads coordinate-sorted SAM/BAM/CRAM from standard input,\n"
            "without an index: one worker in one pass, so it does not parallelise (no\n"
            "regions, not under mpirun).\n"
            "\n"
            "Regions: CONTIG, CONTIG:BEG or CONTIG:BEG-END (1-based, inclusive), '*' for the\n"
            "unplaced unmapped reads at the end of the file, '.' for the whole file. Each\n"
            "region's records are printed in the order the regions are given; a record in two\n"
            "regions is printed twice, as samtools view does without -M. An unknown or\n"
            "malformed region is an error (samtools warns and skips it).\n"
            "  -M, --use-index         take the regions as one set, as samtools view -M does:\n"
            "                          in header order ('*' last), overlaps merged, each\n"
            "                          record once (needs regions or -L; not both)\n"
            "\n"
            "Output options:\n"
            "  -O, --output-fmt FMT    sam, bam or cram [from the -o extension, else sam];\n"
            "                          FMT,level=N sets the compression level too\n"
            "      --output-fmt-option level=N\n"
            "                          compression level 0-9 for BAM/CRAM [htslib default];\n"
            "                          BAM to BAM with no filter, region, edit or level\n"
            "                          copies the input's compressed blocks (checked) instead\n"
            "  -b, --bam               output BAM\n"
            "  -C, --cram              output CRAM (reference from -T, UR, REF_PATH/REF_CACHE)\n"
            "  -1, --fast              fast compression (level 1; BAM unless -o names .sam)\n"
            "  -u, --uncompressed      uncompressed BAM (level 0)\n"
            "  -h, --with-header       include the header in SAM output\n"
            "  -H, --header-only       print the header only\n"
            "      --no-header         print SAM records only [default]\n"
            "  -c, --count             print only the number of records kept (all shards and\n"
            "                          ranks added up), as one line\n"
            "      --no-PG             do not add a @PG line to the header\n"
            "  -o, --output FILE       write to FILE (created only when the run succeeds)\n"
            "      --write-index       index the output (BAM: FILE.csi, CRAM: FILE.crai)\n"
            "  (CRAM output: --shard-size defaults to %dx the value below)\n"
            "\n"
            "Input options:\n"
            "  -T, --reference FILE    FASTA (with .fai) for CRAM input or output\n"
            "\n"
            "Filters (only output records that...):\n"
            "  -L, --target-file FILE  ...overlap regions in the BED file\n"
            "  -q, --min-MQ INT        ...have mapping quality >= INT [0]\n"
            "  -l, --library STR       ...are in library STR (their RG's LB)\n"
            "  -e, --expr STR          ...match the filter expression STR (htslib syntax)\n"
            "  -f, --require-flags FLAG ...have all of the FLAGs set\n"
            "  -F, --excl-flags FLAG   ...have none of the FLAGs set\n"
            "      --rf, --incl-flags FLAG ...have any of the FLAGs set\n"
            "  -G FLAG                 EXCLUDE records with all of the FLAGs set\n"
            "      --subsample FLOAT   keep only FLOAT of the read names (templates)\n"
            "      --subsample-seed INT which names are kept [0]\n"
            "  -s INT.FRAC             same as --subsample 0.FRAC --subsample-seed INT\n"
            "\n"
            "Edits:\n"
            "  -x, --remove-tag STR    comma-separated tags to strip (repeatable)\n"
            "      --keep-tag STR      comma-separated tags to keep, all others stripped\n"
            "                          (repeatable; same as -x ^STR; wins over -x)\n"
            "\n"
            "General options:\n"
            "  -?, --help              print this help\n"
            "  -S                      ignored (the input format is detected)\n"
            "\n"
            "Framework options:\n"
            "  -@, --threads INT       worker threads [all CPUs this process may use]\n"
            "      --shard-size SIZE   target work per shard in bases of average depth,\n"
            "                          k/m/g suffixes allowed [%d]\n"
            "      --report FILE.json  write run statistics (threads, shards, times) as JSON\n"
            "      --tmp-dir DIR       directory for temporary files\n"
            "      --quiet             no progress or log lines on stderr (errors still)\n"
            "      --resume            after a killed run of the same command, reuse the shards\n"
            "                          it wrote beside -o FILE and compute only the rest\n"
            "\n"
            "Compatibility: -l is --library, as in samtools view. Earlier seqshard builds\n"
            "took -l as the compression level: use --output-fmt-option level=N (or -O\n"
            "bam,level=N).\n"
            "\n"
            "Not supported (samtools view options): -U (a second output file: the framework\n"
            "writes one output), -p, -P, -X, -t, -r, -R, -N, -d, -D, -m, -B, --add-flags,\n"
            "--remove-flags, SAM.gz output.\n",
            VW_CRAM_SHARD_FACTOR, SS_DEFAULT_SHARD_SIZE);
}

enum { O_NOHEADER = 0x2001, O_NOPG, O_RF, O_WRITE_INDEX, O_REFERENCE, O_HELP, O_FMT_OPTION,
       O_SUBSAMPLE, O_SUBSAMPLE_SEED, O_KEEP_TAG };

static const struct option lopts[] = {
    SS_COMMON_LONG_OPTS,
    {"output-fmt", required_argument, NULL, 'O'},
    {"bam", no_argument, NULL, 'b'},
    {"cram", no_argument, NULL, 'C'},
    {"fast", no_argument, NULL, '1'},
    {"uncompressed", no_argument, NULL, 'u'},
    {"output-fmt-option", required_argument, NULL, O_FMT_OPTION},
    {"count", no_argument, NULL, 'c'},
    {"expr", required_argument, NULL, 'e'},
    {"expression", required_argument, NULL, 'e'},
    {"library", required_argument, NULL, 'l'},
    {"subsample", required_argument, NULL, O_SUBSAMPLE},
    {"subsample-seed", required_argument, NULL, O_SUBSAMPLE_SEED},
    {"remove-tag", required_argument, NULL, 'x'},
    {"keep-tag", required_argument, NULL, O_KEEP_TAG},
    {"output-unselected", required_argument, NULL, 'U'},
    {"unoutput", required_argument, NULL, 'U'},
    {"with-header", no_argument, NULL, 'h'},
    {"header-only", no_argument, NULL, 'H'},
    {"no-header", no_argument, NULL, O_NOHEADER},
    {"no-PG", no_argument, NULL, O_NOPG},
    {"output", required_argument, NULL, 'o'},
    {"write-index", no_argument, NULL, O_WRITE_INDEX},
    {"use-index", no_argument, NULL, 'M'},
    {"reference", required_argument, NULL, 'T'},
    {"target-file", required_argument, NULL, 'L'},
    {"targets-file", required_argument, NULL, 'L'},
    {"min-MQ", required_argument, NULL, 'q'},
    {"min-mq", required_argument, NULL, 'q'},
    {"min-mapq", required_argument, NULL, 'q'},
    {"require-flags", required_argument, NULL, 'f'},
    {"excl-flags", required_argument, NULL, 'F'},
    {"exclude-flags", required_argument, NULL, 'F'},
    {"rf", required_argument, NULL, O_RF},
    {"incl-flags", required_argument, NULL, O_RF},
    {"include-flags", required_argument, NULL, O_RF},
    {"help", no_argument, NULL, O_HELP},
    {NULL, 0, NULL, 0}};

static int bad_value(const char *opt, const char *arg, const char *need)
{
    fprintf(stderr, "seqshard view: %s '%s': %s; see 'seqshard view --help'\n", opt, arg, need);
    return -1;
}

static int flag_arg(const char *opt, const char *arg, int *acc)
{
    int f = bam_str2flag(arg);
    if (f < 0)
        return bad_value(opt, arg, "need a flag number or names such as UNMAP,SECONDARY");
    *acc |= f; /* repeated options add up, as in samtools */
    return 0;
}

/* -O sam|bam|cram, with an optional ",level=N" as samtools' format options allow. */
static int format_arg(vw_opts_t *o, const char *arg)
{
    size_t n = strcspn(arg, ",");
    if (n == 3 && !strncasecmp(arg, "sam", 3))
        o->fmt = VW_SAM;
    else if (n == 3 && !strncasecmp(arg, "bam", 3))
        o->fmt = VW_BAM;
    else if (n == 4 && !strncasecmp(arg, "cram", 4))
        o->fmt = VW_CRAM;
    else
        return bad_value("-O", arg, "need sam, bam or cram");
    if (arg[n] == '\0')
        return 0;
    if (strncmp(arg + n, ",level=", 7) == 0)
        return ss_opt_int("-O ...,level=", arg + n + 7, 0, 9, &o->level);
    return bad_value("-O", arg, "the only format option supported is level=N");
}

/* --output-fmt-option OPT=VAL: samtools passes any to htslib; we support the level. */
static int fmt_option_arg(vw_opts_t *o, const char *arg)
{
    if (strncmp(arg, "level=", 6) == 0)
        return ss_opt_int("--output-fmt-option level=", arg + 6, 0, 9, &o->level);
    return bad_value("--output-fmt-option", arg, "the only output option supported is level=N");
}

/* -x LIST drops the tags, -x ^LIST keeps only them (as --keep-tag LIST). */
static int remove_tag_arg(vw_opts_t *o, const char *arg)
{
    if (arg[0] == '^')
        return vw_tag_list_add(&o->keep, "-x", arg + 1);
    return vw_tag_list_add(&o->remove, "-x", arg);
}

/* "seqshard view ..." with control characters blanked, for @PG CL. */
/* Options that change how the work is run, never what is written. */
static int run_only_long(const char *a, int *takes_value)
{
    static const char *const with_value[] = { "--threads", "--shard-size", "--report",
                                              "--tmp-dir", "--bind" };
    static const char *const flags[] = { "--quiet", "--print-binding", "--resume" };
    for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++) {
        size_t n = strlen(with_value[i]);
        if (strncmp(a, with_value[i], n) == 0 && (a[n] == '\0' || a[n] == '=')) {
            *takes_value = a[n] == '\0';
            return 1;
        }
    }
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
        if (strcmp(a, flags[i]) == 0) {
            *takes_value = 0;
            return 1;
        }
    return 0;
}

/*
 * The @PG CL text: the command line without the options that only say how
 * the work is run (-@, --shard-size, --report, ...), so that the header,
 * like the records, is the same at any thread count, shard size or number
 * of ranks (DESIGN.md, determinism). samtools writes its whole command line.
 */
static char *command_line(int argc, char **argv)
{
    static const char with_arg[] = "OloTLqfFG@esxU"; /* short options that take a value */
    kstring_t s = KS_INITIALIZE;
    kputs("seqshard", &s);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int takes_value = 0;
        if (i > 0 && run_only_long(a, &takes_value)) {
            i += takes_value;
            continue;
        }
        if (i > 0 && a[0] == '-' && a[1] != '-' && a[1] != '\0') {
            /* a cluster like -b@2 or -bh@: keep what comes before -@ */
            const char *c = a + 1;
            while (*c && *c != '@' && !strchr(with_arg, *c))
                c++;
            if (*c == '@') {
                if (c[1] == '\0')
                    i++; /* the value is the next argument */
                if (c == a + 1)
                    continue;
                kputc(' ', &s);
                kputsn(a, (size_t)(c - a), &s);
                continue;
            }
        }
        kputc(' ', &s);
        kputs(a, &s);
    }
    for (size_t i = 0; s.s && i < s.l; i++)
        if ((unsigned char)s.s[i] < ' ')
            s.s[i] = ' ';
    return ks_release(&s);
}

static int has_ext(const char *path, const char *ext)
{
    size_t l = strlen(path), e = strlen(ext);
    return l > e && strcasecmp(path + l - e, ext) == 0;
}

/* samtools' rules: -O/-b/-C win; then -1/-u mean BAM unless FILE.sam; then the extension. */
static int resolve_format(vw_opts_t *o, const ss_common_opts_t *co, int fmt_given, int fast_or_u)
{
    const char *out = co->output;
    if (!fmt_given) {
        if (out && has_ext(out, ".bam"))
            o->fmt = VW_BAM;
        else if (out && has_ext(out, ".cram"))
            o->fmt = VW_CRAM;
        else if (fast_or_u && !(out && has_ext(out, ".sam")))
            o->fmt = VW_BAM;
        else
            o->fmt = VW_SAM; /* FILE.sam.gz: BGZF-compressed SAM, as samtools (out_run.c) */
    }
    if (o->count && o->write_index)
        return bad_value("--write-index", out ? out : "", "-c writes a count, not records; drop "
                                                          "--write-index");
    if (o->count && out && (has_ext(out, ".gz") || has_ext(out, ".bgz")))
        return bad_value("-o", out, "-c writes one line of text, which samtools does not compress; "
                                    "name the file without .gz/.bgz");
    if (o->write_index && (!out || !strcmp(out, "-")))
        return bad_value("--write-index", out ? out : "", "needs an output file (-o FILE)");
    if (o->write_index && o->fmt == VW_SAM)
        return bad_value("--write-index", out, "only BAM and CRAM output can be indexed; add "
                                               "-O bam or -O cram");
    return 0;
}

/* One option; returns 0, 1 for --help, or -1 after a message. */
static int apply(vw_opts_t *o, ss_common_opts_t *co, int c, const char *arg, int *fmt_given,
                 int *fast_or_u)
{
    switch (c) {
    case 'O': *fmt_given = 1; return format_arg(o, arg);
    case 'b': *fmt_given = 1; o->fmt = VW_BAM; return 0;
    case 'C': *fmt_given = 1; o->fmt = VW_CRAM; return 0;
    case '1': *fast_or_u = 1; o->level = 1; return 0;
    case 'u': *fast_or_u = 1; o->level = 0; return 0;
    case O_FMT_OPTION: return fmt_option_arg(o, arg);
    case 'l': return ss_opt_string(&o->library, arg);
    case 'c': o->count = 1; return 0;
    case 'e': return vw_expr_check(arg) < 0 ? -1 : ss_opt_string(&o->expr, arg);
    case 's': return vw_subsample_arg(o, "-s", arg);
    case O_SUBSAMPLE: return vw_subsample_arg(o, "--subsample", arg);
    case O_SUBSAMPLE_SEED: o->subsam_seed = (uint32_t)atoi(arg); return 0;
    case 'x': return remove_tag_arg(o, arg);
    case O_KEEP_TAG: return vw_tag_list_add(&o->keep, "--keep-tag", arg);
    case 'S': return 0; /* samtools ignores it too: the input format is detected */
    case 'U':
        fprintf(stderr, "seqshard view: -U '%s': writing the records not selected to a second "
                        "file is not supported (the framework writes one output); run seqshard "
                        "view again with the opposite filter instead\n", arg);
        return -1;
    case 'h': o->with_header = 1; return 0;
    case 'H': o->header_only = 1; return 0;
    case O_NOHEADER: o->with_header = o->header_only = 0; return 0;
    case O_NOPG: o->no_pg = 1; return 0;
    case 'o': return ss_opt_string(&co->output, arg);
    case O_WRITE_INDEX: o->write_index = 1; return 0;
    case 'T': return ss_opt_string(&co->reference, arg);
    case 'L': return ss_opt_string(&o->target_path, arg);
    case 'M': o->multi_region = 1; return 0;
    case 'q': return ss_opt_int("-q", arg, 0, INT_MAX, &o->min_mapq);
    case 'f': return flag_arg("-f", arg, &o->flag_on);
    case 'F': return flag_arg("-F", arg, &o->flag_off);
    case O_RF: return flag_arg("--rf", arg, &o->flag_anyon);
    case 'G': return flag_arg("-G", arg, &o->flag_alloff);
    case O_HELP: return 1;
    default:
        fprintf(stderr, "seqshard view: unsupported option; see 'seqshard view --help'\n");
        return -1;
    }
}

/* Positional arguments: the input, then the regions, kept in argument order. */
static int positionals(ss_common_opts_t *co, int argc, char **argv, int first)
{
    if (first >= argc) {
        fprintf(stderr, "seqshard view: no input file; see 'seqshard view --help'\n");
        return -1;
    }
    if (ss_common_add_input(co, argv[first]) < 0)
        return -1;
    for (int i = first + 1; i < argc; i++)
        if (ss_common_add_region(co, argv[i]) < 0)
            return -1;
    return 0;
}

int vw_parse(int argc, char **argv, ss_common_opts_t *co, void **kopts)
{
    vw_opts_t *o = malloc(sizeof(*o));
    if (!o)
        return SS_EXIT_USAGE;
    vw_opts_default(o);
    *kopts = o;
    co->ref_option = "-T"; /* samtools view's name (its -f is required flags) */
    int c, fmt_given = 0, fast_or_u = 0, shard_size_given = 0;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":O:bC1ul:hHo:T:L:Mq:f:F:G:@:ce:s:x:U:S", lopts, NULL)) >=
           0) {
        const char *bad = argv[optind - 1];
        if (c == '?' && optopt == '?') { /* -?: samtools' help option */
            vw_usage(stdout);
            return -1;
        }
        if (c == '?' || c == ':') {
            fprintf(stderr, "seqshard view: %s '%s'; see 'seqshard view --help'\n",
                    c == ':' ? "option needs a value:" : "unknown or unsupported option", bad);
            return SS_EXIT_USAGE;
        }
        int common = ss_common_opt(c, optarg, co);
        if (common < 0)
            return SS_EXIT_USAGE;
        shard_size_given |= c == SS_OPT_SHARD_SIZE;
        if (common > 0)
            continue;
        int r = apply(o, co, c, optarg, &fmt_given, &fast_or_u);
        if (r < 0)
            return SS_EXIT_USAGE;
        if (r == 1) {
            vw_usage(stdout);
            return -1;
        }
    }
    if (positionals(co, argc, argv, optind) < 0 || resolve_format(o, co, fmt_given, fast_or_u) < 0)
        return SS_EXIT_USAGE;
    if (o->multi_region && o->target_path && co->n_regions > 0) {
        /* samtools then reads the BED intervals cut down to the regions: not done here */
        fprintf(stderr, "seqshard view: -M with both -L and regions is not supported yet; "
                        "drop -M, or give the regions or the -L file alone\n");
        return SS_EXIT_USAGE;
    }
    if (o->target_path && ss_common_add_read(co, o->target_path, "the -L BED", 0) < 0)
        return SS_EXIT_USAGE;
    co->merge_regions = o->multi_region;
    vw_subsample_finish(o);
    if (!(o->cmdline = command_line(argc, argv)) ||
        (co->output && !(o->output = strdup(co->output))))
        return SS_EXIT_USAGE;
    o->threads = co->threads;
    /*
     * Each shard's CRAM encoder starts by trying every codec on its first
     * containers (htslib re-tries only every 70 blocks after that); at the
     * default shard size that trial work would cost about half again the
     * CPU of samtools' encoding. Larger shards amortise it.
     */
    if (o->fmt == VW_CRAM && !shard_size_given)
        co->shard_size = VW_CRAM_SHARD_FACTOR * (hts_pos_t)SS_DEFAULT_SHARD_SIZE;
    /* the unplaced unmapped reads end a whole-file view; "*" and "." name them as regions */
    co->unplaced = 1;
    co->stdin_ok = 1; /* "-": standard input, read by one worker in one pass */
    /*
     * all_contigs stays 0: the planner still gives every contig at least one
     * shard, and a contig without records costs one index query.
     */
    return 0;
}

# shellcheck shell=bash
# lib_genomes.sh -- whole small genomes, simulated and aligned with real tools, for the
# genomes_*.sh tests; source it after lib.sh and lib_mpileup.sh, after ss_setup and mp_setup.
#
#   gn_make NAME   makes data set NAME (once: it is kept in $SS_TESTDATA/genomes/NAME, with a
#                  stamp, so a second run only reads it) and sets GN to its folder. Each data
#                  set holds ref.fa (.fai) and three samples NAME1.bam NAME2.bam NAME3.bam
#                  (indexed), each its own read group and sample.
#   gn_all NAME [ARGS...]
#                  every comparison on one data set: see gn_all below.
#
# The data sets, each independent of the others and of scripts/make-testdata.sh's (another
# genome, other slices, other seeds, read lengths, error and mutation rates, coverage):
#   celegans  C. elegans (the samtools-test package's ce.fa): I = CHROMOSOME_I 200001-420000
#             at ~30x per sample, 2x100, mutation rate 0.0015 (25% indels); MtDNA (its 5 kb)
#             at ~300x per sample, past the 255 bases per sample where bcftools subsamples;
#             X (5 kb of CHROMOSOME_X) in the reference without reads. dwgsim seeds 101-103.
#   lowcov    E. coli 536 (bowtie-examples) 1500001-1800000 at ~5x per sample, 2x150, error
#             rates 1-3% (read 1) and 1.5-4% (read 2), mutation rate 0.004 (half indels,
#             extended with probability 0.5), 2% random reads. Seeds 201-203.
#   deep      E. coli 536 2600001-2700000, sample 1 at ~100x, samples 2 and 3 at ~15x, 2x125;
#             pDeep, a 3 kb plasmid-like contig (E. coli 4100001-4103000), at ~2500x in
#             sample 1 and ~600x in samples 2 and 3 (compared at -d 10000 too). Seeds 301-303.
#   short     E. coli 536 300001-550000 at ~15x, 2x75 reads with outer distance 180 (mates
#             overlap), mutation rate 0.002 (30% indels); sample 3 haploid (dwgsim -H);
#             ctgNoReads, 6 kb (E. coli 4900001-4906000), without reads. Seeds 401-403.

GN_VERSION="seqshard-genomes 1"
GN_ECOLI=${SS_ECOLI_FNA:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}
GN_CE=${SS_CE_FA:-/usr/share/samtools/test/mpileup/ce.fa}
# seqshard runs at -@2 with shards small enough that every genome is cut into several
GN_LAYOUT=(-@ 2 --shard-size 40k)

gn_die() { echo "FAIL setup: lib_genomes: $*" >&2; exit 1; }

# gn_fasta OUT.fa SRC NAME:CONTIG:BEG:END ... -- a FASTA of slices (1-based, inclusive) of
# the contigs of SRC (FASTA, gzipped or not), each named NAME; CONTIG '*' is the first one.
gn_fasta() {
    local out=$1 src=$2
    shift 2
    python3 - "$src" "$@" >"$out" <<'PY' || gn_die "cannot cut $src"
import gzip, sys
src = sys.argv[1]
op = gzip.open if src.endswith('.gz') else open
seqs, name = {}, None
for line in op(src, 'rt'):
    if line.startswith('>'):
        name = line[1:].split()[0]
        seqs[name] = []
    else:
        seqs[name].append(line.strip())
first = next(iter(seqs))
for spec in sys.argv[2:]:
    new, ctg, beg, end = spec.split(':')
    s = ''.join(seqs[first if ctg == '*' else ctg])[int(beg) - 1:int(end)].upper()
    assert len(s) == int(end) - int(beg) + 1, spec
    print('>' + new)
    for i in range(0, len(s), 60):
        print(s[i:i + 60])
PY
}

# gn_reads PREFIX SEED SIM.fa DWGSIM-OPTIONS...: simulated pairs PREFIX.1.fq.gz PREFIX.2.fq.gz
gn_reads() {
    local pre=$1 seed=$2 fa=$3
    shift 3
    dwgsim -z "$seed" -o 1 "$@" "$fa" "$pre" >"$pre.dwgsim.log" 2>&1 ||
        { cat "$pre.dwgsim.log" >&2; gn_die "dwgsim failed for $pre"; }
    mv "$pre.bwa.read1.fastq.gz" "$pre.1.fq.gz"
    mv "$pre.bwa.read2.fastq.gz" "$pre.2.fq.gz"
    rm -f "$pre".*.txt "$pre".*.vcf "$pre".*.log "$pre".bfast.* "$pre".bwa.*
}

# gn_sample NAME PREFIX...: the pairs of each PREFIX aligned with bwa mem (fixed batch size,
# so the result does not depend on threads) into NAME.bam (sorted, indexed), RG/SM NAME.
gn_sample() {
    local name=$1 p
    shift
    : >"$name.1.fq"
    : >"$name.2.fq"
    for p in "$@"; do
        gzip -dc "$p.1.fq.gz" >>"$name.1.fq"
        gzip -dc "$p.2.fq.gz" >>"$name.2.fq"
        rm -f "$p.1.fq.gz" "$p.2.fq.gz"
    done
    bwa mem -t 2 -K 10000000 -R "@RG\tID:$name\tSM:$name\tPL:ILLUMINA" ref.fa \
        "$name.1.fq" "$name.2.fq" 2>"$name.bwa.log" |
        samtools sort --no-PG -l 6 -o "$name.bam" - ||
        { tail "$name.bwa.log" >&2; gn_die "bwa mem | samtools sort failed for $name"; }
    samtools index "$name.bam" || gn_die "samtools index $name.bam failed"
    rm -f "$name.1.fq" "$name.2.fq" "$name.bwa.log"
}

gn_index_ref() {
    samtools faidx ref.fa || gn_die "samtools faidx failed"
    bwa index ref.fa 2>bwa-index.log || { cat bwa-index.log >&2; gn_die "bwa index failed"; }
    rm -f bwa-index.log
}

# gn_no_reads CONTIG: the contig must have no reads in any sample, or the case is lost
gn_no_reads() {
    local b n
    for b in ./*.bam; do
        n=$(samtools idxstats "$b" | awk -v c="$1" '$1 == c { print $3 }')
        [ "$n" = 0 ] || gn_die "$b has ${n:-no count of} reads on $1; pick another slice"
    done
}

# ---- the data sets (each built in an empty folder, which becomes $GN) ----------------------
gn_build_celegans() {
    [ -r "$GN_CE" ] || gn_die "$GN_CE not found; apt-get install samtools-test"
    gn_fasta ref.fa "$GN_CE" I:CHROMOSOME_I:200001:420000 MtDNA:CHROMOSOME_MtDNA:1:5000 \
        X:CHROMOSOME_X:1:5000
    gn_fasta nuc.fa ref.fa I:I:1:220000
    gn_fasta mt.fa ref.fa MtDNA:MtDNA:1:5000
    gn_index_ref
    local i
    for i in 1 2 3; do
        gn_reads "n$i" $((100 + i)) nuc.fa -1 100 -2 100 -C 30 -d 250 -s 30 -r 0.0015 -R 0.25 \
            -e 0.002-0.012 -E 0.004-0.02 -y 0.005
        gn_reads "m$i" $((110 + i)) mt.fa -1 100 -2 100 -C 300 -d 250 -s 30 -r 0.001 -R 0.2 -H \
            -e 0.002-0.012 -E 0.004-0.02 -y 0
        gn_sample "celegans$i" "n$i" "m$i"
    done
    rm -f nuc.fa mt.fa
    gn_no_reads X
}

gn_build_lowcov() {
    [ -r "$GN_ECOLI" ] || gn_die "$GN_ECOLI not found; apt-get install bowtie-examples"
    gn_fasta ref.fa "$GN_ECOLI" chr:'*':1500001:1800000
    gn_index_ref
    local i
    for i in 1 2 3; do
        gn_reads "r$i" $((200 + i)) ref.fa -1 150 -2 150 -C 5 -d 400 -s 60 -r 0.004 -R 0.5 \
            -X 0.5 -e 0.01-0.03 -E 0.015-0.04 -y 0.02
        gn_sample "lowcov$i" "r$i"
    done
}

gn_build_deep() {
    [ -r "$GN_ECOLI" ] || gn_die "$GN_ECOLI not found; apt-get install bowtie-examples"
    gn_fasta ref.fa "$GN_ECOLI" chr:'*':2600001:2700000 pDeep:'*':4100001:4103000
    gn_fasta chr.fa ref.fa chr:chr:1:100000
    gn_fasta plasmid.fa ref.fa pDeep:pDeep:1:3000
    gn_index_ref
    local i cov pcov
    for i in 1 2 3; do
        cov=15 pcov=600
        [ $i = 1 ] && cov=100 pcov=2500
        gn_reads "c$i" $((300 + i)) chr.fa -1 125 -2 125 -C $cov -d 350 -s 40 -r 0.001 -R 0.1 \
            -e 0.001-0.01 -E 0.002-0.015 -y 0.01
        gn_reads "p$i" $((310 + i)) plasmid.fa -1 125 -2 125 -C $pcov -d 350 -s 40 -r 0.002 \
            -R 0.2 -H -e 0.001-0.01 -E 0.002-0.015 -y 0
        gn_sample "deep$i" "c$i" "p$i"
    done
    rm -f chr.fa plasmid.fa
}

gn_build_short() {
    [ -r "$GN_ECOLI" ] || gn_die "$GN_ECOLI not found; apt-get install bowtie-examples"
    gn_fasta ref.fa "$GN_ECOLI" chr:'*':300001:550000 ctgNoReads:'*':4900001:4906000
    gn_fasta sim.fa ref.fa chr:chr:1:250000
    gn_index_ref
    local i h
    for i in 1 2 3; do
        h=()
        [ $i = 3 ] && h=(-H)
        gn_reads "r$i" $((400 + i)) sim.fa -1 75 -2 75 -C 15 -d 180 -s 25 -r 0.002 -R 0.3 \
            -e 0.001-0.015 -E 0.002-0.025 -y 0.01 "${h[@]}"
        gn_sample "short$i" "r$i"
    done
    rm -f sim.fa
    gn_no_reads ctgNoReads
}

# gn_make NAME: see the top of this file.
gn_make() {
    local name=$1 top=$SS_TESTDATA/genomes
    local dir=$top/$name
    mkdir -p "$top" || gn_die "cannot make $top"
    (
        # one maker at a time; later ones wait, then find the stamp
        exec 9>"$dir.lock"
        flock 9
        stamp="$GN_VERSION $name $(declare -f "gn_build_$name" | cksum)"
        [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ] && exit 0
        for t in samtools bwa dwgsim python3 gzip flock; do
            command -v "$t" >/dev/null || gn_die "$t not found"
        done
        tmp=$(mktemp -d "$dir.tmp.XXXXXX") || exit 1
        chmod 755 "$tmp"
        # shellcheck disable=SC2064 # tmp is fixed now
        trap "rm -rf '$tmp'" EXIT
        t0=$SECONDS
        cd "$tmp" && "gn_build_$name" || exit 1
        rm -f ref.fa.amb ref.fa.ann ref.fa.bwt ref.fa.pac ref.fa.sa
        echo "$stamp" >.stamp
        rm -rf "$dir"
        mv "$tmp" "$dir" || exit 1
        trap - EXIT
        echo "lib_genomes: made data set $name in $((SECONDS - t0)) s: $dir"
    ) || exit 1
    GN=$dir
}

# ---- comparisons ---------------------------------------------------------------------------
GN_NAME=
# gn_differ NAME EXP GOT EXPCMD GOTCMD: report a difference (data set, both commands, the
# first differing lines)
gn_differ() {
    ss_bad "$GN_NAME: $1" "output differs" "data set: $GN_NAME ($GN)" "reference: $4" \
        "seqshard:  $5"
    ss_show_diff "$2" "$3"
    # the lines are long: the first differing line's columns that differ, in full
    local n
    n=$(cmp "$2" "$3" 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p')
    [ -n "$n" ] && paste <(sed -n "${n}p" "$2" | tr '\t' '\n') <(sed -n "${n}p" "$3" | tr '\t' '\n') |
        awk -F'\t' -v n="$n" 'NR <= 2 { at = at $1 " " } $1 != $2 {
            printf "     line %d (%s) column %d: reference %s / seqshard %s\n", n, at, NR, $1, $2 }' |
        head -5 | cut -c1-400
}

# gn_check NAME RC EXP GOT EXPCMD GOTCMD: seqshard's status RC and output GOT against EXP
gn_check() {
    local name=$1 rc=$2 exp=$3 got=$4
    if [ "$rc" != 0 ]; then
        ss_bad "$GN_NAME: $name" "seqshard exit status $rc" "data set: $GN_NAME ($GN)" \
            "seqshard: $6" "stderr: $(ss_error_lines "$got.err" | head -3 | cut -c1-240)"
    elif [ "$(grep -vc '^#' "$exp")" = 0 ]; then
        ss_bad "$GN_NAME: $name" "the reference tool wrote no record: the test checks nothing" \
            "reference: $5"
    elif ! cmp -s "$exp" "$got"; then
        gn_differ "$name" "$exp" "$got" "$5" "$6"
    else
        ss_ok "$GN_NAME: $name ($(grep -vc '^#' "$got") records, $((SECONDS - gn_t0)) s)"
        rm -f "$exp" "$got" "$exp.err" "$got.err"
        return 0
    fi
    return 1
}

gn_case=0
gn_t0=$SECONDS
# gn_mpileup NAME ARGS...: bcftools mpileup --no-version ARGS against seqshard mpileup.
gn_mpileup() {
    local name=$1
    shift
    gn_case=$((gn_case + 1)) gn_t0=$SECONDS
    local exp=$SS_WORK/gn.$gn_case.exp got=$SS_WORK/gn.$gn_case.got
    local e=("$BCFTOOLS" mpileup --no-version "$@")
    local g=("$SEQSHARD" mpileup --no-version --quiet "${GN_LAYOUT[@]}" "$@")
    "${e[@]}" >"$exp" 2>"$exp.err" </dev/null ||
        { ss_bad "$GN_NAME: $name" "bcftools failed: the test is wrong" "$(head -2 "$exp.err")"; return; }
    timeout "$SS_TIMEOUT" "${g[@]}" >"$got" 2>"$got.err" </dev/null
    gn_check "$name" $? "$exp" "$got" "$(mp_short "${e[@]}")" "$(mp_short "${g[@]}")"
}

# gn_mpileup_bcf NAME ARGS...: both write compressed BCF (-Ob); compared as bcftools view
# --no-version prints them.
gn_mpileup_bcf() {
    local name=$1
    shift
    gn_case=$((gn_case + 1)) gn_t0=$SECONDS
    local exp=$SS_WORK/gn.$gn_case.exp got=$SS_WORK/gn.$gn_case.got
    local e=("$BCFTOOLS" mpileup --no-version -Ob -o "$exp.bcf" "$@")
    local g=("$SEQSHARD" mpileup --no-version --quiet "${GN_LAYOUT[@]}" -Ob -o "$got.bcf" "$@")
    "${e[@]}" 2>"$exp.err" </dev/null ||
        { ss_bad "$GN_NAME: $name" "bcftools failed: the test is wrong" "$(head -2 "$exp.err")"; return; }
    timeout "$SS_TIMEOUT" "${g[@]}" >/dev/null 2>"$got.err" </dev/null
    local rc=$?
    "$BCFTOOLS" view --no-version "$exp.bcf" >"$exp" 2>>"$exp.err"
    [ $rc = 0 ] && { "$BCFTOOLS" view --no-version "$got.bcf" >"$got" 2>>"$got.err" || rc=view; }
    gn_check "$name" $rc "$exp" "$got" "$(mp_short "${e[@]}") (then bcftools view)" \
        "$(mp_short "${g[@]}") (then bcftools view)" && rm -f "$exp.bcf" "$got.bcf"
}

# gn_call NAME "CALL OPTIONS" MPILEUP ARGS...: bcftools mpileup -Ou ARGS | bcftools call
# OPTIONS against seqshard mpileup ARGS --call OPTIONS.
gn_call() {
    local name=$1 copts=$2
    shift 2
    gn_case=$((gn_case + 1)) gn_t0=$SECONDS
    local exp=$SS_WORK/gn.$gn_case.exp got=$SS_WORK/gn.$gn_case.got
    # shellcheck disable=SC2206 # copts is a word list
    local c=($copts)
    local g=("$SEQSHARD" mpileup --no-version --quiet "${GN_LAYOUT[@]}" "$@" --call "${c[@]}")
    if ! "$BCFTOOLS" mpileup --no-version -Ou "$@" 2>"$exp.err" </dev/null |
        "$BCFTOOLS" call --no-version "${c[@]}" >"$exp" 2>>"$exp.err"; then
        ss_bad "$GN_NAME: $name" "the bcftools pipe failed: the test is wrong" "$(head -2 "$exp.err")"
        return
    fi
    timeout "$SS_TIMEOUT" "${g[@]}" >"$got" 2>"$got.err" </dev/null
    gn_check "$name" $? "$exp" "$got" \
        "$(mp_short "$BCFTOOLS" mpileup --no-version -Ou "$@") | bcftools call --no-version $copts" \
        "$(mp_short "${g[@]}")"
}

# gn_pileup NAME ARGS...: samtools mpileup ARGS against seqshard pileup ARGS.
gn_pileup() {
    local name=$1
    shift
    gn_case=$((gn_case + 1)) gn_t0=$SECONDS
    local exp=$SS_WORK/gn.$gn_case.exp got=$SS_WORK/gn.$gn_case.got
    local e=("$SAMTOOLS" mpileup "$@")
    local g=("$SEQSHARD" pileup --quiet "${GN_LAYOUT[@]}" "$@")
    "${e[@]}" >"$exp" 2>"$exp.err" </dev/null ||
        { ss_bad "$GN_NAME: $name" "samtools failed: the test is wrong" "$(head -2 "$exp.err")"; return; }
    timeout "$SS_TIMEOUT" "${g[@]}" >"$got" 2>"$got.err" </dev/null
    gn_check "$name" $? "$exp" "$got" "$(mp_short "${e[@]}")" "$(mp_short "${g[@]}")"
}

# gn_all NAME: every comparison on data set NAME (made by gn_make): bcftools mpileup on one
# sample and on three, with and without -B (three samples also through -Ob and bcftools
# view); --call -mv on three samples; --call -m -g 10 (gVCF blocks; call's -g needs
# FORMAT/DP) on one; samtools mpileup -f (BAQ on) on one sample and on three.
gn_all() {
    GN_NAME=$1
    local R=(-f "$GN/ref.fa") one=("$GN/${1}1.bam")
    local three=("$GN/${1}1.bam" "$GN/${1}2.bam" "$GN/${1}3.bam")
    gn_mpileup "mpileup, one sample" "${R[@]}" "${one[@]}"
    gn_mpileup "mpileup -B, one sample" -B "${R[@]}" "${one[@]}"
    gn_mpileup "mpileup, three samples" "${R[@]}" "${three[@]}"
    gn_mpileup_bcf "mpileup -B -Ob, three samples" -B "${R[@]}" "${three[@]}"
    gn_call "--call -mv, three samples" "-mv" "${R[@]}" "${three[@]}"
    gn_call "--call -m -g 10, one sample" "-m -g 10" -a FORMAT/DP "${R[@]}" "${one[@]}"
    gn_pileup "pileup -f (BAQ), one sample" "${R[@]}" "${one[@]}"
    gn_pileup "pileup -f (BAQ), three samples" "${R[@]}" "${three[@]}"
}

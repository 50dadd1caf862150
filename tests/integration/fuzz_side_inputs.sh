#!/usr/bin/env bash
# fuzz_side_inputs.sh -- damaged side files must never give a wrong file.
#
# The files a run reads besides its BAMs get random damage, one per seed: a few
# bytes replaced by characters a parser must weigh (digits, tabs, newlines, signs,
# letters, '#', ':'), bytes inserted or deleted, or the file cut short. Each goes
# through the command that reads it and, where samtools (or mosdepth) has the same
# option, through it too with the same damaged file:
#   BED        pileup -l (mpileup -l), view -L (view -L), depth -b (depth -b),
#              depth --mosdepth --by (mosdepth --by: the regions file)
#   positions  pileup -l with "chr pos" lines (mpileup -l)
#   RG list    pileup -G (mpileup -G)
#   BAM list   pileup -b (mpileup -b)
#   FAI        pileup -f with the damaged ref.fa.fai (mpileup -f)
#   regions    mpileup -R BED and -R positions (bcftools mpileup -R)
#   targets    mpileup -T BED and -T positions (bcftools mpileup -T), --call -T positions
#              (bcftools call -T), --call -C alleles -T alleles (CHROM POS REF,ALT)
#              (the files of -G and -S: mpileup_read_groups.sh; --ploidy-file:
#              mpileup_call_ploidy.sh)
#   VCF        realign --known (text damaged, then bgzip + tabix; or the .vcf.gz
#              itself cut short): no twin, so exit 0 must write every input record
#              (realign drops none), and a cut .vcf.gz the clean run's bytes
# Each run must either exit 0 with the twin's bytes (the twin succeeding on the same
# file), or exit 1 or 2 with one line on stderr; never die of a signal, hang, or
# exit 0 where the twin fails (warnings may come before the one line). A case where the
# twin itself dies of a signal (bcftools 1.16 on an empty -R file) has no verdict to
# compare with: it prints a SKIP line. A failure prints
# its seed and keeps the damaged files.
# FUZZ_SEEDS="a b c" runs other seeds.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_inputs.sh"
ss_setup
W=$SS_WORK
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-60}
BCFTOOLS=${BCFTOOLS:-bcftools}
SEEDS=${FUZZ_SEEDS:-1 2 3 4 5 6 7 9 10 11 12 19} # 19: a .vcf.gz cut at a block edge (8: a .fai whose
# longer contig takes samtools 40 s: FUZZ_SEEDS=8 runs it)
S1=$TD/s1.bam
S2=$TD/s2.bam
command -v python3 >/dev/null || { echo "FAIL setup: python3 not found"; exit 1; }
n_refused=0 # runs that failed where the twin did not: allowed, counted

# ---- clean side files ----
cat >"$W/clean.bed" <<'EOF'
# targets
ctgA	0	150
ctgA	1990	2010
ctgA	9999	10005	name1
ctgA	30000	32000
ctgB	100	5000	b	0	+
ctgB	39000	40000
EOF
printf 'ctgA\t1\nctgA\t2000\nctgA\t2001\nctgA\t31000\nctgB\t120\nctgB\t39999\n' >"$W/clean.pos"
printf 's2\nnosuchgroup\n' >"$W/clean.rg"
printf '%s\n%s\n' "$S1" "$S2" >"$W/clean.list"
# alleles for --call -C alleles: the data's true mutations as CHROM POS REF,ALT
grep -v '^#' "$TD/s1.bam.mutations.vcf" | awk -v OFS='\t' '{print $1, $2, $4 "," $5}' |
    head -60 >"$W/clean.alleles"
cp "$REF" "$W/ref.fa" && cp "$REF.fai" "$W/clean.fai"
# known indels: the first 40 of the data's true mutations that are indels
grep '^#' "$TD/s1.bam.mutations.vcf" >"$W/clean.vcf"
grep -v '^#' "$TD/s1.bam.mutations.vcf" | awk 'length($4) != length($5)' | head -40 \
    >>"$W/clean.vcf"
bgzip -c "$W/clean.vcf" >"$W/clean.vcf.gz" && tabix -p vcf "$W/clean.vcf.gz" ||
    { echo "FAIL setup: bgzip/tabix of the known sites"; exit 1; }
RL_REGION=ctgA:1-25000 # realign's runs are the slow ones: a region of the contig
N_IN=$("$SAMTOOLS" view -c "$S1" "$RL_REGION")
"$SEQSHARD" realign --quiet -f "$REF" -O sam --known "$W/clean.vcf.gz" "$S1" "$RL_REGION" \
    >"$W/clean.rl" ||
    { echo "FAIL setup: realign with the clean known sites"; exit 1; }

# mutate SEED IN OUT: one kind of damage to IN (mutate_text.py, characters for side files)
mutate() { python3 "$(dirname "$0")/mutate_text.py" side "$@"; }

# check NAME EXP EXPRC OUT ERR RC: judge one seqshard run against its twin.
check() {
    local name=$1 exp=$2 exprc=$3 got=$4 err=$5 rc=$6
    if [ "$rc" = 124 ]; then
        ss_bad "$name" "hung (killed after ${FUZZ_TIMEOUT}s)"
    elif [ "$rc" -ge 128 ]; then
        ss_bad "$name" "killed by signal $((rc - 128))" "$(head -3 "$err" | cut -c1-200)"
    elif [ "$rc" = 1 ] || [ "$rc" = 2 ]; then
        # warnings before it are allowed (a .fai that disagrees with @SQ is one), and
        # bcftools call's own note on the ploidy, which --call prints as bcftools does
        grep -v -e '^seqshard: warning: ' -e '^Note: ' "$err" >"$err.lines"
        if [ "$(ss_lines "$err.lines")" != 1 ]; then
            ss_bad "$name" "exit $rc with $(ss_lines "$err.lines") error lines, want one" \
                "$(head -4 "$err" | cut -c1-200)"
            return 1
        fi
        [ "$exprc" = 0 ] && n_refused=$((n_refused + 1))
        ss_ok "$name"
        return 0
    elif [ "$rc" != 0 ]; then
        ss_bad "$name" "exit status $rc, want 0, 1 or 2" "$(head -2 "$err" | cut -c1-200)"
    elif [ "$exprc" != 0 ]; then
        ss_bad "$name" "exit 0 where the twin fails" "twin: $(head -1 "$exp.err" | cut -c1-200)"
    elif ! cmp -s "$exp" "$got"; then
        ss_bad "$name" "exit 0 but the output differs from the twin's"
        ss_show_diff "$exp" "$got"
    else
        ss_ok "$name"
        return 0
    fi
    return 1
}

# twin NAME -- SAMTOOLS_ARGS -- SEQSHARD_ARGS: both with the same damaged file.
twin() {
    local name=$1 st=() ss=()
    shift 2
    while [ "$1" != -- ]; do st+=("$1"); shift; done
    shift
    ss=("$@")
    "$SAMTOOLS" "${st[@]}" >"$W/exp" 2>"$W/exp.err" </dev/null
    local exprc=$?
    timeout "$FUZZ_TIMEOUT" "$SEQSHARD" "${ss[@]}" --quiet -@ 2 --shard-size 3k \
        >"$W/got" 2>"$W/got.err" </dev/null
    check "$name" "$W/exp" "$exprc" "$W/got" "$W/got.err" $?
}

# bcf_twin NAME -- ARGS -- CALL_OPTS: bcftools mpileup ARGS (piped to bcftools call CALL_OPTS
# when given) against seqshard mpileup ARGS [--call CALL_OPTS], with the same damaged file.
bcf_twin() {
    local name=$1 mp=() call=()
    shift 2
    while [ "$1" != -- ]; do mp+=("$1"); shift; done
    shift
    call=("$@")
    local exprc st
    if [ ${#call[@]} = 0 ]; then
        "$BCFTOOLS" mpileup --no-version "${mp[@]}" >"$W/exp" 2>"$W/exp.err" </dev/null
        exprc=$?
    else
        "$BCFTOOLS" mpileup --no-version -Ou "${mp[@]}" 2>"$W/exp.err" </dev/null |
            "$BCFTOOLS" call --no-version "${call[@]}" >"$W/exp" 2>>"$W/exp.err"
        st=("${PIPESTATUS[@]}")
        # call's status; mpileup's when call succeeded (a call that stops early leaves
        # mpileup to die of SIGPIPE, which is not mpileup's verdict)
        exprc=${st[1]}
        [ "$exprc" = 0 ] && exprc=${st[0]}
    fi
    if [ $exprc -gt 128 ] && [ $exprc -lt 160 ]; then # a signal (255 is an exit status)
        echo "SKIP $name: bcftools itself died of signal $((exprc - 128))"
        return 0
    fi
    [ ${#call[@]} != 0 ] && call=(--call "${call[@]}")
    timeout "$FUZZ_TIMEOUT" "$SEQSHARD" mpileup --no-version --quiet -@ 2 --shard-size 3k \
        "${mp[@]}" "${call[@]}" >"$W/got" 2>"$W/got.err" </dev/null
    check "$name" "$W/exp" "$exprc" "$W/got" "$W/got.err" $?
}

# mosdepth_twin NAME BED: the regions file of mosdepth --by and of seqshard's.
mosdepth_twin() {
    local name=$1 bed=$2
    rm -rf "$W/md" && mkdir -p "$W/md/e" "$W/md/g"
    (cd "$W/md/e" && mosdepth -n --by "$bed" x "$S1") >"$W/md/e.out" 2>"$W/md/e.err"
    local exprc=$?
    [ $exprc = 0 ] && zcat "$W/md/e/x.regions.bed.gz" >"$W/exp" 2>/dev/null
    cp "$W/md/e.err" "$W/exp.err"
    timeout "$FUZZ_TIMEOUT" "$SEQSHARD" depth --mosdepth "$W/md/g/x" -n --by "$bed" --quiet \
        -@ 2 --shard-size 3k "$S1" >"$W/md/g.out" 2>"$W/got.err" </dev/null
    local rc=$?
    : >"$W/got"
    [ $rc = 0 ] && zcat "$W/md/g/x.regions.bed.gz" >"$W/got" 2>/dev/null
    check "$name" "$W/exp" "$exprc" "$W/got" "$W/got.err" $rc
}

# realign_known NAME VCFGZ CUT: exit 0 must keep every record (and, for a cut
# .vcf.gz whose index is the clean one, write the clean bytes).
realign_known() {
    local name=$1 vcf=$2 cut=$3
    timeout "$FUZZ_TIMEOUT" "$SEQSHARD" realign --quiet -@ 2 --shard-size 7k -f "$REF" -O sam \
        --known "$vcf" "$S1" "$RL_REGION" >"$W/got" 2>"$W/got.err" </dev/null
    local rc=$?
    if [ $rc = 0 ]; then
        local n
        n=$(grep -vc '^@' "$W/got")
        if [ "$n" != "$N_IN" ]; then
            ss_bad "$name" "exit 0 with $n records of $N_IN"
            return 1
        fi
        if [ "$cut" = 1 ] && ! cmp -s "$W/clean.rl" "$W/got"; then
            ss_bad "$name" "exit 0 from a cut .vcf.gz with other bytes than the whole file's"
            return 1
        fi
        ss_ok "$name"
        return 0
    fi
    check "$name" /dev/null 0 "$W/got" "$W/got.err" $rc
}

for seed in $SEEDS; do
    before=$ss_failed
    mutate "$seed" "$W/clean.bed" "$W/m.bed"
    twin "seed $seed: pileup -l BED" -- mpileup -l "$W/m.bed" "$S1" -- pileup -l "$W/m.bed" "$S1"
    twin "seed $seed: view -L BED" -- view -L "$W/m.bed" "$S1" -- view -L "$W/m.bed" "$S1"
    twin "seed $seed: depth -b BED" -- depth -b "$W/m.bed" "$S1" -- depth -b "$W/m.bed" "$S1"
    mosdepth_twin "seed $seed: mosdepth --by BED" "$W/m.bed"
    mutate "$seed" "$W/clean.pos" "$W/m.pos"
    twin "seed $seed: pileup -l positions" -- mpileup -l "$W/m.pos" "$S1" -- \
        pileup -l "$W/m.pos" "$S1"
    for kind in bed pos; do
        f=$W/m.$kind
        bcf_twin "seed $seed: mpileup -R $kind" -- -f "$REF" -R "$f" "$S1" --
        bcf_twin "seed $seed: mpileup -T $kind" -- -f "$REF" -T "$f" "$S1" "$S2" --
    done
    bcf_twin "seed $seed: --call -T positions" -- -f "$REF" "$S1" -- -m -T "$W/m.pos"
    mutate "$seed" "$W/clean.alleles" "$W/m.alleles"
    bcf_twin "seed $seed: --call -C alleles -T" -- -f "$REF" "$S1" -- -m -C alleles \
        -T "$W/m.alleles"
    mutate "$seed" "$W/clean.rg" "$W/m.rg"
    twin "seed $seed: pileup -G" -- mpileup -G "$W/m.rg" "$S1" "$S2" -- \
        pileup -G "$W/m.rg" "$S1" "$S2"
    mutate "$seed" "$W/clean.list" "$W/m.list"
    twin "seed $seed: pileup -b" -- mpileup -b "$W/m.list" -- pileup -b "$W/m.list"
    mutate "$seed" "$W/clean.fai" "$W/ref.fa.fai"
    twin "seed $seed: pileup -f, damaged .fai" -- mpileup -B -f "$W/ref.fa" "$S1" -- \
        pileup -B -f "$W/ref.fa" "$S1"
    mutate "$seed" "$W/clean.vcf" "$W/m.vcf"
    rm -f "$W/m.vcf.gz" "$W/m.vcf.gz.tbi"
    if bgzip -c "$W/m.vcf" >"$W/m.vcf.gz" 2>/dev/null && tabix -p vcf "$W/m.vcf.gz" 2>/dev/null; then
        realign_known "seed $seed: realign --known" "$W/m.vcf.gz" 0
    else
        rm -f "$W/m.vcf.gz.tbi" # no index: the run must say so
        realign_known "seed $seed: realign --known (no index)" "$W/m.vcf.gz" 0
    fi
    # the .vcf.gz cut short, with the whole file's index
    python3 -c "import random,sys; b=open(sys.argv[1],'rb').read(); \
r=random.Random(int(sys.argv[3])); open(sys.argv[2],'wb').write(b[:r.randrange(len(b))])" \
        "$W/clean.vcf.gz" "$W/cut.vcf.gz" "$seed"
    cp "$W/clean.vcf.gz.tbi" "$W/cut.vcf.gz.tbi"
    realign_known "seed $seed: realign --known, .vcf.gz cut" "$W/cut.vcf.gz" 1
    if [ "$ss_failed" != "$before" ]; then
        for f in m.bed m.pos m.alleles m.rg m.list ref.fa.fai m.vcf cut.vcf.gz; do
            cp "$W/$f" "$W/failed.$seed.$f"
        done
    fi
done
echo "runs that failed (one line) where the twin succeeded: $n_refused"

ss_summary
exit $?

#!/usr/bin/env bash
# mpileup_fuzz.sh -- whole-tool differential fuzzer: seqshard mpileup against bcftools
# mpileup 1.16 (and `bcftools mpileup -Ou | bcftools call`), seqshard pileup against
# samtools mpileup 1.16, byte for byte, on generated adversarial BAMs.
#
# Each round generates one case with scripts/fuzz-bams.py --seed SEED (a random
# reference with homopolymers, tandem repeats, N runs and a contig without reads; 1-3
# samples, one BAM each, with planted SNPs and indels, indels at read ends, long
# insertions, soft clips, N bases, qualities 0-93, MAPQ 0-255, a deep locus, flagged
# reads, proper/improper/overlapping pairs, several read groups, NM and BQ tags; half the
# seeds push one feature to an extreme, a "theme": see the script), and
# every few rounds a real-reads case (dwgsim + bwa mem, one or two samples, fuzz-bams.py
# --real). On each:
#   mpileup: default; -B; -a AD,ADF,ADR,DP,SP,DP4,DV,DPR,INFO/AD,INFO/ADF,INFO/ADR,SCR,
#     INFO/SCR,QS,NMBZ -Oz (decompressed with bgzip -dc, and read back by bcftools view);
#     -d 10000; --call -mv and --call -m against the pipe; all samples' BAMs at once;
#   pileup: samtools mpileup -f ref (BAQ) and -B -f ref, all BAMs;
#   two more option sets of each kernel per round, drawn from the seed, the first at one
#   shard, the second at -@ 2 --shard-size 1k (MP_EXTRA,
#     PL_EXTRA below: -x, -A, -C 50, -q/-Q, -D, -E, -I, -X, -L, -g, -r, -a/-aa, extra
#     columns, flag filters, ...);
#   layouts: the cases run at -@ 1 and one shard; the default mpileup, -d 10000 (bcftools'
#     random draws past 255 bases), --call -mv and the BAQ pileup also at -@ 2
#     --shard-size 1k (shard edges everywhere) against the same expected bytes.
# --no-version on both sides, --quiet on seqshard.
#
# A difference prints the seed, both commands, the first differing lines of both, and
# keeps the case (BAMs, reference, both outputs, repro.sh) in a directory it names:
# ${SS_FUZZ_KEEP:-${TMPDIR:-/tmp}}/mpileup-fuzz.seedSEED; the test then exits 1. A case on
# which bcftools or samtools itself fails (a crash) is skipped with a SKIP line: that is
# not a seqshard bug. The deliberate differences of docs/user-guide.md (-T ^FILE, -g with
# several regions, regions past a contig's end) are not exercised, so nothing is excused.
#
# Environment (besides lib.sh's SEQSHARD, SAMTOOLS, SS_TIMEOUT, SS_VERBOSE):
#   SS_FUZZ_SEED=S    first seed of a long pass (with SS_FUZZ_ROUNDS) [1]
#   SS_FUZZ_ROUNDS=N  run N rounds, seeds S..S+N-1, instead of the short pass's fixed list
#   SS_FUZZ_SCALE=X   contig lengths and read counts times X [1 in a long pass; the short
#                     pass's list has its own]
#   SS_FUZZ_REAL=K    a real-reads case every K rounds [5; 0: none]
#   SS_FUZZ_KEEP=DIR  where failing cases are kept
#   SS_FUZZ_CASES=0   do not replay the minimised cases in tests/data/fuzz-cases/ (by
#                     default each DIR/case.bam is run against DIR/ref.fa: mpileup
#                     default, -m 1, -B -m 1, -Q 0 -m 1, --call -mv, pileup, as regression
#                     cases); SS_FUZZ_ROUNDS=0 replays them alone
#   BCFTOOLS          the reference bcftools [bcftools]
# Soak: SS_FUZZ_ROUNDS=200 SS_FUZZ_SEED=1000 bash tests/integration/mpileup_fuzz.sh
# (run a copy, with SS_SRC pointing at it, if you edit the script meanwhile: bash reads
# it as it goes). A difference found is minimised by hand (fewest reads, shortest
# region) and kept under tests/data/fuzz-cases/, one directory with a README each.
set -u
. "$(dirname "$0")/lib.sh"
BCFTOOLS=${BCFTOOLS:-bcftools}
GEN=$SS_SRC/scripts/fuzz-bams.py

[ -x "$SEQSHARD" ] ||
    { echo "FAIL setup: SEQSHARD=$SEQSHARD is not an executable; build it first"; exit 1; }
for t in "$BCFTOOLS" "$SAMTOOLS" python3 bgzip; do
    command -v "$t" >/dev/null ||
        { echo "SKIP: $t not found (needed by $(basename "$0"))"; exit 77; }
done
v=$("$BCFTOOLS" --version | head -1)
[ "$v" = "bcftools 1.16" ] ||
    { echo "SKIP: $BCFTOOLS is '$v'; seqshard mpileup gives bcftools 1.16's bytes"; exit 77; }
v=$("$SAMTOOLS" --version | head -1)
[[ $v == "samtools 1.16"* ]] ||
    { echo "SKIP: $SAMTOOLS is '$v'; seqshard pileup gives samtools 1.16's bytes"; exit 77; }
have_real=1
for t in dwgsim bwa; do command -v "$t" >/dev/null || have_real=0; done

SS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-fuzz.XXXXXX")
trap 'rm -rf "$SS_WORK"' EXIT
KEEP=${SS_FUZZ_KEEP:-${TMPDIR:-/tmp}}
REAL_EVERY=${SS_FUZZ_REAL:-5}
fz_skipped=0

# The short pass: SEED:SCALE:KIND (s synthetic, r real). Seed 15: three files, one sample
# in two of them with a 900x locus in both (bcftools draws past 255 bases at the default
# -d too), no reads on the first contig, reads of 1-40 bases (theme short); seed 6: four
# contigs, the third without reads (pileup -a/-aa), a 180x locus, MAPQ 0/1/255 (theme
# mapq); real seed 5: two samples, pairs of 250 and 100 bases. Chosen to stay under
# 120 s on 2 busy cores. (A change to fuzz-bams.py changes what a seed makes: check that
# these still do.)
SHORT="15:0.3:s 6:0.3:s 5:0.3:r"
for v in SS_FUZZ_ROUNDS SS_FUZZ_SEED SS_FUZZ_REAL SS_FUZZ_CASES; do
    [[ ${!v:-0} =~ ^[0-9]+$ ]] ||
        { echo "FAIL setup: $v='${!v}' is not a whole number; see the header of $0"; exit 2; }
done
[[ ${SS_FUZZ_SCALE:-1} =~ ^[0-9]*\.?[0-9]+$ ]] ||
    { echo "FAIL setup: SS_FUZZ_SCALE='$SS_FUZZ_SCALE' is not a number; see the header of $0"
      exit 2; }
if [ -n "${SS_FUZZ_ROUNDS:-}" ]; then
    s0=${SS_FUZZ_SEED:-1}
    ROUNDS=""
    for ((i = 0; i < SS_FUZZ_ROUNDS; i++)); do
        seed=$((s0 + i))
        kind=s
        [ "$REAL_EVERY" != 0 ] && [ $((i % REAL_EVERY)) = $((REAL_EVERY - 1)) ] && kind=r
        ROUNDS+=" $seed:${SS_FUZZ_SCALE:-1}:$kind"
    done
else
    ROUNDS=$SHORT
fi

# fz_first_diff EXP GOT: the first differing line of each, with its number.
fz_first_diff() {
    local n
    n=$(cmp "$1" "$2" 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p')
    [ -z "$n" ] && n=$(($(wc -l <"$1") < $(wc -l <"$2") ? $(wc -l <"$1") + 1 : $(wc -l <"$2") + 1))
    echo "     first difference at line $n:"
    echo "     expected: $(sed -n "${n}p" "$1" | cut -c1-400)"
    echo "     seqshard: $(sed -n "${n}p" "$2" | cut -c1-400)"
    # the columns (and ;-separated INFO items) that differ, as long lines get cut above
    awk -F'\t' -v n="$n" 'FNR == n { l[++k] = $0 }
        END {
            na = split(l[1], a, "\t"); nb = split(l[2], b, "\t")
            for (i = 1; i <= (na > nb ? na : nb); i++) {
                if (a[i] == b[i]) continue
                nx = split(a[i], x, ";"); ny = split(b[i], y, ";")
                for (j = 1; j <= (nx > ny ? nx : ny); j++)
                    if (x[j] != y[j])
                        printf "     column %d: expected %s, seqshard %s\n", i,
                            substr(x[j], 1, 200), substr(y[j], 1, 200)
            }
        }' "$1" "$2" | head -n 6
    diff "$1" "$2" | head -n 8 | cut -c1-240 | sed 's/^/     | /'
}

# fz_keep NAME EXP GOT EXPCMD GOTCMD: keep the case for a look by hand.
fz_kept=0
fz_keep() {
    local name=$1 exp=$2 got=$3 expcmd=$4 gotcmd=$5 k
    k=$KEEP/mpileup-fuzz.seed$SEED
    fz_kept=$((fz_kept + 1))
    mkdir -p "$k"
    cp -p "$CASE"/* "$k"/ 2>/dev/null
    cp "$exp" "$k/expected.$fz_kept" && cp "$got" "$k/seqshard.$fz_kept"
    expcmd=${expcmd//$CASE\//}
    gotcmd=${gotcmd//$CASE\//}
    {
        echo "# $name (seed $SEED): compare expected.$fz_kept with seqshard.$fz_kept"
        echo "cd $(printf %q "$k")"
        echo "${expcmd//$SS_WORK\//} > expected.$fz_kept"
        echo "${gotcmd//$SS_WORK\//} > seqshard.$fz_kept"
    } >>"$k/repro.sh"
    echo "     kept in $k (repro.sh has the commands)"
}

fz_n=0
# fz_check NAME EXP GOT EXPCMD GOTCMD GOTRC
fz_check() {
    local name=$1 exp=$2 got=$3 expcmd=$4 gotcmd=$5 rc=$6
    if [ "$rc" != 0 ]; then
        ss_bad "seed $SEED: $name" "seqshard exit status $rc" "seqshard: $gotcmd" \
            "stderr: $(head -3 "$got.err" | cut -c1-240)"
        fz_keep "$name" "$exp" "$got" "$expcmd" "$gotcmd"
        return 1
    elif ! cmp -s "$exp" "$got"; then
        ss_bad "seed $SEED: $name" "output differs" "expected: $expcmd" "seqshard: $gotcmd"
        fz_first_diff "$exp" "$got"
        fz_keep "$name" "$exp" "$got" "$expcmd" "$gotcmd"
        return 1
    else
        ss_ok "seed $SEED: $name ($(grep -vc '^#' "$got") lines)"
    fi
}

# fz_skip NAME RC CMD ERR: the reference tool failed on this input.
fz_skip() {
    fz_skipped=$((fz_skipped + 1))
    echo "SKIP seed $SEED: $1: the reference tool exited $2 (a crash on this input is not a" \
        "seqshard bug): $3; $(head -2 "$4" | tr '\n' ' ' | cut -c1-200)"
}

# Run the reference side once per case and seqshard at each layout.
# mp NAME LAYOUTS ARGS...: bcftools mpileup --no-version ARGS vs seqshard mpileup.
mp() {
    local name=$1 layouts=$2 lay exp got rc
    shift 2
    fz_n=$((fz_n + 1))
    exp=$SS_WORK/exp.$fz_n
    local ecmd=("$BCFTOOLS" mpileup --no-version "$@")
    timeout "$SS_TIMEOUT" "${ecmd[@]}" >"$exp" 2>"$exp.err" </dev/null
    rc=$?
    [ $rc != 0 ] && { fz_skip "mpileup $name" $rc "$(ss_quote "${ecmd[@]}")" "$exp.err"; return; }
    for lay in $layouts; do
        got=$SS_WORK/got.$fz_n.${lay//:/.}
        local gcmd=("$SEQSHARD" mpileup --no-version --quiet -@ "${lay%%:*}" \
            --shard-size "${lay#*:}" "$@")
        timeout "$SS_TIMEOUT" "${gcmd[@]}" >"$got" 2>"$got.err" </dev/null
        fz_check "mpileup $name [-@${lay%%:*} ${lay#*:}]" "$exp" "$got" "$(ss_quote "${ecmd[@]}")" \
            "$(ss_quote "${gcmd[@]}")" $?
    done
}

# mpz NAME ARGS...: -Oz to files, compared decompressed, and as bcftools view reads them.
mpz() {
    local name=$1 rc
    shift
    fz_n=$((fz_n + 1))
    local exp=$SS_WORK/exp.$fz_n got=$SS_WORK/got.$fz_n
    local ecmd=("$BCFTOOLS" mpileup --no-version -Oz -o "$exp.vcf.gz" "$@")
    local gcmd=("$SEQSHARD" mpileup --no-version --quiet -@ 1 -Oz -o "$got.vcf.gz" "$@")
    timeout "$SS_TIMEOUT" "${ecmd[@]}" >/dev/null 2>"$exp.err" </dev/null
    rc=$?
    [ $rc != 0 ] && { fz_skip "mpileup $name" $rc "$(ss_quote "${ecmd[@]}")" "$exp.err"; return; }
    timeout "$SS_TIMEOUT" "${gcmd[@]}" >/dev/null 2>"$got.err" </dev/null
    rc=$?
    bgzip -dc "$exp.vcf.gz" >"$exp" 2>/dev/null
    bgzip -dc "$got.vcf.gz" >"$got" 2>/dev/null
    fz_check "mpileup $name -Oz (bgzip -dc)" "$exp" "$got" "$(ss_quote "${ecmd[@]}")" \
        "$(ss_quote "${gcmd[@]}")" $rc || return
    "$BCFTOOLS" view --no-version "$exp.vcf.gz" >"$exp.view" 2>/dev/null
    "$BCFTOOLS" view --no-version "$got.vcf.gz" >"$got.view" 2>"$got.err"
    fz_check "mpileup $name -Oz (bcftools view)" "$exp.view" "$got.view" \
        "bcftools view $(ss_quote "${ecmd[@]}")" "bcftools view $(ss_quote "${gcmd[@]}")" 0
}

# mpcall NAME "CALL OPTS" LAYOUTS ARGS...: bcftools mpileup -Ou ARGS | bcftools call OPTS
# against seqshard mpileup ARGS --call OPTS.
mpcall() {
    local name=$1 copts=$2 layouts=$3 rc lay
    shift 3
    fz_n=$((fz_n + 1))
    local exp=$SS_WORK/exp.$fz_n got=$SS_WORK/got.$fz_n
    # shellcheck disable=SC2086 # copts is a word list
    timeout "$SS_TIMEOUT" "$BCFTOOLS" mpileup --no-version -Ou "$@" 2>"$exp.err" </dev/null |
        "$BCFTOOLS" call --no-version $copts >"$exp" 2>>"$exp.err"
    rc="${PIPESTATUS[*]}"
    local ecmd
    ecmd="$(ss_quote "$BCFTOOLS" mpileup --no-version -Ou "$@")"
    ecmd+=" | $BCFTOOLS call --no-version $copts"
    [ "$rc" != "0 0" ] && { fz_skip "--call $name" "$rc" "$ecmd" "$exp.err"; return; }
    for lay in $layouts; do
        got=$SS_WORK/got.$fz_n.${lay//:/.}
        # shellcheck disable=SC2086,SC2206 # copts is a word list
        local gcmd=("$SEQSHARD" mpileup --no-version --quiet -@ "${lay%%:*}" \
            --shard-size "${lay#*:}" "$@" --call $copts)
        timeout "$SS_TIMEOUT" "${gcmd[@]}" >"$got" 2>"$got.err" </dev/null
        fz_check "mpileup --call $name [-@${lay%%:*} ${lay#*:}]" "$exp" "$got" "$ecmd" \
            "$(ss_quote "${gcmd[@]}")" $?
    done
}

# pl NAME LAYOUTS ARGS...: samtools mpileup ARGS vs seqshard pileup ARGS.
pl() {
    local name=$1 layouts=$2 lay exp got rc
    shift 2
    fz_n=$((fz_n + 1))
    exp=$SS_WORK/exp.$fz_n
    local ecmd=("$SAMTOOLS" mpileup "$@")
    timeout "$SS_TIMEOUT" "${ecmd[@]}" >"$exp" 2>"$exp.err" </dev/null
    rc=$?
    [ $rc != 0 ] && { fz_skip "pileup $name" $rc "$(ss_quote "${ecmd[@]}")" "$exp.err"; return; }
    for lay in $layouts; do
        got=$SS_WORK/got.$fz_n.${lay//:/.}
        local gcmd=("$SEQSHARD" pileup --quiet -@ "${lay%%:*}" --shard-size "${lay#*:}" "$@")
        timeout "$SS_TIMEOUT" "${gcmd[@]}" >"$got" 2>"$got.err" </dev/null
        fz_check "pileup $name [-@${lay%%:*} ${lay#*:}]" "$exp" "$got" "$(ss_quote "${ecmd[@]}")" \
            "$(ss_quote "${gcmd[@]}")" $?
    done
}

ONE="1:1g"
EDGES="1:1g 2:1k"
TAGS=AD,ADF,ADR,DP,SP,DP4,DV,DPR,INFO/AD,INFO/ADF,INFO/ADR,SCR,INFO/SCR,QS,NMBZ
# the extra option sets (CTG: the first contig); none is a deliberate difference
MP_EXTRA=("-x" "-A" "-C 50" "-q 20 -Q 13" "-D" "-E" "--ignore-RG -a AD,DP" "-I"
    "-m 1 -F 0.01" "-X ont" "-X pacbio-ccs" "-X 1.12" "-L 40" "-h 100" "-p -m 2"
    "--indel-size 20" "-U -a SP,DP4" "--open-prob 30" "--ar incAD -a AD,ADF"
    "-Q 0 --max-BQ 30" "-r CTG:200-1500" "-g 0,5,20 -a DP" "-B --delta-BQ 10 -Q 5"
    "--ns DUP -A" "--ff 0 -a AD")
PL_EXTRA=("-x" "-A" "-C 50" "-Q 0" "-q 5 -Q 20" "-a" "-aa" "-s --output-QNAME" "-d 100"
    "--output-extra FLAG,MAPQ,RG" "-O --output-BP-5" "--reverse-del"
    "--no-output-ins --no-output-del" "--ff 0" "-E" "-R" "--no-output-ends -Q 0"
    "-r CTG:200-1500" "-B -aa -r CTG" "--rf 2 -x")
round_no=0
for r in $ROUNDS; do
    SEED=${r%%:*}
    rest=${r#*:}
    SCALE=${rest%%:*}
    KIND=${rest#*:}
    round_no=$((round_no + 1))
    CASE=$SS_WORK/case.$SEED.$KIND
    mkdir -p "$CASE"
    if [ "$KIND" = r ]; then
        if [ $have_real = 0 ]; then
            echo "SKIP seed $SEED: dwgsim or bwa not found, no real-reads case"
            continue
        fi
        gen=(python3 "$GEN" --seed "$SEED" --scale "$SCALE" --real --out "$CASE")
    else
        gen=(python3 "$GEN" --seed "$SEED" --scale "$SCALE" --out "$CASE")
    fi
    if ! "${gen[@]}" 2>"$SS_WORK/gen.err"; then
        ss_bad "seed $SEED: generate" "$(ss_quote "${gen[@]}") failed" \
            "$(head -3 "$SS_WORK/gen.err")"
        continue
    fi
    [ "$SS_VERBOSE" = 1 ] && sed 's/^/     /' "$CASE/case.txt"
    if [ "$KIND" = r ]; then
        REFA=$CASE/real.fa
        BAMS=("$CASE"/real[0-9].bam)
    else
        REFA=$CASE/ref.fa
        BAMS=("$CASE"/s[0-9].bam)
    fi
    F=(-f "$REFA")
    CTG=$(head -1 "$REFA.fai" | cut -f1)
    # the first case of each kernel also runs at -@ 2 with small shards (edges everywhere)
    mp "default" "$EDGES" "${F[@]}" "${BAMS[@]}"
    mp "-B" "$ONE" -B "${F[@]}" "${BAMS[@]}"
    mpz "-a $TAGS" -a "$TAGS" "${F[@]}" "${BAMS[@]}"
    [ "$KIND" = s ] && mp "-d 10000" "$EDGES" -d 10000 "${F[@]}" "${BAMS[@]}"
    mpcall "-mv" "-mv" "$EDGES" "${F[@]}" "${BAMS[@]}"
    mpcall "-m" "-m" "$ONE" "${F[@]}" "${BAMS[@]}"
    pl "-f ref (BAQ)" "$EDGES" "${F[@]}" "${BAMS[@]}"
    pl "-B -f ref" "$ONE" -B "${F[@]}" "${BAMS[@]}"
    # two more option sets of each kernel, drawn from the seed
    # (the first at one shard, the second at -@ 2 with small shards)
    RANDOM=$SEED
    for lay in "$ONE" 2:1k; do
        o=${MP_EXTRA[RANDOM % ${#MP_EXTRA[@]}]//CTG/$CTG}
        # shellcheck disable=SC2086 # o is a word list
        mp "$o" "$lay" $o "${F[@]}" "${BAMS[@]}"
        o=${PL_EXTRA[RANDOM % ${#PL_EXTRA[@]}]//CTG/$CTG}
        # shellcheck disable=SC2086 # o is a word list
        pl "$o" "$lay" $o "${F[@]}" "${BAMS[@]}"
    done
    rm -rf "$CASE" "$SS_WORK"/exp.* "$SS_WORK"/got.*
done

# the minimised cases found before: regression cases
if [ "${SS_FUZZ_CASES:-1}" != 0 ]; then
    for d in "$SS_SRC"/tests/data/fuzz-cases/*/; do
        if [ ! -f "$d/case.bam" ] || [ ! -f "$d/ref.fa" ]; then continue; fi
        SEED="case-$(basename "$d")"
        CASE=${d%/}
        F=(-f "$CASE/ref.fa")
        mp "default" "$EDGES" "${F[@]}" "$CASE/case.bam"
        mp "-m 1" "$ONE" -m 1 "${F[@]}" "$CASE/case.bam"
        mp "-B -m 1" "$ONE" -B -m 1 "${F[@]}" "$CASE/case.bam"
        mp "-Q 0 -m 1" "$ONE" -Q 0 -m 1 "${F[@]}" "$CASE/case.bam"
        mpcall "-mv" "-mv" "$ONE" "${F[@]}" "$CASE/case.bam"
        pl "-f ref (BAQ)" "$EDGES" "${F[@]}" "$CASE/case.bam"
    done
fi

echo "$(basename "$0"): $round_no rounds ($ROUNDS )," \
    "$fz_skipped cases skipped on a reference-tool failure"
ss_summary
exit $?

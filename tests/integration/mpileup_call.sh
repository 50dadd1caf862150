#!/usr/bin/env bash
# mpileup_call.sh -- seqshard mpileup's gVCF blocks (-g) and calling in the same pass
# (--call) give the bytes of bcftools 1.16, with shard edges everywhere:
#   - `bcftools mpileup --no-version -g BOUNDS ARGS` against seqshard with the same,
#     blocks crossing shard edges (2k, 1k), one sample and three;
#   - `bcftools mpileup --no-version -Ou ARGS | bcftools call --no-version OPTS` against
#     `seqshard mpileup --no-version ARGS --call OPTS`: -mv, -m (every site), -c, -cv,
#     -mv -a GQ,GP, --ploidy 1, -G - (with -a AD,QS), -mv -A, -Oz after --call (decompressed,
#     with --write-index's .csi as bcftools index makes it, and --write-index=tbi's .tbi as
#     bcftools index -t makes it), the deep contig;
#   - -T FILE (and -t FILE) after --call, the sites to call: dwgsim's variants, every 97th
#     position, shard edges, repeats, comments, a gzipped copy; -@1..3, shards 1k to whole
#     contigs, and under mpirun -np 2 and 3 (when the build has MPI);
#   - --call -g, the caller's gVCF blocks (with GT), across shard edges and under mpirun;
#   - --call -C alleles -T FILE: the targets' alleles called (dwgsim's variants, other ALTs,
#     two ALTs, a SNP and an indel at one site, lower case), with -v, -A, -G -, -g, -a and
#     FORMAT tags of one value per allele, at -@1..3, shards 1k to whole, under mpirun;
#   - what --call refuses before any work (mpileup's -g with --call, call's -g without
#     FORMAT/DP or with -c or -v, -C trio, -C alleles without -T or with -c or without an
#     alleles column, -i without -C alleles or with -g, a targets file that cannot be opened
#     or read), one line, exit 2; -i with --write-index, with a targets contig the header
#     lacks, or with a call at POS 1, one line, exit 1;
#   - --call -C alleles -i: the missed targets where bcftools writes them, at -@1..3, shards
#     1k to whole, within regions, as BCF, under mpirun;
#     a target whose REF is not the reference's stops the run with exit 1, as in bcftools.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_setup
mp_setup
W=$SS_WORK
L="1:1g 3:1k"
R=(-f "$REF")

# ---- gVCF blocks -------------------------------------------------------------------------
mp_vs "-g 0,5,10 s1.bam"              "$L" -g 0,5,10 "${R[@]}" "$TD/s1.bam"
mp_vs "-g 1,3,20,50 three samples"    "$L" -g 1,3,20,50 "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam"
mp_vs "-g 10 -r ctgA:1500-9000"       "$L" -g 10 -r ctgA:1500-9000 "${R[@]}" "$TD/s1.bam" "$TD/edge.bam"
# a block that closes past a shard's end where the closing record starts another block
mp_vs "-g 5,10 edge.bam -Ou"          "1:1g 2:2k 1:14k" -g 5,10 -Ou "${R[@]}" "$TD/edge.bam"

# ---- --call against the pipe ---------------------------------------------------------------
# verdict NAME RC EXP GOT: seqshard's run (exit status RC, output GOT, its stderr GOT.err)
# against the pipe's EXP. 0 when they match.
verdict() {
    local name=$1 rc=$2 exp=$3 got=$4
    if [ "$rc" != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -2 "$got.err")"
    elif ! cmp -s "$exp" "$got"; then
        ss_bad "$name" "differs from bcftools mpileup | call"
        ss_show_diff "$exp" "$got"
    else
        ss_ok "$name ($(grep -vc '^#' "$got") records)"
        return 0
    fi
    return 1
}

# call_vs NAME "CALL OPTS" LAYOUTS MPILEUP ARGS...
call_vs() {
    local name=$1 copts=$2 layouts=$3
    shift 3
    ss_case_no=$((ss_case_no + 1))
    local exp=$W/call.exp.$ss_case_no layout got
    # shellcheck disable=SC2086 # copts is a word list
    if ! "$BCFTOOLS" mpileup --no-version -Ou "$@" 2>/dev/null |
        "$BCFTOOLS" call --no-version $copts >"$exp" 2>"$exp.err"; then
        ss_bad "$name" "the bcftools pipe itself failed: the test is wrong" "$(head -2 "$exp.err")"
        return 0
    fi
    for layout in $layouts; do
        got=$W/call.got.$ss_case_no.${layout//:/.}
        # shellcheck disable=SC2086
        timeout "$SS_TIMEOUT" "$SEQSHARD" mpileup --no-version --quiet -@ "${layout%%:*}" \
            --shard-size "${layout#*:}" "$@" --call $copts >"$got" 2>"$got.err" </dev/null
        verdict "$name [-@${layout%%:*} ${layout#*:}]" $? "$exp" "$got" && rm -f "$got" "$got.err"
    done
}

call_vs "--call -mv"                "-mv"            "$L" "${R[@]}" "$TD/s1.bam"
call_vs "--call -m, three samples"  "-m"             "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam"
call_vs "--call -c"                 "-c"             "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -cv"                "-cv"            "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv -a GQ,GP"       "-mv -a GQ,GP"   "$L" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv -A"             "-mv -A"         "$L" "${R[@]}" "$TD/edge.bam" "$TD/s2.bam"
call_vs "--call -m --ploidy 1"      "-m --ploidy 1"  "$L" "${R[@]}" "$TD/s1.bam"
call_vs "--call -mv -G -"           "-mv -G -"       "$L" -a AD,QS "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -mv, deep contig"   "-mv"            "$L" -d 10000 -f "$AMP" "$TD/amp.bam"
# the caller's gVCF blocks (--call -g): reference calls with their GT, blocks across shard
# edges (1k, 1.5k, 2k), haploid and three samples, within a region and at -T's sites
LG="1:1g 3:1k 2:2k 1:1500"
call_vs "--call -m -g 5,10,20"      "-m -g 5,10,20"  "$LG" -a DP "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -m -g 0,5,10 edge"  "-m -g 0,5,10"   "$LG" -a DP "${R[@]}" "$TD/edge.bam"
call_vs "--call -m -g -A, three"    "-m -g 1,3,20,50 -A" "$LG" -a DP,AD "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam"
call_vs "--call -m -g --ploidy 1 -a GQ" "-m -g 3 --ploidy 1 -a GQ" "$LG" -a FORMAT/DP "${R[@]}" "$TD/s1.bam" "$TD/edge.bam"
call_vs "--call -m -g, -r"          "-m -g 10"       "$LG" -a DP -r ctgA:1500-9000 "${R[@]}" "$TD/s1.bam"
call_vs "--call -m -g, deep contig" "-m -g 100,1000" "1:1g 2:1k" -a DP -d 10000 -f "$AMP" "$TD/amp.bam"

# ---- -T: the sites to call ------------------------------------------------------------------
# dwgsim's variants, every 97th position, both sides of the 1k and 2k shard edges, repeats,
# a contig the data lacks, a comment, a CRLF line; the empty line ends the file for bcftools
TGT=$W/targets.tsv
{
    echo "# CHROM POS"
    grep -v '^#' "$TD/s1.bam.mutations.vcf" | cut -f1,2
    awk '!/^#/ {print $1 "\t" $2}' "$TD/s1.bam.mutations.vcf" | head -20
    for p in $(seq 1 97 60000); do echo "ctgA $p"; done
    for p in $(seq 50 97 40000); do printf 'ctgB\t%d\textra words\n' "$p"; done
    for p in 1000 1001 2000 2001 4000 4001 30005; do printf 'ctgB\t%d\r\nctgA\t%d\n' "$p" "$p"; done
    echo "ctgNone 100"
    echo "ctgTiny 1100"
    echo
    echo "ctgTiny 1101"
} >"$TGT"
gzip -c "$TGT" >"$TGT.gz"
LT="1:1g 2:2k 3:1k"
call_vs "--call -mv -T"                   "-mv -T $TGT"     "$LT" "${R[@]}" "$TD/s1.bam"
call_vs "--call -m -T, three samples"     "-m -T $TGT"      "$LT" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam"
call_vs "--call -c -t FILE.gz"            "-c -t $TGT.gz"   "$LT" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
# a VCF names its sites the same way (CHROM, POS; its header lines are comments)
call_vs "--call -mv -T VCF"               "-mv -T $TD/s1.bam.mutations.vcf" "2:2k" "${R[@]}" "$TD/s1.bam"
call_vs "--call -m -V indels -T"          "-m -V indels -T $TGT" "1:1g 3:1k" "${R[@]}" "$TD/edge.bam"
call_vs "--call -m -g 5 -T"               "-m -g 5 -T $TGT" "$LT" -a DP "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"

# ---- -C alleles: the targets' alleles called ------------------------------------------------
# dwgsim's variants as CHROM POS REF,ALT, and per contig 150 random sites: another ALT, two
# ALTs, a SNP and a deletion at one position, lower case, an insertion, a deletion
TAL=$W/alleles.tsv
python3 - "$REF" "$TD/s1.bam.mutations.vcf" "$TAL" "$SAMTOOLS" <<'PY'
import random, subprocess, sys
fa, vcf, out, samtools = sys.argv[1:5]
def contig(name):  # the contig's sequence, through samtools faidx
    lines = subprocess.check_output([samtools, 'faidx', fa, name], text=True).split('\n')
    return ''.join(lines[1:])
ref = {c: contig(c) for c in ('ctgA', 'ctgB')}
rng = random.Random(7)
sites = [(f[0], int(f[1]), f[3] + ',' + f[4])
         for f in (l.split('\t') for l in open(vcf) if not l.startswith('#'))]
for ctg in ('ctgA', 'ctgB'):
    s = ref[ctg]
    for p in rng.sample(range(10, min(len(s), 60000) - 10), 150):
        r = s[p - 1]
        alts = [b for b in 'ACGT' if b != r.upper()]
        k = rng.random()
        if k < 0.4:
            sites.append((ctg, p, r + ',' + rng.choice(alts)))
        elif k < 0.55:
            sites.append((ctg, p, r + ',' + ','.join(rng.sample(alts, 2))))
        elif k < 0.7:
            sites += [(ctg, p, r + ',' + rng.choice(alts)), (ctg, p, s[p - 1:p + 2] + ',' + r)]
        elif k < 0.8:
            sites.append((ctg, p, (r + ',' + rng.choice(alts)).lower()))
        elif k < 0.9:
            sites.append((ctg, p, r + ',' + r + 'T'))
        else:
            sites.append((ctg, p, s[p - 1:p + 1] + ',' + r))
rng.shuffle(sites)
sites.sort(key=lambda x: (x[0], x[1]))
with open(out, 'w') as f:
    f.writelines('%s\t%d\t%s\n' % t for t in sites)
PY
A3=("$TD/s1.bam" "$TD/s2.bam" "$TD/edge.bam")
call_vs "--call -m -C alleles"            "-m -C alleles -T $TAL"   "$LT" -a AD,DP "${R[@]}" "${A3[@]}"
call_vs "--call -mv -C alleles"           "-mv -C alleles -T $TAL"  "$LT" "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"
call_vs "--call -m -A -C alleles"         "-m -A -C alleles -T $TAL" "$LT" -a AD "${R[@]}" "${A3[@]}"
call_vs "--call -m -G - -C alleles"       "-m -G - -C alleles -T $TAL" "2:2k" -a AD,QS "${R[@]}" "${A3[@]}"
call_vs "--call -m -g -C alleles"         "-m -g 5,10 -C alleles -T $TAL" "3:1k" -a DP "${R[@]}" "${A3[@]}"
# -i: a line for every target no record took, where bcftools writes it: before the next call,
# at the end of a contig, and at the very end those of contigs without a call (ctgEmpty, after
# ctgTiny: in the targets file's order) and those left at a contig's last call
TAI=$W/alleles_i.tsv
{ cat "$TAL"; printf 'ctgEmpty\t100\tA,C\n'; } >"$TAI"
call_vs "--call -m -C alleles -i"         "-m -C alleles -T $TAI -i" "1:1g 3:1k 2:1000" -a AD "${R[@]}" "${A3[@]}"
call_vs "--call -m -V indels -C alleles -i" "-m -V indels -C alleles -T $TAI -i" "3:1k" \
    "${R[@]}" "$TD/s1.bam"
call_vs "--call -mv -C alleles -i -Ou"    "-mv -C alleles -T $TAI -i -Ou" "2:2k" "${R[@]}" "$TD/s1.bam"
# the deep contig (past 255 reads, shard edges inside its stacks): every 53rd position
AMPT=$W/amp_targets.tsv
amp_seq=$("$SAMTOOLS" faidx "$AMP" ctgAmp | tail -n +2 | tr -d '\n')
for p in $(seq 7 53 2990); do printf 'ctgAmp\t%d\t%s,T\n' "$p" "${amp_seq:$((p - 1)):1}"; done >"$AMPT"
call_vs "--call -m -C alleles -i, deep contig" "-m -C alleles -T $AMPT -i" "1:1g 3:1k" \
    -d 10000 -f "$AMP" "$TD/amp.bam"
call_vs "--call -m -C alleles -i, regions" "-m -C alleles -T $TAI -i" "2:1000" \
    -r ctgA:1500-9000,ctgB:100-3000 "${R[@]}" "$TD/s1.bam"
call_vs "--call -m -a GQ,GP -C alleles, Number=R tags" "-m -a GQ,GP -C alleles -T $TAL" "3:1k" \
    -a FORMAT/AD,ADF,ADR,SP "${R[@]}" "${A3[@]}"

# under mpirun: every rank calls its shards' target sites
if [ "${SS_MPI:-1}" != 0 ] && command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
    # mpi_call_vs NAME "MPILEUP OPTS" "CALL OPTS": ranks 2 and 3 against the pipe
    mpi_call_vs() {
        local name=$1 mopts=$2 copts=$3 np got exp=$W/mpi.exp
        # shellcheck disable=SC2086 # the options are word lists
        "$BCFTOOLS" mpileup --no-version -Ou $mopts "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" \
            2>/dev/null | "$BCFTOOLS" call --no-version $copts >"$exp" 2>/dev/null
        for np in 2 3; do
            got=$W/mpi.got.$np
            # shellcheck disable=SC2086
            timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np "$np" "$SEQSHARD" mpileup --no-version \
                --quiet -@ 1 --shard-size 2k $mopts "${R[@]}" "$TD/s1.bam" "$TD/s2.bam" \
                -o "$got" --call $copts </dev/null >/dev/null 2>"$got.err"
            verdict "$name, mpirun -np $np" $? "$exp" "$got"
        done
    }
    mpi_call_vs "--call -m -T" "" "-m -T $TGT"
    mpi_call_vs "--call -m -g" "-a DP" "-m -g 5,10,20"
    mpi_call_vs "--call -m -C alleles" "-a AD" "-m -C alleles -T $TAL"
    mpi_call_vs "--call -m -C alleles -i" "-a AD" "-m -C alleles -T $TAI -i"
fi

# -Oz after --call names the output; --write-index gives bcftools index's .csi of it
exp=$W/calls.vcf.gz got=$W/ss.calls.vcf.gz
"$BCFTOOLS" mpileup --no-version -Ou "${R[@]}" "$TD/s1.bam" 2>/dev/null |
    "$BCFTOOLS" call --no-version -mv -Oz -o "$exp" 2>/dev/null
if ! "$SEQSHARD" mpileup --no-version --quiet -@ 2 --shard-size 2k "${R[@]}" "$TD/s1.bam" \
    --call -mv -Oz -o "$got" --write-index 2>"$W/oz.err"; then
    ss_bad "--call -mv -Oz --write-index" "failed" "$(head -2 "$W/oz.err")"
elif ! cmp -s <(gzip -dc "$exp") <(gzip -dc "$got"); then
    ss_bad "--call -mv -Oz --write-index" "decompressed output differs from the pipe's"
else
    cp "$got" "$W/copy.vcf.gz"
    "$BCFTOOLS" index "$W/copy.vcf.gz"
    if cmp -s "$W/copy.vcf.gz.csi" "$got.csi"; then
        ss_ok "--call -mv -Oz --write-index (.csi as bcftools index)"
    else
        ss_bad "--call -mv -Oz --write-index" "the .csi differs from bcftools index's"
    fi
fi

# --write-index=tbi (after --call, or on mpileup's side): the .tbi of bcftools index -t
tbi_vs() { # name seqshard-args...
    local name=$1 got=$W/tbi.vcf.gz
    shift
    rm -f "$got" "$got.tbi" "$W/tbi.copy.vcf.gz"*
    if ! "$SEQSHARD" mpileup --no-version --quiet -@ 3 --shard-size 1k "$@" -o "$got" \
        2>"$W/tbi.err"; then
        ss_bad "$name" "failed" "$(head -2 "$W/tbi.err")"
        return
    fi
    cp "$got" "$W/tbi.copy.vcf.gz"
    "$BCFTOOLS" index -t "$W/tbi.copy.vcf.gz"
    if [ -e "$got.csi" ] || ! cmp -s "$W/tbi.copy.vcf.gz.tbi" "$got.tbi"; then
        ss_bad "$name" "want only a .tbi, the one bcftools index -t makes"
    else
        ss_ok "$name (.tbi as bcftools index -t)"
    fi
}
tbi_vs "--call -mv -Oz --write-index=tbi" "${R[@]}" "$TD/s1.bam" --call -mv -Oz --write-index=tbi
tbi_vs "-Oz --write-index=tbi"            --write-index=tbi -Oz "${R[@]}" "$TD/s1.bam" "$TD/s2.bam"

# ---- refusals: one line, exit 2, nothing written -------------------------------------------
refuse() { # name expected-text args...
    local name=$1 want=$2
    shift 2
    "$SEQSHARD" mpileup "$@" -o "$W/refused.vcf" >"$W/r.out" 2>"$W/r.err"
    local rc=$?
    if [ $rc != 2 ]; then
        ss_bad "$name" "exit status $rc, want 2" "$(head -2 "$W/r.err")"
    elif ! grep -q -- "$want" "$W/r.err" || [ "$(wc -l <"$W/r.err")" != 1 ]; then
        ss_bad "$name" "want one line mentioning '$want'" "$(head -3 "$W/r.err")"
    elif [ -e "$W/refused.vcf" ]; then
        ss_bad "$name" "an output file was left"
    else
        ss_ok "$name"
    fi
}
refuse "--call -g without FORMAT/DP" "FORMAT/DP" "${R[@]}" "$TD/s1.bam" --call -m -g 5
refuse "--call -c -g"        "-c calling mode" -a DP "${R[@]}" "$TD/s1.bam" --call -c -g 5
refuse "--call -v -g"        "--variants-only and --gvcf" -a DP "${R[@]}" "$TD/s1.bam" --call -mv -g 5
refuse "--call -g 5,x"       "could not parse --gvcf" -a DP "${R[@]}" "$TD/s1.bam" --call -m -g 5,x
refuse "-g with --call"      "-g with --call" -g 5 -a DP "${R[@]}" "$TD/s1.bam" --call -mv
refuse "--call -C trio"      "trio"   "${R[@]}" "$TD/s1.bam" --call -mv -C trio
refuse "--call -C alleles without -T" "expected -t or -T" "${R[@]}" "$TD/s1.bam" --call -m -C alleles
refuse "--call -c -C alleles" "requires -m" "${R[@]}" "$TD/s1.bam" --call -c -C alleles -T "$TAL"
refuse "--call -C alleles, no alleles column" "third column" "${R[@]}" "$TD/s1.bam" \
    --call -m -C alleles -T "$TGT"
refuse "--call -i without -C alleles" "requires -C alleles" "${R[@]}" "$TD/s1.bam" --call -m -T "$TAL" -i
refuse "--call -i -g"        "-i with -g" -a DP "${R[@]}" "$TD/s1.bam" --call -m -C alleles -T "$TAL" -i -g 5
# -i refused once the inputs are known: --write-index (the end is out of order), a targets
# contig the header lacks (bcftools fails writing it), a call at POS 1 (bcftools' window
# before it wraps around); one line, a non-zero exit, no output
at1_sam() { # three reads of ctgA from POS 1, one with a C at POS 1
    local seq
    seq=$("$SAMTOOLS" faidx "$REF" ctgA:1-50 | tail -n +2 | tr -d '\n')
    "$SAMTOOLS" view -H "$TD/s1.bam"
    for i in 1 2 3; do
        printf 'r%d\t0\tctgA\t1\t60\t50M\t*\t0\t0\t%s\t%s\n' "$i" \
            "$([ $i = 1 ] && echo "C${seq:1}" || echo "$seq")" "$(printf 'I%.0s' $(seq 50))"
    done
}
at1_sam | "$SAMTOOLS" sort -o "$W/at1.bam" - 2>/dev/null && "$SAMTOOLS" index "$W/at1.bam"
printf 'ctgA\t1\t%s,C\n' "$("$SAMTOOLS" faidx "$REF" ctgA:1-1 | tail -1)" >"$W/at1.tsv"
printf 'ctgA\t500\tT,G\nctgNone\t5\tA,C\n' >"$W/none.tsv"
# refuse_late NAME WANT LINES ARGS...: seqshard mpileup ARGS fails naming WANT in LINES lines
# (a caller's stop: its line and the run's, as for a wrong REF), leaving no output
refuse_late() {
    local name=$1 want=$2 lines=$3
    shift 3
    rm -f "$W/refused.vcf.gz" "$W/refused.vcf.gz.csi"
    "$SEQSHARD" mpileup --quiet "${R[@]}" -o "$W/refused.vcf.gz" "$@" 2>"$W/r.err"
    local rc=$?
    if [ $rc = 0 ] || ! grep -q -- "$want" "$W/r.err" || [ "$(grep -vc '^Note:' "$W/r.err")" != "$lines" ] ||
        [ -e "$W/refused.vcf.gz" ]; then
        ss_bad "$name" "want a non-zero exit, $lines line(s) naming '$want', no output (rc $rc)" \
            "$(head -3 "$W/r.err")"
    else
        ss_ok "$name"
    fi
}
refuse_late "--call -i --write-index" "--write-index" 1 --write-index "$TD/s1.bam" \
    --call -m -C alleles -T "$TAL" -i -Oz
refuse_late "--call -i, a contig not in the header" "ctgNone" 1 "$TD/s1.bam" \
    --call -m -C alleles -T "$W/none.tsv" -i
refuse_late "--call -i, a call at POS 1" "POS 1" 2 "$W/at1.bam" --call -m -C alleles -T "$W/at1.tsv" -i
# a target whose REF is not the reference's stops the run, as bcftools stops
printf 'ctgA\t446\tG,T\n' >"$W/badref.tsv"
"$SEQSHARD" mpileup --quiet "${R[@]}" "$TD/s1.bam" -o "$W/refused.vcf" \
    --call -m -C alleles -T "$W/badref.tsv" 2>"$W/r.err"
rc=$?
if [ $rc = 0 ] || ! grep -q "not compatible at ctgA:446" "$W/r.err" || [ -e "$W/refused.vcf" ]; then
    ss_bad "--call -C alleles, a wrong REF" "want exit 1 naming ctgA:446, no output (rc $rc)" \
        "$(head -2 "$W/r.err")"
else
    ss_ok "--call -C alleles, a wrong REF"
fi
if "$SEQSHARD" mpileup "${R[@]}" "$TD/s1.bam" --call -mv -Ob -o "$W/refused.bcf" \
    --write-index=tbi 2>"$W/r.err" || ! grep -q "needs -Oz" "$W/r.err" || [ -e "$W/refused.bcf" ]; then
    ss_bad "--write-index=tbi -Ob" "want a refusal naming -Oz, no output" "$(head -2 "$W/r.err")"
else
    ss_ok "--write-index=tbi -Ob"
fi
refuse "--write-index=bai"   "give csi or tbi" "${R[@]}" "$TD/s1.bam" --call -mv -Oz --write-index=bai
refuse "--call -t REGION"    "cannot open the targets file ctgA:100" "${R[@]}" "$TD/s1.bam" \
    --call -m -t ctgA:100
printf 'ctgA\t100\nctgA\n' >"$W/bad.tsv"
refuse "--call -T, a line without POS" "line 2" "${R[@]}" "$TD/s1.bam" --call -m -T "$W/bad.tsv"

ss_summary
exit $?

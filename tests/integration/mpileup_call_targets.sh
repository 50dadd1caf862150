#!/usr/bin/env bash
# mpileup_call_targets.sh -- the sites and alleles --call is told to call give the bytes of
# bcftools 1.16 (`bcftools mpileup --no-version -Ou ARGS | bcftools call --no-version OPTS`
# against `seqshard mpileup --no-version ARGS --call OPTS`), with shard edges everywhere:
#   - -T FILE (and -t FILE) after --call, the sites to call: dwgsim's variants, every 97th
#     position, shard edges, repeats, comments, a gzipped copy; -@1..3, shards 1k to whole
#     contigs, and under mpirun -np 2 and 3 (when the build has MPI);
#   - --call -C alleles -T FILE: the targets' alleles called (dwgsim's variants, other ALTs,
#     two ALTs, a SNP and an indel at one site, lower case), with -v, -A, -G -, -g, -a and
#     FORMAT tags of one value per allele, at -@1..3, shards 1k to whole, under mpirun;
#   - --call -C alleles -i: the missed targets where bcftools writes them, at -@1..3, shards
#     1k to whole, within regions, as BCF, under mpirun;
#     a target whose REF is not the reference's stops the run with exit 1, as in bcftools.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
ss_setup
mp_setup
W=$SS_WORK
R=(-f "$REF")
. "$(dirname "$0")/lib_call.sh"

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

# -C alleles refusals: one line, status 1 or 2, nothing written
refused() { # NAME MENTION TARGETS_FILE
    local name=$1 mention=$2 out=$W/refused.vcf
    rm -f "$out"
    "$SEQSHARD" mpileup --no-version --quiet -@ 2 --shard-size 2k "${R[@]}" "$TD/s1.bam" \
        -o "$out" --call -m -C alleles -T "$3" </dev/null >/dev/null 2>"$W/refused.err"
    local rc=$? lines
    lines=$(grep -vc '^Note: ' "$W/refused.err")
    if [ $rc != 1 ] && [ $rc != 2 ]; then
        ss_bad "$name" "exit status $rc, want 1 or 2" "$(head -3 "$W/refused.err")"
    elif [ "$lines" != 1 ] || ! grep -qE "$mention" "$W/refused.err"; then
        ss_bad "$name" "want one line naming '$mention', got $lines" "$(head -3 "$W/refused.err")"
    elif [ -e "$out" ]; then
        ss_bad "$name" "left $out behind"
    else
        ss_ok "$name"
    fi
}
# a REF the reference does not have: bcftools stops there too; the reason in the one line
awk -v OFS='\t' 'NR == 5 { $3 = ($3 ~ /^A/ ? "C" : "A") substr($3, 2) } 1' "$TAL" >"$W/badref.tsv"
refused "-C alleles: a REF the reference lacks" "failed at ctg[AB]:[0-9]+: .*not compatible" \
    "$W/badref.tsv"
# an empty allele (A,,): bcftools calls on with other QUALs; refused with the line
awk -v OFS='\t' 'NR == 7 { sub(/,.*/, ",,", $3) } 1' "$TAL" >"$W/empty.tsv"
refused "-C alleles: an empty allele" "empty.tsv, line 7: .*empty allele" "$W/empty.tsv"

ss_summary
exit $?

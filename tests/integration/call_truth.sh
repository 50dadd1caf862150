#!/usr/bin/env bash
# call_truth.sh -- how well `seqshard mpileup --call -mv` finds the variants dwgsim put in,
# and that it finds exactly what the bcftools 1.16 pipe finds:
#   - 300 kb of the E. coli genome make-testdata.sh reads, dwgsim 2x150 at 30x (seeded, SNPs
#     and indels), bwa mem -K (output independent of threads), samtools sort/index: made here,
#     so the figures come from real tools on every clean clone;
#   - recall and precision of SNPs and indels against dwgsim's truth, both sides normalised
#     (bcftools norm: left-aligned, one ALT per line) and matched by position and alleles;
#   - seqshard's calls are the pipe's bytes, so its figures equal the pipe's; they clear
#     floors (SNP recall and precision 0.9, indel 0.6); --realign does not lower recall.
# The figures are printed. About 30 s on 2 cores.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
BCFTOOLS=${BCFTOOLS:-bcftools}
GENOME_GZ=${SS_ECOLI_FNA:-/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz}
for t in "$BCFTOOLS" bwa dwgsim python3; do
    command -v "$t" >/dev/null || { echo "FAIL setup: $t not found; apt-get install $t"; exit 1; }
done
[ -r "$GENOME_GZ" ] || { echo "FAIL setup: $GENOME_GZ not found; apt-get install bowtie-examples"; exit 1; }

# ---- data: dwgsim reads of a 300 kb stretch, aligned with bwa mem ---------------------------
python3 - "$GENOME_GZ" "$W/ref.fa" <<'PY'
import gzip, sys
seq = ''.join(l.strip() for l in gzip.open(sys.argv[1], 'rt') if not l.startswith('>'))
s = seq[1000000:1300000].upper()
with open(sys.argv[2], 'w') as f:
    f.write('>chr\n' + ''.join(s[i:i + 60] + '\n' for i in range(0, len(s), 60)))
PY
REF=$W/ref.fa
samtools faidx "$REF" && bwa index "$REF" 2>/dev/null ||
    { echo "FAIL setup: samtools faidx / bwa index of $REF failed"; exit 1; }
(cd "$W" && dwgsim -z 7 -1 150 -2 150 -C 30 -d 300 -s 50 -r 0.002 -R 0.2 -y 0 \
    -e 0.001-0.01 -E 0.002-0.02 ref.fa sim >dwgsim.log 2>&1) ||
    { echo "FAIL setup: dwgsim failed"; tail -3 "$W/dwgsim.log"; exit 1; }
bwa mem -t 2 -K 10000000 -R '@RG\tID:sim\tSM:sim' "$REF" "$W/sim.bwa.read1.fastq.gz" \
    "$W/sim.bwa.read2.fastq.gz" 2>/dev/null | samtools sort --no-PG -o "$W/sim.bam" - &&
    samtools index "$W/sim.bam" || { echo "FAIL setup: bwa mem | samtools sort failed"; exit 1; }
rm -f "$W"/sim.bwa.read*.fastq.gz "$REF".{amb,ann,bwt,pac,sa}

# normalised NAME IN OUT: left-aligned against the reference, one ALT per line, as text
normalised() {
    "$BCFTOOLS" norm -f "$REF" -m -any "$2" 2>/dev/null | grep -v '^#' >"$3" ||
        ss_bad "$1" "bcftools norm of $2 failed: the test is wrong"
}
normalised "truth" "$W/sim.mutations.vcf" "$W/truth.txt"

# figures NAME CALLS: "snp_recall snp_precision indel_recall indel_precision" (and counts)
figures() {
    python3 - "$W/truth.txt" "$2" <<'PY'
import sys
def sites(path):
    out = {'snp': set(), 'indel': set()}
    for line in open(path):
        c, pos, _, ref, alt = line.split('\t')[:5]
        if alt in ('*', '<*>', '.'):
            continue
        kind = 'snp' if len(ref) == 1 and len(alt) == 1 else 'indel'
        out[kind].add((c, int(pos), ref, alt))
    return out
truth, calls = sites(sys.argv[1]), sites(sys.argv[2])
words = []
for kind in ('snp', 'indel'):
    t, c = truth[kind], calls[kind]
    hit = len(t & c)
    words += ['%.4f' % (hit / len(t) if t else 0), '%.4f' % (hit / len(c) if c else 0),
              '%d/%d/%d' % (hit, len(t), len(c))]
print(' '.join(words))
PY
}

# ---- the pipe and seqshard ------------------------------------------------------------------
"$BCFTOOLS" mpileup --no-version -f "$REF" -Ou "$W/sim.bam" 2>/dev/null |
    "$BCFTOOLS" call --no-version -mv -Ov -o "$W/pipe.vcf" 2>/dev/null ||
    { echo "FAIL setup: the bcftools pipe itself failed"; exit 1; }
normalised "pipe" "$W/pipe.vcf" "$W/pipe.txt"
read -r p_sr p_sp p_sn p_ir p_ip p_in < <(figures pipe "$W/pipe.txt")

ss_run_seqshard "$W/ss.vcf" "$W/ss.err" mpileup --no-version --quiet -@ 2 --shard-size 50k \
    -f "$REF" "$W/sim.bam" --call -mv -Ov
if [ "$ss_rc" != 0 ]; then
    ss_bad "--call -mv" "exit status $ss_rc" "$(head -2 "$W/ss.err")"
elif ! cmp -s "$W/pipe.vcf" "$W/ss.vcf"; then
    ss_bad "--call -mv" "the calls differ from the bcftools pipe's"
    ss_show_diff "$W/pipe.vcf" "$W/ss.vcf"
else
    ss_ok "--call -mv: the pipe's bytes"
fi
normalised "seqshard" "$W/ss.vcf" "$W/ss.txt"
read -r s_sr s_sp s_sn s_ir s_ip s_in < <(figures seqshard "$W/ss.txt")
echo "truth (dwgsim, 300 kb at 30x): recall / precision (found/truth/called)"
echo "  bcftools pipe      SNPs $p_sr / $p_sp ($p_sn)   indels $p_ir / $p_ip ($p_in)"
echo "  seqshard --call    SNPs $s_sr / $s_sp ($s_sn)   indels $s_ir / $s_ip ($s_in)"
if [ "$s_sr $s_sp $s_sn $s_ir $s_ip $s_in" = "$p_sr $p_sp $p_sn $p_ir $p_ip $p_in" ]; then
    ss_ok "figures equal the pipe's"
else
    ss_bad "figures" "seqshard's differ from the pipe's (see above)"
fi

# at_least NAME VALUE FLOOR
at_least() {
    if python3 -c "import sys; sys.exit(not float('$2') >= float('$3'))"; then
        ss_ok "$1 $2 >= $3"
    else
        ss_bad "$1" "$2 is below the floor $3"
    fi
}
at_least "SNP recall" "$s_sr" 0.9
at_least "SNP precision" "$s_sp" 0.9
at_least "indel recall" "$s_ir" 0.6
at_least "indel precision" "$s_ip" 0.6

# ---- --realign does not lower recall --------------------------------------------------------
ss_run_seqshard "$W/re.vcf" "$W/re.err" mpileup --no-version --quiet -@ 2 --realign \
    -f "$REF" "$W/sim.bam" --call -mv -Ov
if [ "$ss_rc" != 0 ]; then
    ss_bad "--realign --call -mv" "exit status $ss_rc" "$(head -2 "$W/re.err")"
else
    normalised "realign" "$W/re.vcf" "$W/re.txt"
    read -r r_sr r_sp r_sn r_ir r_ip r_in < <(figures realign "$W/re.txt")
    echo "  seqshard --realign SNPs $r_sr / $r_sp ($r_sn)   indels $r_ir / $r_ip ($r_in)"
    at_least "--realign SNP recall (not below the pipe's)" "$r_sr" "$p_sr"
    at_least "--realign indel recall (not below the pipe's)" "$r_ir" "$p_ir"
fi

ss_summary
exit $?

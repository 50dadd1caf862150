#!/usr/bin/env bash
# quickstart.sh -- docs/quickstart.md runs as printed: its sh blocks, in order, in an empty
# folder with seqshard on PATH; then what it made is what the tools make: marked.bam's
# records are samtools markdup's, calls.vcf.gz's records the bcftools mpileup | bcftools
# call pipe's, and the mosdepth summary mosdepth's.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
PAGE=$SS_SRC/docs/quickstart.md
GENOME=/usr/share/doc/bowtie/examples/genomes/NC_008253.fna.gz
for t in bwa dwgsim bcftools mosdepth; do
    command -v "$t" >/dev/null || { echo "SKIP: $t not found (apt-get install $t)"; exit 77; }
done
[ -r "$GENOME" ] || { echo "SKIP: $GENOME not found (apt-get install bowtie-examples)"; exit 77; }

# ---- the page's commands, as printed ----------------------------------------------------------
mkdir -p "$W/run"
{
    echo "set -eu"
    awk '/^```sh$/ { on = 1; next } /^```/ { on = 0 } on' "$PAGE"
} >"$W/page.sh"
n_blocks=$(grep -c '^```sh$' "$PAGE")
(cd "$W/run" && PATH="$(dirname "$SEQSHARD"):$PATH" timeout 170 bash "$W/page.sh") \
    >"$W/page.out" 2>"$W/page.err"
rc=$?
if [ "$rc" = 0 ] && [ "$n_blocks" -ge 5 ]; then
    ss_ok "the page's $n_blocks blocks run as printed"
else
    ss_bad "the page's $n_blocks blocks run as printed" "exit $rc" "$(tail -3 "$W/page.err")"
    ss_summary
    exit 1
fi
cd "$W/run" || exit 1

# ---- what they made is the tools' ------------------------------------------------------------
same() { # NAME EXPECTED GOT
    if cmp -s "$2" "$3" && [ -s "$2" ]; then
        ss_ok "$1"
    else
        ss_bad "$1" "differs"
        ss_show_diff "$2" "$3"
    fi
}
"$SAMTOOLS" markdup -s fixed.bam exp.bam 2>/dev/null
"$SAMTOOLS" view exp.bam >exp.sam
"$SAMTOOLS" view marked.bam >got.sam
same "markdup: samtools markdup's records" exp.sam got.sam
bcftools mpileup -f ref.fa -a AD,DP -Ou marked.bam 2>/dev/null |
    bcftools call -mv --ploidy 1 2>/dev/null | grep -v '^#' >exp.vcf
bcftools view -H calls.vcf.gz >got.vcf
same "mpileup --call: the bcftools pipe's records" exp.vcf got.vcf
mosdepth --by 1000 exp marked.bam
same "depth --mosdepth: mosdepth's summary" exp.mosdepth.summary.txt sample.mosdepth.summary.txt

ss_summary

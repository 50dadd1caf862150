#!/usr/bin/env bash
# bench-view.sh -- time seqshard view against samtools view on the whole E. coli 536
# genome at 30x (bench/make-data.sh), both with 2 threads, in one hyperfine run per task:
#
#   CRAM->BAM     samtools view -@2 -b -T ref -o OUT.bam in.cram   | seqshard view -@2 (same)
#   BAM->BAM      samtools view -@2 -b -o OUT.bam in.bam           | seqshard view -@2 (same)
#   BAM->BAM l6   samtools view -@2 -O bam,level=6 -o OUT.bam in.bam | seqshard view -@2 (same)
#   CRAM decode   samtools view -@2 -T ref -o /dev/null in.cram    | seqshard view -@2 (same)
#   BAM decode    samtools view -@2 -o /dev/null in.bam            | seqshard view -@2 (same)
#
# Both tools write BAM at htslib's default compression level, to a file in a scratch
# directory on local disk, so the numbers include writing it. For BAM->BAM with nothing
# filtered and no -l, seqshard copies the input's compressed blocks (checking each) instead
# of compressing again (kernels/view/view_copy.c); the level=6 row makes both compress, at the
# level both use by default (samtools view's -l is a library filter, so both get -O).
# `samtools view -@ 2` is samtools' main thread plus 2 (de)compression threads;
# `seqshard view -@ 2` is 2 workers, each decoding and encoding whole shards, plus the
# main thread writing them in order.
# Before timing, each seqshard output must hold the same records as samtools' (the
# SAM lines of `samtools view` on both, compared with cmp); a mismatch stops the run.
# Results: bench/results/view-*.json (hyperfine), view-env.json, view.md (table).
#
# Environment: SEQSHARD [<repo>/build/seqshard], SS_BENCH_RUNS [5],
# SS_BENCH_DATA [bench/data], SS_BENCH_OUT [bench/results], SS_BENCH_THREADS [2],
# TMPDIR (scratch: two BAM copies of ~130 MB).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
bench_init bench-view 5
[ -x "$SEQSHARD" ] || die "SEQSHARD=$SEQSHARD is not executable; build seqshard first"
for t in samtools hyperfine python3; do
    command -v "$t" >/dev/null || die "$t not found; apt-get install $t"
done

"$HERE/make-data.sh" "$DATA"
REF=$DATA/ref.fa
BAM=$DATA/ecoli30x.bam
CRAM=$DATA/ecoli30x.cram
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ss-bench-view.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
echo "bench-view: load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)"

# task|samtools command|seqshard command|seqshard's output file to check (or -)
TASKS=(
    "cram-to-bam|samtools view -@ $T -b -T $REF -o $WORK/st.bam $CRAM|$SEQSHARD view --quiet -@ $T -b -T $REF -o $WORK/ss.bam $CRAM|$WORK/ss.bam"
    "bam-to-bam|samtools view -@ $T -b -o $WORK/st.bam $BAM|$SEQSHARD view --quiet -@ $T -b -o $WORK/ss.bam $BAM|$WORK/ss.bam"
    "bam-to-bam-l6|samtools view -@ $T -O bam,level=6 -o $WORK/st.bam $BAM|$SEQSHARD view --quiet -@ $T -O bam,level=6 -o $WORK/ss.bam $BAM|$WORK/ss.bam"
    "cram-decode|samtools view -@ $T -T $REF -o /dev/null $CRAM|$SEQSHARD view --quiet -@ $T -T $REF -o /dev/null $CRAM|-"
    "bam-decode|samtools view -@ $T -o /dev/null $BAM|$SEQSHARD view --quiet -@ $T -o /dev/null $BAM|-"
)

# ---- correctness first: same records as samtools view of the same input ----------------
samtools view -T "$REF" "$BAM" | md5sum >"$WORK/want.bam.md5"
samtools view -T "$REF" "$CRAM" | md5sum >"$WORK/want.cram.md5"
for task in "${TASKS[@]}"; do
    IFS='|' read -r name st ss file <<<"$task"
    bash -c "$ss" 2>"$WORK/err" || die "$name: seqshard failed: $(head -2 "$WORK/err")"
    [ "$file" = - ] && continue
    samtools quickcheck "$file" || die "$name: samtools quickcheck fails on seqshard's output"
    want=$WORK/want.bam.md5
    [[ $name == cram-* ]] && want=$WORK/want.cram.md5
    samtools view "$file" | md5sum | cmp -s - "$want" ||
        die "$name: seqshard's records differ from samtools view of the input"
    # and samtools' own command writes them too (a wrong option there would time nothing)
    bash -c "$st" 2>"$WORK/err" || die "$name: samtools failed: $(head -2 "$WORK/err")"
    samtools view "${file%/*}/st.bam" | md5sum | cmp -s - "$want" ||
        die "$name: samtools' command does not write the input's records; fix the task"
done
# the decode tasks print SAM: check those bytes against samtools too
for src in "$BAM" "$CRAM"; do
    cmp -s <(samtools view -T "$REF" "$src") <("$SEQSHARD" view --quiet -@ "$T" -T "$REF" "$src") ||
        die "$src: seqshard view's SAM differs from samtools view"
done

# ---- timing ------------------------------------------------------------------------
for task in "${TASKS[@]}"; do
    IFS='|' read -r name st ss file <<<"$task"
    hyperfine --warmup 1 --runs "$RUNS" --export-json "$OUT/view-$name.json" \
        --command-name "samtools view -@$T" "$st" --command-name "seqshard view -@$T" "$ss"
done

cat >"$OUT/view-env.json" <<EOF
{
  "cpu": "$(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)",
  "cores": $(nproc),
  "load_before": "$(cut -d' ' -f1-3 /proc/loadavg)",
  "samtools": "$(samtools --version | awk 'NR==1{print $2}')",
  "seqshard": "$("$SEQSHARD" --version 2>&1 | head -1)",
  "data": "E. coli 536 (4.94 Mb), dwgsim 2x150 30x, bwa mem: $(du -h "$BAM" | cut -f1) BAM, $(du -h "$CRAM" | cut -f1) CRAM",
  "date": "$(date -u +%Y-%m-%d)"
}
EOF

python3 - "$OUT" "$T" >"$OUT/view.md" <<'PY'
import json, statistics, sys
out, t = sys.argv[1], sys.argv[2]
rows = [("cram-to-bam", "CRAM -> BAM"), ("bam-to-bam", "BAM -> BAM (seqshard copies blocks)"),
        ("bam-to-bam-l6", "BAM -> BAM -O bam,level=6 (both compress)"),
        ("cram-decode", "CRAM decode to SAM (/dev/null)"),
        ("bam-decode", "BAM decode to SAM (/dev/null)")]
print(f"| task | samtools view -@{t} (s) | seqshard view -@{t} (s) | speed-up |")
print("|---|---:|---:|---:|")
for key, label in rows:
    res = json.load(open(f"{out}/view-{key}.json"))["results"]
    st, ss = (statistics.median(r["times"]) for r in res)
    print(f"| {label} | {st:.2f} | {ss:.2f} | {st / ss:.2f}x |")
PY
echo "bench-view: wrote $OUT/view.md"
cat "$OUT/view.md"

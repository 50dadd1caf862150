#!/usr/bin/env bash
# pileup_past_end.sh -- reads whose alignment runs past their contig's @SQ LN (samtools
# accepts them, and mpileup prints their columns past the end with N as the base):
# seqshard pileup must print samtools' bytes for them at any thread count and shard
# layout, with BAQ and without, with -a/-aa, regions and a BED, and the realigning
# pileup the two-step pipeline's (seqshard realign, then samtools mpileup).
# The reads are hand-made on a small random reference: plain ones, with deletions
# and insertions near the end, overlapping mates, a stack under -d, and reads that
# start past the end (samtools drops those when -f is given, keeps them without).
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
command -v python3 >/dev/null || { echo "FAIL setup: python3 not found"; exit 1; }

python3 - "$W" <<'EOF' || { echo "FAIL setup: could not write the inputs"; exit 1; }
import random, sys
w = sys.argv[1]
rng = random.Random(7)
lens = {"c1": 3000, "c2": 2000, "c3": 1500}
seqs = {c: "".join(rng.choice("ACGT") for _ in range(n)) for c, n in lens.items()}
with open(w + "/ref.fa", "w") as f:
    for c, s in seqs.items():
        f.write(">%s\n" % c + "".join(s[i:i + 60] + "\n" for i in range(0, len(s), 60)))
recs = []
def read(name, flag, ctg, pos, cigar, n, mpos=0, tlen=0):
    ref = seqs[ctg]
    bases = "".join(ref[p] if p < len(ref) and rng.random() > 0.02 else rng.choice("ACGT")
                    for p in range(pos - 1, pos - 1 + n))
    qual = "".join(chr(33 + rng.randint(15, 40)) for _ in range(n))
    mate = ("=", mpos, tlen) if flag & 1 else ("*", 0, 0)
    recs.append((ctg, pos, "%s\t%d\t%s\t%d\t60\t%s\t%s\t%d\t%d\t%s\t%s" %
                 (name, flag, ctg, pos, cigar, mate[0], mate[1], mate[2], bases, qual)))
for c, n in lens.items():
    for i in range(0, n - 200, 37):            # coverage along the contig
        read("%s_a%d" % (c, i), 0, c, i + 1, "80M", 80)
    for i in range(40):                         # reads running past the end
        read("%s_p%d" % (c, i), 16 if i % 3 else 0, c, n - 70 + i * 2, "90M", 90)
    read(c + "_del", 0, c, n - 30, "20M3D40M", 60)
    read(c + "_ins", 0, c, n - 25, "15M2I43M", 60)
    read(c + "_clip", 0, c, n - 10, "5S50M", 55)
    for k in range(3):                          # overlapping mates, both past the end
        a, b = n - 60 + k, n - 20 + k
        read("%s_m%d" % (c, k), 99, c, a, "70M", 70, b, 90)
        read("%s_m%d" % (c, k), 147, c, b, "70M", 70, a, -90)
    for k in range(12):                         # a stack for -d
        read("%s_s%d" % (c, k), 0, c, n - 15, "50M", 50)
read("c1_beyond", 0, "c1", lens["c1"] + 5, "30M", 30)   # starts past the end
with open(w + "/in.sam", "w") as f:
    for c, n in lens.items():
        f.write("@SQ\tSN:%s\tLN:%d\n" % (c, n))
    order = list(lens)
    for r in sorted(recs, key=lambda r: (order.index(r[0]), r[1])):
        f.write(r[2] + "\n")
with open(w + "/past.bed", "w") as f:
    f.write("c1\t2950\t3040\nc2\t10\t500\nc2\t1990\t2005\n")
EOF
"$SAMTOOLS" faidx "$W/ref.fa" && "$SAMTOOLS" view -b -o "$W/in.bam" "$W/in.sam" &&
    "$SAMTOOLS" index "$W/in.bam" || { echo "FAIL setup: samtools could not index the inputs"; exit 1; }
IN=$W/in.bam
EF=$W/ref.fa

# The data must hold what the test is about: samtools prints columns past c1's end.
past=$("$SAMTOOLS" mpileup -B -f "$EF" "$IN" 2>/dev/null | awk '$1 == "c1" && $2 > 3000' | wc -l)
if [ "$past" -lt 40 ]; then
    ss_bad "setup" "samtools prints only $past columns past c1's end: the test is wrong"
    ss_summary
    exit 1
fi

COMBOS="1:1g 2:1k 3:1k 1:1500 2:2k"
ss_pileup "BAQ" "$COMBOS" -f "$EF" "$IN"
ss_pileup "-B" "$COMBOS" -B -f "$EF" "$IN"
ss_pileup "no reference" "$COMBOS" "$IN"
ss_pileup "-a" "$COMBOS" -a -B -f "$EF" "$IN"
ss_pileup "-aa" "$COMBOS" -aa -f "$EF" "$IN"
ss_pileup "-d 5" "$COMBOS" -d 5 -B -f "$EF" "$IN"
ss_pileup "-x (no overlap detection)" "$COMBOS" -x -f "$EF" "$IN"
ss_pileup "-s --output-QNAME --output-extra" "2:1k 3:1k" -s --output-QNAME \
    --output-extra FLAG,POS -B -f "$EF" "$IN"
ss_pileup "-r c1" "$COMBOS" -r c1 -f "$EF" "$IN"
ss_pileup "-r c1:2950-3020" "$COMBOS" -r c1:2950-3020 -B -f "$EF" "$IN"
ss_pileup "-r c2:1500-2500 -a" "$COMBOS" -r c2:1500-2500 -a -B -f "$EF" "$IN"
ss_pileup "-l BED" "$COMBOS" -l "$W/past.bed" -B -f "$EF" "$IN"

# Tiny shards (the planner's 100 bp floor, through the output target) put edges
# right before the end.
for s in 1 30; do
    ss_case_no=$((ss_case_no + 1))
    "$SAMTOOLS" mpileup -f "$EF" "$IN" >"$W/tiny.exp" 2>/dev/null
    SEQSHARD_SHARD_OUTPUT=$s ss_run_seqshard "$W/tiny.got" "$W/tiny.err" pileup -@ 3 \
        --shard-size 1000 --quiet -f "$EF" "$IN"
    if [ "$ss_rc" != 0 ]; then
        ss_bad "tiny shards ($s)" "exit status $ss_rc" "$(head -2 "$W/tiny.err")"
    elif ! cmp -s "$W/tiny.exp" "$W/tiny.got"; then
        ss_bad "tiny shards ($s)" "output differs from samtools"
        ss_show_diff "$W/tiny.exp" "$W/tiny.got"
    else
        ss_ok "tiny shards ($s)"
    fi
done

# --realign: the pileup of what seqshard realign writes.
"$SEQSHARD" realign --quiet -f "$EF" -o "$W/r.bam" "$IN" && "$SAMTOOLS" index "$W/r.bam" ||
    ss_bad "realign" "seqshard realign failed on the inputs"
"$SAMTOOLS" mpileup -f "$EF" "$W/r.bam" >"$W/r.exp" 2>/dev/null
for c in 1:1g 2:1k 3:1500; do
    ss_run_seqshard "$W/r.got" "$W/r.err" pileup --realign -@ "${c%%:*}" \
        --shard-size "${c#*:}" --quiet -f "$EF" "$IN"
    if [ "$ss_rc" != 0 ]; then
        ss_bad "--realign [$c]" "exit status $ss_rc" "$(head -2 "$W/r.err")"
    elif ! cmp -s "$W/r.exp" "$W/r.got"; then
        ss_bad "--realign [$c]" "output differs from realign + samtools mpileup"
        ss_show_diff "$W/r.exp" "$W/r.got"
    else
        ss_ok "--realign [$c]"
    fi
done

ss_summary
exit $?

#!/usr/bin/env bash
# mpi_progress.sh -- the progress line under mpirun counts what every rank finished: a
# shard handed out counts only once its output size is published, so the line says 100%
# only when every shard is done (it counted shards handed out, and showed 100.0% and ETA
# 0:00 while shards still ran); its reads/s adds every rank's reads (it was rank 0's).
set -u
. "$(dirname "$0")/lib.sh"
ss_mpi_setup
W=$SS_WORK
S1=$TD/s1.bam

# shards slowed to 400 ms each, so the last ones are handed out well before they end
SEQSHARD_PROGRESS_INTERVAL=0.05 SEQSHARD_TEST_SHARD_DELAY_MS=400 timeout 120 \
    "${MPIRUN[@]}" -np 2 -x SEQSHARD_PROGRESS_INTERVAL -x SEQSHARD_TEST_SHARD_DELAY_MS \
    "$SEQSHARD" pileup -@ 1 --bind none --shard-size 20k -f "$REF" -o "$W/p.txt" "$S1" \
    </dev/null 2>"$W/err"
rc=$?
grep -E '[0-9]+/[0-9]+ shards, [0-9.]+% of est' "$W/err" | sed 's/^seqshard: [^ ]* //' >"$W/lines"
bad=$(awk '{ split($1, s, "/"); pct = $3 + 0
             if (pct >= 100 && s[1] != s[2]) print "100% at " $1
             if (s[1] + 0 < last) print "shards went back: " $1
             last = s[1] + 0 }' "$W/lines")
if [ $rc = 0 ] && [ -s "$W/lines" ] && [ -z "$bad" ]; then
    ss_ok "progress under mpirun: 100% only when every shard is done ($(wc -l <"$W/lines") lines)"
else
    ss_bad "progress under mpirun: 100% only when every shard is done" "exit $rc; $bad" \
        "$(tr '\n' ';' <"$W/lines" | cut -c1-400)"
fi
ss_summary

#!/usr/bin/env bash
# markdup_resume.sh -- a killed markdup run resumed: without statistics the kept
# shards are reused and the records are samtools markdup's; with -f (statistics
# summed over every shard, which a kept shard cannot give back) --resume is
# refused with exit 1, and no output or statistics file appears.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_markdup.sh"
ss_setup
W=$SS_WORK
md_input "$W" || { ss_bad input "cannot make the input"; ss_summary; exit 1; }
"$SAMTOOLS" markdup "$W/in.bam" "$W/ref.bam" 2>/dev/null

SEQSHARD_KILL_SHARD=30 SEQSHARD_TEST_SHARD_DELAY_MS=50 md_run "$W/err" markdup -@ 1 --shard-size 2k "$W/in.bam" "$W/out.bam"
md_run "$W/err" markdup -@ 1 --shard-size 2k --resume --report "$W/r.json" "$W/in.bam" \
    "$W/out.bam"
rc=$?
reused=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["resume"]["reused_shards"])' \
    "$W/r.json" 2>/dev/null)
if [ $rc != 0 ]; then
    ss_bad "resumed" "exit status $rc" "$(head -2 "$W/err")"
elif [ "${reused:-0}" -lt 1 ]; then
    ss_bad "resumed" "no shard was reused (the kill came too early?)"
elif ! cmp -s <("$SAMTOOLS" view "$W/ref.bam") <("$SAMTOOLS" view "$W/out.bam"); then
    ss_bad "resumed" "records differ from samtools markdup's"
else
    ss_ok "resumed after a kill: $reused shards reused, samtools markdup's records"
fi

rm -f "$W/out.bam"
SEQSHARD_KILL_SHARD=30 SEQSHARD_TEST_SHARD_DELAY_MS=50 md_run "$W/err" markdup -@ 1 --shard-size 2k -f "$W/st.txt" "$W/in.bam" \
    "$W/out.bam"
md_run "$W/err" markdup -@ 1 --shard-size 2k --resume -f "$W/st.txt" "$W/in.bam" "$W/out.bam"
rc=$?
if [ $rc = 1 ] && grep -q "rerun without --resume" "$W/err" && [ ! -e "$W/out.bam" ] &&
    [ ! -e "$W/st.txt" ]; then
    ss_ok "--resume with -f: refused, nothing written"
else
    ss_bad "--resume with -f" "exit $rc; expected 1, a line saying to rerun, no files" \
        "$(head -2 "$W/err")"
fi
ss_summary
exit $?

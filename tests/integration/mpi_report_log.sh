#!/usr/bin/env bash
# mpi_report_log.sh -- under mpirun -np 2: the job log has one start and one
# final line (rank 0's, with totals over both ranks), and --report gathers
# every rank's shard records (each shard once, both ranks present), hosts and
# CPU times; a shard failing on any rank gives a "failed" report with the error.
#
# Skipped (status 77) in a build without MPI (SS_MPI=0).
set -u
. "$(dirname "$0")/lib.sh"
ss_mpi_setup

W=$SS_WORK
TS='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z'
ARGS=(pileup --bind none -@ 1 --shard-size 3k -f "$REF" "$TD/s1.bam")

# the single-process totals to compare with
"$SEQSHARD" "${ARGS[@]}" -o "$W/one.txt" 2>"$W/one.err"
one_done=$(tail -1 "$W/one.err")

timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 2 "$SEQSHARD" "${ARGS[@]}" -o "$W/two.txt" \
    --report "$W/two.json" </dev/null >/dev/null 2>"$W/two.err"
rc=$?
if [ $rc != 0 ]; then
    ss_bad "np=2 run" "exit status $rc" "$(head -3 "$W/two.err")"
else
    starts=$(grep -cE "^seqshard: $TS pileup started: 1 input, 1 thread x 2 ranks, " "$W/two.err")
    dones=$(grep -cE "^seqshard: $TS done in " "$W/two.err")
    [ "$starts" = 1 ] && [ "$dones" = 1 ] && ss_ok "np=2 log: one start, one final line" ||
        ss_bad "np=2 log: one start, one final line" "$starts start, $dones done lines" \
            "$(grep -v ' shards, ' "$W/two.err" | head -4)"
    # the same shards, reads and bytes as one process: the totals cover both ranks
    strip() { sed -E 's/.* s: //; s/, peak RSS.*//' <<<"$1"; }
    two_done=$(grep -E "^seqshard: $TS done in " "$W/two.err")
    [ "$(strip "$one_done")" = "$(strip "$two_done")" ] && ss_ok "np=2 log: totals of both ranks" ||
        ss_bad "np=2 log: totals of both ranks" "one process: $one_done" "two ranks: $two_done"
    msg=$(python3 - "$W/two.json" "$W/two.txt" <<'PYEOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
recs = d['shard_records']
bad = []
if sorted(r['index'] for r in recs) != list(range(d['shards'])):
    bad.append('not one record per shard')
if {r['rank'] for r in recs} != {0, 1}:
    bad.append('ranks in the records: %s' % sorted({r['rank'] for r in recs}))
if sum(r['bytes'] for r in recs) != os.path.getsize(sys.argv[2]):
    bad.append('shard bytes %d, file %d' % (sum(r['bytes'] for r in recs), os.path.getsize(sys.argv[2])))
if len(d['ranks']) != 2 or any('host' not in k or k['user_s'] <= 0 for k in d['ranks']):
    bad.append('ranks[] without host or user_s')
if len(d['hosts']) != 1:
    bad.append('hosts %s' % d['hosts'])
if any(r['start_s'] < 0 or r['end_s'] < r['start_s'] for r in recs):
    bad.append('shard times')
print('; '.join(bad))
PYEOF
)
    [ -z "$msg" ] && ss_ok "np=2 report: every rank's shards" || ss_bad "np=2 report: every rank's shards" "$msg"
fi

# a failure: whichever rank takes shard 5, the report says failed, with that error
timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 2 env SEQSHARD_FAIL_SHARD=5 "$SEQSHARD" "${ARGS[@]}" \
    -o "$W/f.txt" --report "$W/f.json" </dev/null >/dev/null 2>"$W/f.err"
rc=$?
if [ $rc = 0 ] || [ -e "$W/f.txt" ] || [ ! -f "$W/f.json" ]; then
    ss_bad "np=2 failure" "status $rc; files: $(ls "$W" | tr '\n' ' ')" "$(head -3 "$W/f.err")"
else
    st=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], "|", d["error"])' "$W/f.json")
    [[ $st == "failed | "*"shard 5"*SEQSHARD_FAIL_SHARD* ]] && ss_ok "np=2 failure: report failed, with the error" ||
        ss_bad "np=2 failure: report failed, with the error" "$st"
    last=$(grep -E "^seqshard: $TS " "$W/f.err" | tail -1)
    [[ $last =~ ^seqshard:\ $TS\ pileup\ failed\ after\ [0-9.]+\ s:\ rank\ [01]:\ shard\ 5 ]] && ss_ok "np=2 failure: final log line" ||
        ss_bad "np=2 failure: final log line" "$last"
fi

ss_summary
exit $?

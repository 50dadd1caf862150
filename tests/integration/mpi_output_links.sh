#!/usr/bin/env bash
# mpi_output_links.sh -- output_links.sh's shared directory under mpirun -np 2:
# another user (nobody) links a file of root's at the names the ranks create
# beside -o (rank 1's manifest .OUT.resume.rank1 and .OUT.resume.rank1.new,
# rank 0's .OUT.tmp.seqshard and .OUT.resume.new, the index name beside the
# temporary; rank 0 removes stale rank files at the start, links included, as
# root may in a sticky directory). The linked file stays as it was; each run
# either gives the reference's bytes or is refused, leaving nothing of its own.
# Needs root (to act as another user); skips (77) otherwise.
set -u
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: needs root, to plant links as another user"
    exit 77
fi
command -v setpriv >/dev/null || { echo "SKIP: setpriv not found"; exit 77; }
ss_mpi_setup
S1=$TD/s1.bam
ATT_UID=$(id -u nobody) || { echo "SKIP: no user nobody"; exit 77; }
ATT_GID=$(id -g nobody)
as_att() { setpriv --reuid="$ATT_UID" --regid="$ATT_GID" --clear-groups -- "$@"; }

chmod 711 "$SS_WORK"
VICTIM=$SS_WORK/private/victim.txt
mkdir -p "$SS_WORK/private" "$SS_WORK/ref"
printf 'a file of root'\''s that no run may write\n' >"$VICTIM"
victim_sum=$(md5sum <"$VICTIM")
SH=$SS_WORK/shared
mkdir "$SH"
chmod 1777 "$SH"
ARGS=(view -b --write-index --quiet --bind none -@ 1 --shard-size 5k "$S1" ctgA)

timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 2 "$SEQSHARD" "${ARGS[@]}" -o "$SH/out.bam" \
    >/dev/null 2>"$SS_WORK/ref.err" || { ss_bad "reference run" "$(head -2 "$SS_WORK/ref.err")"; }
mv "$SH/out.bam" "$SH/out.bam.csi" "$SS_WORK/ref/" 2>/dev/null

for plant in .out.bam.resume.rank1.new .out.bam.resume.rank1 .out.bam.tmp.seqshard \
    .out.bam.resume.new .out.bam.tmp.seqshard.csi; do
    for resume in "" --resume; do
        name="mpirun -np 2: link at $plant${resume:+, --resume}"
        as_att ln -s "$VICTIM" "$SH/$plant"
        # shellcheck disable=SC2086
        timeout "$SS_TIMEOUT" "${MPIRUN[@]}" -np 2 "$SEQSHARD" "${ARGS[@]}" $resume \
            -o "$SH/out.bam" </dev/null >/dev/null 2>"$SS_WORK/err"
        rc=$?
        lines=$(ss_error_lines "$SS_WORK/err" | grep -c '^seqshard: [^w]')
        bad=""
        if [ "$(md5sum <"$VICTIM")" != "$victim_sum" ]; then
            bad="the linked file was written (status $rc)"
            printf 'a file of root'\''s that no run may write\n' >"$VICTIM"
        elif [ $rc = 0 ]; then
            cmp -s "$SS_WORK/ref/out.bam" "$SH/out.bam" && [ ! -L "$SH/out.bam" ] &&
                cmp -s "$SS_WORK/ref/out.bam.csi" "$SH/out.bam.csi" ||
                bad="status 0, but not the reference's bytes"
        elif [ "$lines" -lt 1 ] || [ -e "$SH/out.bam" ]; then
            bad="status $rc with $lines error lines, or out.bam left"
        fi
        rm -f "$SH/out.bam" "$SH/out.bam.csi" "$SH/$plant"
        left=$(find "$SH" -mindepth 1 ! -user nobody -printf '%f ')
        [ -z "$bad" ] && [ -n "$left" ] && bad="left: $left"
        if [ -z "$bad" ]; then ss_ok "$name"; else
            ss_bad "$name" "$bad" "stderr: $(head -3 "$SS_WORK/err" | cut -c1-240)"
        fi
        find "$SH" -mindepth 1 -delete
    done
done

ss_summary
exit $?

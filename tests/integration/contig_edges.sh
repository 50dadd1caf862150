#!/usr/bin/env bash
# contig_edges.sh -- contigs of 1, 2 and 3 bases and reads running past a contig's end
# (lib_edges.sh): seqshard mpileup gives bcftools mpileup's bytes, seqshard pileup
# samtools mpileup's and seqshard depth samtools depth's, at several thread counts and
# shard sizes. bcftools prints the columns past a contig's end (N as the reference), and
# -d 0 there is no "no cap": htslib turns away every read starting at the column it
# fills once it holds one, so at most the first read at each position enters, and on
# tid 0 none at POS 1 (a new iterator sits there); the first read of another contig
# always enters.
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_mpileup.sh"
. "$(dirname "$0")/lib_edges.sh"
ss_setup
mp_setup
W=$SS_WORK
edges_make "$W"
IN=$W/in.bam
EF=(-f "$W/ref.fa")

# The data must hold what the test is about.
past=$("$BCFTOOLS" mpileup "${EF[@]}" "$IN" 2>/dev/null | awk '$1 == "lead" && $2 > 2500' | wc -l)
one=$("$SAMTOOLS" mpileup -B "${EF[@]}" -r one "$IN" 2>/dev/null | awk '$2 == 1 {print $4}')
if [ "$past" -lt 40 ] || [ "${one:-0}" -lt 10 ]; then
    ss_bad "setup" "bcftools prints $past columns past lead's end, samtools ${one:-no} reads" \
        "at one:1: the test is wrong"
    ss_summary
    exit 1
fi

# mpileup: one shard, then each contig in shards of its own with plas cut in two
L="1:1g 3:1500"
mp_vs "mpileup"                        "$L 2:2k" "${EF[@]}" "$IN"
mp_vs "mpileup -d 0"                   "$L 2:2k" -d 0 "${EF[@]}" "$IN"
mp_vs "mpileup -d -1 -B"               "3:1500" -d -1 -B "${EF[@]}" "$IN"
mp_vs "mpileup -d 1000 (past 255 reads past plas' end)" "$L" -d 1000 "${EF[@]}" "$IN"
mp_vs "mpileup --no-reference -d 0"    "$L" --no-reference -d 0 "$IN"
mp_vs "mpileup -a AD,DP,SP,INFO/AD -Ou" "3:1500" -a AD,DP,SP,INFO/AD -Ou "${EF[@]}" "$IN"
mp_vs "mpileup -g 10,20"               "3:1500" -g 10,20 "${EF[@]}" "$IN"
mp_vs "mpileup -d 0 -r two,one"        "3:1500" -d 0 -r two,one "${EF[@]}" "$IN"
mp_vs "mpileup -r lead:2400-2530,tail" "3:1500" -r lead:2400-2530,tail "${EF[@]}" "$IN"
mp_vs "mpileup -t lead:2490-2520,one"  "3:1500" -t lead:2490-2520,one "${EF[@]}" "$IN"
# regions and intervals that start at or past a contig's end: the positions reads cover there
PB=$W/past.bed
printf 'lead\t2300\t2310\nlead\t2505\t2520\none\t2\t4\ntwo\t0\t1\ntwo\t3\t9\n' >"$PB"
printf 'lead\t2506\t2520\none\t3\t4\nplas\t2001\t2050\n' >"$W/past.tsv"
mp_vs "mpileup -r one:3-5,lead:2501-,two:3-" "1:1g 3:1500" -r one:3-5,lead:2501-,two:3- "${EF[@]}" "$IN"
mp_vs "mpileup -r lead:2400-2530,one:2-,tail:2-10,plas:2001-" "3:1500" \
    -r lead:2400-2530,one:2-,tail:2-10,plas:2001- "${EF[@]}" "$IN"
mp_vs "mpileup -R BED past the ends"   "1:1g 3:1500" -R "$PB" "${EF[@]}" "$IN"
mp_vs "mpileup -R past the ends -d 0"  "3:1500" -R "$W/past.tsv" -d 0 "${EF[@]}" "$IN"
mp_vs "mpileup -T past the ends"       "3:1500" -T "$W/past.tsv" "${EF[@]}" "$IN"
mp_vs "mpileup -g 10 -r one:2-"        "3:1500" -g 10 -r one:2- "${EF[@]}" "$IN"
mp_vs "mpileup --no-reference -r plas:2001-2100" "3:1500" --no-reference -r plas:2001-2100 "$IN"

# --call: calls past the ends; -i with targets past them (bcftools takes those without a line)
. "$(dirname "$0")/lib_call.sh"
TGT=$W/targets.tsv
{
    printf 'lead\t100\t%s,C\n' "$("$SAMTOOLS" faidx "$W/ref.fa" lead:100-100 | tail -1)"
    printf 'lead\t2510\tN,A\nlead\t2600\tN,T\none\t5\tN,G\nplas\t2100\tN,C\n'
} >"$TGT"
call_vs "--call -m"                    "-m" "3:1500" "${EF[@]}" "$IN"
call_vs "--call -m -C alleles -T -i"   "-m -C alleles -T $TGT -i" "1:1g 3:1500" "${EF[@]}" "$IN"
call_vs "--call -m -r past the ends"   "-m" "1:1g 3:1500" -r lead:2501-,one:2- "${EF[@]}" "$IN"

# pileup and depth on the same data
P="1:1g 3:1k"
ss_pileup "pileup"                     "$P" "${EF[@]}" "$IN"
ss_pileup "pileup, no reference"       "$P" "$IN"
ss_pileup "pileup -aa -r one"          "$P" -aa -r one "${EF[@]}" "$IN"
ss_pileup "pileup -a -d 0 -B"          "$P" -a -d 0 -B "${EF[@]}" "$IN"
ss_pileup "pileup -d -1 -r two"        "$P" -d -1 -r two "${EF[@]}" "$IN"
for r in one:3-5 lead:2501- two:3- plas:2001-; do
    ss_pileup "pileup -r $r"           "$P" -r "$r" "${EF[@]}" "$IN"
done
ss_pileup "pileup -r tail:2-10, no reference" "$P" -r tail:2-10 "$IN"
ss_pileup "pileup -aa -r one:2-"       "$P" -aa -r one:2- "${EF[@]}" "$IN"
ss_pileup "pileup -aa -r one:100-200 (no read reaches)" "$P" -aa -r one:100-200 "${EF[@]}" "$IN"
ss_pileup "pileup -aa -r lead:3000-3010" "$P" -aa -r lead:3000-3010 "${EF[@]}" "$IN"
ss_pileup "pileup -l BED past the ends" "$P" -l "$PB" "${EF[@]}" "$IN"
ss_pileup "pileup -a -l BED -r lead:2501-" "$P" -a -l "$PB" -r lead:2501- "${EF[@]}" "$IN"
for args in "-a" "-aa -r one" "-J -r two"; do
    ss_case_no=$((ss_case_no + 1))
    # shellcheck disable=SC2086  # the options are words
    "$SAMTOOLS" depth $args "$IN" >"$W/depth.exp" 2>/dev/null
    for c in $P; do
        # shellcheck disable=SC2086
        ss_run_seqshard "$W/depth.got" "$W/depth.err" depth -@ "${c%%:*}" \
            --shard-size "${c#*:}" --quiet $args "$IN"
        if [ "$ss_rc" != 0 ]; then
            ss_bad "depth $args [$c]" "exit status $ss_rc" "$(head -2 "$W/depth.err")"
        elif ! cmp -s "$W/depth.exp" "$W/depth.got"; then
            ss_bad "depth $args [$c]" "output differs from samtools depth"
            ss_show_diff "$W/depth.exp" "$W/depth.got"
        else
            ss_ok "depth $args [$c]"
        fi
    done
done

# A CRAM of the same reads: htslib 1.16 cannot decode back a slice with a read past its
# contig's end while it rebuilds MD/NM (samtools view -T fails too); mpileup and view say
# so in one line, exit 1, nothing written. pileup rebuilds neither and reads it.
if "$SAMTOOLS" view -C -T "$W/ref.fa" -o "$W/in.cram" "$IN" && "$SAMTOOLS" index "$W/in.cram"; then
    ss_pileup "pileup of the CRAM"     "1:1g" "${EF[@]}" "$W/in.cram"
    # which overhanging contig is named first follows the threads' timing
    PAST='in\.cram: cannot decode CRAM records in shard [0-9]+ \(([a-z]+):[0-9-]+\): a read runs '
    PAST+='past the end of @SQ SN:\1 \(LN:[0-9]+\).*samtools view -b --input-fmt-option '
    PAST+='decode_md=0 -T '
    for cmd in "mpileup --quiet -f $W/ref.fa -o OUT/x.vcf" "view --quiet -T $W/ref.fa -o OUT/x.sam"; do
        ss_case_no=$((ss_case_no + 1))
        o=$W/cram.$ss_case_no
        mkdir -p "$o"
        # shellcheck disable=SC2086  # the command's words
        ss_run_seqshard "$o/stdout" "$o/stderr" ${cmd//OUT/$o} "$W/in.cram"
        if [ "$ss_rc" != 1 ] || [ "$(wc -l <"$o/stderr")" != 1 ] ||
            ! grep -qE -- "$PAST" "$o/stderr" || [ -e "$o/x.vcf" ] || [ -e "$o/x.sam" ]; then
            ss_bad "${cmd%% *} of a CRAM with a read past one's end" "exit status $ss_rc" \
                "want one line matching: $PAST" "stderr: $(head -3 "$o/stderr" | cut -c1-300)"
        else
            ss_ok "${cmd%% *} of a CRAM with a read past one's end"
        fi
    done
else
    ss_bad "setup" "samtools could not write the CRAM"
fi

ss_summary
exit $?

#!/usr/bin/env bash
# pileup_realign_edges.sh -- `seqshard pileup --realign` against the two-step pipeline
# (`seqshard realign` to r.bam, `samtools index`, `samtools mpileup` of r.bam) on
# hand-made reads (realign_edges.py) built for the places where one pass could part
# from two steps:
#   case1  reads that realignment moves across a shard edge, left onto a deletion
#          and right onto an insertion;
#   case2  reads that realignment moves before or after a stack of reads under -d,
#          or makes end where one starts (htslib still holds a read when the reads
#          starting at its end arrive), so the depth cap keeps other stacked reads,
#          with a shard edge inside the stack;
#   case3  overlapping pairs: one whose order realignment swaps, so the other mate
#          keeps the overlap's base qualities; one that overlaps only once
#          realigned; one whose realigned mate 1 has a deletion ending at a shard
#          edge where mate 2 starts, and one with mate 2 starting 1.2 kb into a
#          deletion of mate 1: samtools prints a deletion with the quality of the
#          base after it, which mate 2 rewrites when it enters, and it enters before
#          the columns in front of it are printed.
# Each case is first shown to occur in the two-step r.bam (the reads' POS or CIGAR
# changed, and with them the shard, the cap's choice, the mate keeping the qualities,
# the quality of a deletion at a shard's end), so the test fails if realignment stops
# doing it; and the first step is checked to write the same records at 1 kb shards.
# Then the bytes are compared at -@1-3, shards of 100 bp (the planner's floor, reached
# through SEQSHARD_SHARD_OUTPUT: --shard-size takes 1000 at least), about 103 bp, 1 kb,
# 1.5 kb and whole contigs, and under mpirun -np 2 and 3, with BAQ on and -B.
set -u
. "$(dirname "$0")/lib.sh"
ss_setup
W=$SS_WORK
DATA=$W/data
EF=$DATA/ref.fa
CASES=(case1 case2 case3)
# Shard layouts: "NAME SEQSHARD_SHARD_OUTPUT --shard-size" ("-": unset). A tiny output
# target makes every shard output-bound: 1 gives the 100 bp floor, 30 about 103 bp
# (edges off the round positions the cases sit on); 1000 and 1500 cut a 3 kb contig
# in 3 and 2 (c3, 5 kb, in 5 and 4).
LAYOUTS=("100bp 1 1000" "103bp 30 1000" "1k - 1000" "1.5k - 1500" "contig - 1g")
# The thread counts each layout runs at, in LAYOUTS' order. Threads decide which worker
# holds the shards on either side of an edge while records move across it: the 100 bp
# floor and 1 kb shards, with the most edges, run at 1-3; 103 bp (the same edges moved
# off round positions) and whole contigs (no edge: several contigs at once) at 1 and 3;
# 1.5 kb (the fewest edges of the cut layouts) at 2.
LAYOUT_THREADS=("1 2 3" "1 3" "1 2 3" "2" "1 3")

# ---- the inputs: hand-made SAM, sorted and indexed; r.bam as the two-step makes it ----
make_inputs() {
    mkdir -p "$DATA"
    python3 "$SS_SRC/tests/integration/realign_edges.py" "$DATA" &&
        "$SAMTOOLS" faidx "$EF" || return 1
    local c
    for c in "${CASES[@]}"; do
        "$SAMTOOLS" sort -o "$DATA/$c.bam" "$DATA/$c.sam" 2>/dev/null &&
            "$SAMTOOLS" index "$DATA/$c.bam" &&
            "$SEQSHARD" realign --quiet -f "$EF" -o "$DATA/$c.r.bam" "$DATA/$c.bam" &&
            "$SAMTOOLS" index "$DATA/$c.r.bam" || return 1
    done
}
command -v python3 >/dev/null || { echo "FAIL setup: python3 not found"; exit 1; }
make_inputs || { echo "FAIL setup: could not build the hand-made inputs in $DATA"; exit 1; }

# ---- (a) the cases occur ----

# alignment BAM NAME FLAG: "POS CIGAR" of that record (1-based POS).
alignment() {
    "$SAMTOOLS" view "$1" | awk -v n="$2" -v f="$3" '$1 == n && $2 == f { print $4, $6 }'
}

# Every read targets.tsv names has another alignment (POS, CIGAR) in r.bam than in the
# input.
check_moved() {
    local case name flag before after
    while IFS=$'\t' read -r case name flag; do
        before=$(alignment "$DATA/$case.bam" "$name" "$flag")
        after=$(alignment "$DATA/$case.r.bam" "$name" "$flag")
        if [ -z "$before" ] || [ -z "$after" ]; then
            ss_bad "$case: $name realigned" "record missing (in '$before', out '$after')"
        elif [ "$before" = "$after" ]; then
            ss_bad "$case: $name realigned" "realign kept its alignment $before"
        else
            ss_ok "$case: $name realigned: $before -> $after"
        fi
    done <"$DATA/targets.tsv"
}

# shard_ranges OUT ENV_VALUE SHARD_SIZE BAM: the pileup plan's shards on c1-c3 as
# "contig beg end" (0-based, half-open), read from the message each shard gives when
# SEQSHARD_FAIL_SHARD fails it in turn ("shard N (c1:1001-2000): ...").
shard_ranges() {
    local out=$1 envv=$2 size=$3 bam=$4 n=0 msg
    : >"$out"
    while [ $n -lt 200 ]; do
        msg=$(env SEQSHARD_SHARD_OUTPUT="$envv" SEQSHARD_FAIL_SHARD=$n "$SEQSHARD" pileup \
            --quiet --realign -f "$EF" -@ 1 --shard-size "$size" -o /dev/null "$bam" 2>&1 \
            </dev/null) && return 0
        echo "$msg" | sed -n 's/.*shard [0-9]* (\(c[0-9]\):\([0-9]*\)-\([0-9]*\)).*/\1 \2 \3/p' |
            awk '{ print $1, $2 - 1, $3 }' >>"$out"
        n=$((n + 1))
    done
    return 1
}

# shard_of RANGES CONTIG POS (1-based): the index of the line holding it.
shard_of() {
    awk -v c="$2" -v p="$(($3 - 1))" '$1 == c && $2 <= p && p < $3 { print NR; exit }' "$1"
}

# case1: at 100 bp and 1 kb shards, each moved read's new POS is in another shard than
# its old one, and reads cross both ways.
check_case1_edges() {
    local layout envv size ranges name read_name before after s0 s1 left right
    for layout in "${LAYOUTS[0]}" "${LAYOUTS[2]}"; do
        read -r name envv size <<<"$layout"
        [ "$envv" = - ] && envv=
        ranges=$W/ranges.$name
        if ! shard_ranges "$ranges" "$envv" "$size" "$DATA/case1.bam"; then
            ss_bad "case1: shards at $name" "could not list the plan's shards"
            continue
        fi
        left=0 right=0
        for read_name in c1_left0 c1_left1 c1_right; do
            before=$(alignment "$DATA/case1.bam" "$read_name" 0)
            after=$(alignment "$DATA/case1.r.bam" "$read_name" 0)
            s0=$(shard_of "$ranges" c1 "${before% *}")
            s1=$(shard_of "$ranges" c1 "${after% *}")
            if [ -z "$s0" ] || [ "$s0" = "$s1" ]; then
                ss_bad "case1: $read_name changes shard at $name" \
                    "POS ${before% *} -> ${after% *}, shards ${s0:-?} -> ${s1:-?}"
                continue
            fi
            if [ "${after% *}" -lt "${before% *}" ]; then
                left=$((left + 1))
            else
                right=$((right + 1))
            fi
        done
        if [ $left -gt 0 ] && [ $right -gt 0 ]; then
            ss_ok "case1: reads cross shard edges at $name ($left left, $right right)"
        else
            ss_bad "case1: reads cross shard edges both ways at $name" "$left left, $right right"
        fi
    done
}

# stacked BAM POS TAG: the reads named TAG* that samtools keeps at c2:POS under -d 5,
# reading the whole file (a region would drop the reads that end before it, which the
# cap counts).
stacked() {
    "$SAMTOOLS" mpileup -B -d 5 --output-QNAME -f "$EF" "$1" 2>/dev/null |
        awk -v pos="$2" '$1 == "c2" && $2 == pos { print $7 }' | tr , '\n' | grep "^$3" |
        tr '\n' ' '
}

# ref_end BAM NAME FLAG: POS + the reference length of that record (1-based, the first
# position after it).
ref_end() {
    "$SAMTOOLS" view "$1" | awk -v n="$2" -v f="$3" '$1 == n && $2 == f {
        len = 0; c = $6
        while (match(c, /^[0-9]+[MIDNSHP=X]/)) {
            op = substr(c, RLENGTH, 1)
            if (op ~ /[MDN=X]/) len += substr(c, 1, RLENGTH - 1)
            c = substr(c, RLENGTH + 1)
        }
        print $4 + len }'
}

# case2: under -d 5 the cap keeps other stacked reads after realignment: fewer at 1000,
# where reads moved in before the stack, more at 2000, where one moved out, fewer at
# 2560, where realigned c2_end1 ends; htslib still holds a read when the reads starting
# at its end arrive, and a shard starting at 2600 (inside that stack) must count it.
check_case2_cap() {
    local where pos tag a b ranges=$W/ranges.case2 envv size s0 s1 end
    for where in "1001 c2_stack fewer" "2001 c2_later more" "2561 c2_last fewer"; do
        read -r pos tag _ <<<"$where"
        a=$(stacked "$DATA/case2.bam" "$pos" "$tag")
        b=$(stacked "$DATA/case2.r.bam" "$pos" "$tag")
        if [ -n "$b" ] && [ "$a" != "$b" ]; then
            ss_ok "case2: -d 5 keeps other stacked reads at c2:$pos ($a-> $b)"
        else
            ss_bad "case2: -d 5 keeps other stacked reads at c2:$pos" "input '$a', realigned '$b'"
        fi
    done
    end=$(ref_end "$DATA/case2.r.bam" c2_end1 0)
    read -r _ envv size <<<"${LAYOUTS[0]}"
    if ! shard_ranges "$ranges" "$envv" "$size" "$DATA/case2.bam"; then
        ss_bad "case2: shards at 100bp" "could not list the plan's shards"
        return
    fi
    s0=$(shard_of "$ranges" c2 2561)
    s1=$(shard_of "$ranges" c2 2601)
    if [ "$end" = 2561 ] && [ -n "$s0" ] && [ "$s0" != "$s1" ]; then
        ss_ok "case2: realigned c2_end1 ends where the stack at c2:2561 starts (shard $s0)"
    else
        ss_bad "case2: realigned c2_end1 ends where a stack starts, over a shard edge" \
            "ends before c2:$end (want 2561), shards $s0 and $s1"
    fi
}

# zeroed BAM POS NAME: the flags of NAME's mates whose base at c3:POS has quality 0 (at
# -Q 0, -B): the mate overlap detection took the quality from.
zeroed() {
    "$SAMTOOLS" mpileup -B -Q 0 --output-QNAME --output-extra FLAG -f "$EF" "$1" 2>/dev/null |
        awk -v pos="$2" -v name="$3" '$1 == "c3" && $2 == pos { n = split($7, q, ",");
            split($8, f, ",");
            for (i = 1; i <= n; i++) if (q[i] == name && substr($6, i, 1) == "!") print f[i] }'
}

# case3: after realignment another mate of c3_pair loses the overlap's qualities, and the
# mates of c3_pair2 overlap at all.
check_case3_overlap() {
    local where pos name a b
    for where in "1020 c3_pair" "2010 c3_pair2"; do
        read -r pos name <<<"$where"
        a=$(zeroed "$DATA/case3.bam" "$pos" "$name")
        b=$(zeroed "$DATA/case3.r.bam" "$pos" "$name")
        if [ -n "$b" ] && [ "$a" != "$b" ]; then
            ss_ok "case3: $name: the mate zeroed at c3:$pos changes ('$a' -> '$b')"
        else
            ss_bad "case3: $name: the mate zeroed at c3:$pos changes" "input '$a', realigned '$b'"
        fi
    done
}

# deletion_qual BAM POS NAME [REGION]: the quality samtools prints (-B -Q 0) for mate 1
# of NAME inside a deletion at c3:POS (that of its base after the deletion), reading
# the whole file or only REGION.
deletion_qual() {
    # shellcheck disable=SC2046 # no region: no -r
    "$SAMTOOLS" mpileup -B -Q 0 --output-QNAME --output-extra FLAG -f "$EF" \
        $([ -n "${4:-}" ] && echo "-r $4") "$1" 2>/dev/null |
        awk -v pos="$2" -v name="$3" '$1 == "c3" && $2 == pos { n = split($7, q, ",");
            split($8, f, ",");
            for (i = 1; i <= n; i++)
                if (q[i] == name && f[i] == 99 && substr($5, i, 1) == "*") print substr($6, i, 1) }'
}

# case3 at a shard's end: mate 1 of c3_pair3 (realigned) and of c3_pair4 lies in a
# deletion over a shard edge, and the quality samtools prints there is not its own Q30
# ('?') but what mate 2, starting past the edge, made of it; samtools itself prints '?'
# when its region ends before mate 2. So the shard before the edge must take mate 2
# before printing its last columns.
check_case3_shard_end() {
    local ranges=$W/ranges.case3 where pos name mate2 whole part s0 s1 envv size
    read -r _ envv size <<<"${LAYOUTS[0]}"
    if ! shard_ranges "$ranges" "$envv" "$size" "$DATA/case3.bam"; then
        ss_bad "case3: shards at 100bp" "could not list the plan's shards"
        return
    fi
    for where in "1498 c3_pair3 1501" "3150 c3_pair4 4321"; do
        read -r pos name mate2 <<<"$where"
        whole=$(deletion_qual "$DATA/case3.r.bam" "$pos" "$name")
        part=$(deletion_qual "$DATA/case3.r.bam" "$pos" "$name" "c3:$pos-$pos")
        s0=$(shard_of "$ranges" c3 "$pos")
        s1=$(shard_of "$ranges" c3 "$mate2")
        if [ -n "$whole" ] && [ "$whole" != '?' ] && [ "$part" = '?' ] && [ -n "$s0" ] &&
            [ "$s0" != "$s1" ]; then
            local what="mate 2 at c3:$mate2 (shard $s1) sets mate 1's quality in its deletion"
            ss_ok "case3: $name: $what at c3:$pos (shard $s0) to '$whole'"
        else
            ss_bad "case3: $name: mate 2 sets mate 1's quality in a deletion at a shard end" \
                "at c3:$pos '$whole' (want not '?'), '$part' with -r (want '?'), shards $s0, $s1"
        fi
    done
    whole=$(deletion_qual "$DATA/case3.bam" 1498 c3_pair3)
    if [ -z "$whole" ]; then
        ss_ok "case3: c3_pair3's mate 1 has the deletion only after realignment"
    else
        ss_bad "case3: c3_pair3's mate 1 has the deletion only after realignment" "input: '$whole'"
    fi
}

# The first step itself: realign cut at 1000 and 2000, where reads cross, writes the
# records it writes whole.
check_realign_edges() {
    local c
    for c in "${CASES[@]}"; do
        ss_run_seqshard "$W/r1k.sam" "$W/r1k.err" realign --quiet -f "$EF" -@ 2 \
            --shard-size 1000 -O sam "$DATA/$c.bam"
        if [ "$ss_rc" != 0 ]; then
            ss_bad "$c: realign at 1 kb shards" "exit status $ss_rc" "$(head -2 "$W/r1k.err")"
        else
            grep -v '^@' "$W/r1k.sam" >"$W/r1k.rec"
            "$SAMTOOLS" view "$DATA/$c.r.bam" >"$W/whole.rec"
            if cmp -s "$W/whole.rec" "$W/r1k.rec"; then
                ss_ok "$c: realign at 1 kb shards writes r.bam's records"
            else
                ss_bad "$c: realign at 1 kb shards" "records differ from one shard per contig"
                ss_show_diff "$W/whole.rec" "$W/r1k.rec"
            fi
        fi
    done
}

check_moved
check_realign_edges
check_case1_edges
check_case2_cap
check_case3_overlap
check_case3_shard_end

# ---- (b) one pass gives the two steps' bytes ----

# same CASE "MPILEUP OPTS" LAYOUT "RUN OPTIONS" [LAUNCHER...]: samtools mpileup of r.bam
# against seqshard pileup --realign of the input, byte for byte.
same() {
    local case=$1 opts=$2 layout=$3 run=$4 lname envv size
    shift 4
    read -r lname envv size <<<"$layout"
    [ "$envv" = - ] && envv=
    local name="$case '$opts' $lname $run${1:+ mpirun -np ${*: -1}}"
    ss_case_no=$((ss_case_no + 1))
    local exp=$W/exp.$case.${opts// /_} got=$W/got.$ss_case_no
    if [ ! -f "$exp" ]; then
        # shellcheck disable=SC2086 # opts is a word list
        if ! "$SAMTOOLS" mpileup $opts -f "$EF" "$DATA/$case.r.bam" >"$exp" 2>"$exp.err"; then
            ss_bad "$name" "samtools mpileup failed: the test is wrong" "$(head -2 "$exp.err")"
            rm -f "$exp"
            return
        fi
    fi
    # shellcheck disable=SC2086
    env SEQSHARD_SHARD_OUTPUT="$envv" timeout "$SS_TIMEOUT" "$@" "$SEQSHARD" pileup --quiet \
        $run --shard-size "$size" --realign -f "$EF" $opts -o "$got" "$DATA/$case.bam" \
        2>"$got.err" </dev/null
    local rc=$?
    if [ $rc != 0 ]; then
        ss_bad "$name" "exit status $rc" "$(head -2 "$got.err")"
    elif cmp -s "$exp" "$got"; then
        ss_ok "$name"
        rm -f "$got" "$got.err"
    else
        ss_bad "$name" "differs from seqshard realign + samtools mpileup"
        ss_show_diff "$exp" "$got"
    fi
}

# The option sets per case: BAQ on and -B each; the cap and the overlap made visible
# (read names, flags, zero qualities) where they matter.
opts_for() {
    case $1 in
    case1) printf '%s\n' "" "-B" "-B -a" "-aa" ;;
    case2) printf '%s\n' "-d 5" "-B -d 5 --output-QNAME" "-d 2 --output-QNAME" ;;
    case3) printf '%s\n' "" "-B" "-Q 0 --output-QNAME --output-extra FLAG" ;;
    esac
}

for case in "${CASES[@]}"; do
    while IFS= read -r opts; do
        for i in "${!LAYOUTS[@]}"; do
            for t in ${LAYOUT_THREADS[$i]}; do
                same "$case" "$opts" "${LAYOUTS[$i]}" "-@ $t"
            done
        done
    done < <(opts_for "$case")
done

if [ "${SS_MPI:-1}" != 0 ] && command -v mpirun >/dev/null; then
    MPIRUN=(mpirun --oversubscribe --bind-to none)
    [ "$(id -u)" = 0 ] && MPIRUN+=(--allow-run-as-root)
    export OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
    for case in "${CASES[@]}"; do
        for opts in "" "-B"; do
            [ "$case" = case2 ] && opts="$opts -d 5"
            for np in 2 3; do
                same "$case" "${opts# }" "${LAYOUTS[0]}" "--bind none -@ 1" "${MPIRUN[@]}" -np "$np"
            done
        done
    done
else
    echo "note: no MPI in this build; the mpirun cases were not run"
fi
ss_summary
exit $?

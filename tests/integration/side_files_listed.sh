#!/usr/bin/env bash
# side_files_listed.sh -- every file an option names is one the run reads (contract 9),
# for every kernel, every step and --call:
#   - `-o` naming it is refused before any work: status 1, one line "FILE: -o names ROLE",
#     the file byte for byte as it was, nothing left beside it;
#   - after an interrupted run, --resume with that file changed (a later modification
#     time) is refused with one line "cannot resume: inputs changed (ROLE FILE: ...)",
#     so no shard computed from the old file is reused.
# The table below has one line per option: a new option that names a file is one more line.
# (mosdepth's --by, which has no -o, is in run_files.sh.)
set -u
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib_output.sh"
ss_setup
W=$SS_WORK
FW=(--quiet -@ 1 --shard-size 5k) # one worker: shards finish in order
BAM=$TD/s1.bam
REF=$TD/ref.fa

# ---- the side files, made once; each case works on its own copies ----------------------------
T=$W/tpl
mkdir -p "$T"
cp "$TD/ref.fa" "$TD/ref.fa.fai" "$TD/positions.txt" "$T/"
cp "$TD/regions.bed" "$T/t.bed"
echo s2 >"$T/rg.txt"                                      # read groups (s1.bam has s1)
echo s1 >"$T/rgkeep.txt" # mpileup -G keeps the groups it names: one the input has
echo "$BAM" >"$T/list"                                    # -b/-f lists
printf 'ctgA\t1\t30000\nctgB\t1\t20000\n' >"$T/regions.tsv" # bcftools -R/-T CHROM BEG END
echo s1 >"$T/samples.txt"
grep '^#' "$TD/s1.bam.mutations.vcf" >"$T/known.vcf"
grep -v '^#' "$TD/s1.bam.mutations.vcf" | awk 'length($4) != length($5)' >>"$T/known.vcf"
bgzip -c "$T/known.vcf" >"$T/k.vcf.gz" && tabix -p vcf "$T/k.vcf.gz" || {
    echo "FAIL setup: bgzip/tabix of the known sites"
    exit 1
}
cp "$T/k.vcf.gz" "$T/k2.vcf.gz" && cp "$T/k.vcf.gz.tbi" "$T/k2.vcf.gz.tbi"
cp "$TD/s1.bam.bai" "$T/s1.bai" # an index named after -X
# --call's files: sites (CHROM POS, with REF,ALT for -C alleles), groups, sexes, ploidy
grep -v '^#' "$TD/s1.bam.mutations.vcf" | awk -v OFS='\t' '{print $1, $2}' >"$T/sites.tsv"
for pos in 3000 12000 25000; do
    b=$("$SAMTOOLS" faidx "$REF" "ctgA:$pos-$pos" | tail -1)
    printf 'ctgA\t%s\t%s,%s\n' "$pos" "$b" "$([ "$b" = A ] && echo C || echo A)"
done >"$T/alleles.tsv"
printf 's1\tpop1\n' >"$T/groups.txt"
echo 's1 M' >"$T/sexes.txt"
echo 'fam s1 0 0 1 0' >"$T/fam.ped"
printf '* * * M 1\n* * * F 2\n' >"$T/ploidy.txt"
mkdir -p "$W/md" && . "$(dirname "$0")/lib_markdup.sh" && md_input "$W/md" || {
    echo "FAIL setup: markdup's input"
    exit 1
}
MDIN=$W/md/in.bam
mapfile -t TPL < <(ls "$T") # the side files' names: what a case's directory may hold

# ---- the table ---------------------------------------------------------------------------------
# NAME | FILE the check names (-o FILE, then the one changed before --resume) | seqshard's words,
# where %NAME is the case's own copy of the side file NAME.
cases=(
    "pileup -b|list|pileup -B -b %list"
    "pileup -f|ref.fa|pileup -f %ref.fa $BAM"
    "pileup -f's .fai|ref.fa.fai|pileup -f %ref.fa $BAM"
    "pileup -X's index|s1.bai|pileup -B -X $BAM %s1.bai"
    "pileup -G|rg.txt|pileup -B -G %rg.txt $BAM"
    "pileup -l|positions.txt|pileup -B -l %positions.txt $BAM"
    "pileup --realign --known|k.vcf.gz|pileup -B -f $REF --realign --known %k.vcf.gz $BAM"
    "mpileup -b|list|mpileup -f $REF -b %list"
    "mpileup -f|ref.fa|mpileup -f %ref.fa $BAM"
    "mpileup -R|regions.tsv|mpileup -f $REF -R %regions.tsv $BAM"
    "mpileup -T|regions.tsv|mpileup -f $REF -T %regions.tsv $BAM"
    "mpileup -T ^FILE|regions.tsv|mpileup -f $REF -T ^%regions.tsv $BAM"
    "mpileup -S|samples.txt|mpileup -f $REF -S %samples.txt $BAM"
    "mpileup -G|rgkeep.txt|mpileup -f $REF -G %rgkeep.txt $BAM"
    "mpileup -G ^FILE|rg.txt|mpileup -f $REF -G ^%rg.txt $BAM"
    "mpileup --realign --known|k.vcf.gz|mpileup -f $REF --realign --known %k.vcf.gz $BAM"
    "mpileup --call -T|sites.tsv|mpileup -f $REF $BAM --call -m -T %sites.tsv"
    "mpileup --call -t|sites.tsv|mpileup -f $REF $BAM --call -m -t %sites.tsv"
    "mpileup --call -C alleles -T|alleles.tsv|mpileup -f $REF $BAM --call -m -C alleles -T %alleles.tsv"
    "mpileup --call -G|groups.txt|mpileup -f $REF -a AD $BAM --call -m -G %groups.txt"
    "mpileup --call -S sexes|sexes.txt|mpileup -f $REF $BAM --call -m -S %sexes.txt"
    "mpileup --call -S PED|fam.ped|mpileup -f $REF $BAM --call -m -S %fam.ped"
    "mpileup --call --ploidy-file|ploidy.txt|mpileup -f $REF $BAM --call -m --ploidy-file %ploidy.txt"
    "depth -b|t.bed|depth -b %t.bed $BAM"
    "depth -f|list|depth -f %list"
    "depth -T|ref.fa|depth -T %ref.fa $BAM"
    "depth --realign --known|k.vcf.gz|depth --realign -T $REF --known %k.vcf.gz $BAM"
    "view -T|ref.fa|view -T %ref.fa $BAM"
    "view -L|t.bed|view -L %t.bed $BAM"
    "view --realign --known|k.vcf.gz|view -T $REF --realign --known %k.vcf.gz $BAM"
    "markdup --reference|ref.fa|markdup --reference %ref.fa $MDIN"
    "realign -f|ref.fa|realign -f %ref.fa -O sam $BAM"
    "realign -T|ref.fa|realign -T %ref.fa -O sam $BAM"
    "realign --known|k.vcf.gz|realign -f $REF --known %k.vcf.gz -O sam $BAM"
    "realign a second --known|k2.vcf.gz|realign -f $REF --known $T/k.vcf.gz --known %k2.vcf.gz -O sam $BAM"
    "realign --known's .tbi|k.vcf.gz.tbi|realign -f $REF --known %k.vcf.gz -O sam $BAM"
)

# words DIR WORDS RUN...: the words with %NAME as DIR/NAME and the run's own options RUN after
# the command's name (so before --call), one per line (no word has spaces).
words() {
    local d=$1 w ws=$2
    shift 2
    printf '%s\n' "${ws%% *}" "$@"
    for w in ${ws#* }; do printf '%s\n' "${w//%/$d/}"; done
}

# fresh DIR WORDS: DIR with its own copies of the side files WORDS name (%NAME), with the
# index beside each (NAME.fai, NAME.tbi).
fresh() {
    local w f
    mkdir -p "$1"
    for w in $2; do
        [[ $w == *%* ]] || continue
        f=${w#*%}
        cp -p "$T/$f" "$1/"
        for f in "$T/$f.fai" "$T/$f.tbi"; do [ -f "$f" ] && cp -p "$f" "$1/"; done
    done
}

# later FILE: move FILE's modification time 5 s on (its bytes stay)
later() { touch -d "@$(($(stat -c %Y "$1") + 5))" "$1"; }

# clash N NAME FILE WORDS: -o naming FILE is refused before any work: status 1, one line
# (besides bcftools' own notes, which --call prints as bcftools does), FILE untouched, nothing
# left beside it.
clash() {
    local d=$W/clash.$1 name="$2: -o $3" file=$3 args sum rc lines left
    fresh "$d" "$4"
    mapfile -t args < <(words "$d" "$4" --quiet -o "$d/$file")
    sum=$(md5sum <"$d/$file")
    timeout "$SS_TIMEOUT" "$SEQSHARD" "${args[@]}" </dev/null >/dev/null 2>"$d/err"
    rc=$?
    lines=$(ss_error_lines "$d/err" | grep -vc '^Note: ')
    left=$(ss_left "$d" err "${TPL[@]}")
    if [ "$rc" != 1 ]; then
        ss_bad "$name" "status $rc, want 1" "$(ss_quote "$SEQSHARD" "${args[@]}")" \
            "$(head -3 "$d/err")"
    elif [ "$lines" != 1 ] || ! grep -qE "^seqshard: $d/$file: -o (names|is the same file as)" "$d/err"; then
        ss_bad "$name" "want one line 'FILE: -o names ...'" "$(head -3 "$d/err")"
    elif [ "$sum" != "$(md5sum <"$d/$file")" ]; then
        ss_bad "$name" "the file was changed"
    elif [ -n "$left" ]; then
        ss_bad "$name" "left files: $left"
    else
        ss_ok "$name"
    fi
}

# resumed N NAME FILE WORDS: interrupt a run at its 3rd shard, change FILE, then --resume must
# be refused in one line naming FILE, and leave the earlier run's files.
resumed() {
    local d=$W/resume.$1 name=$2 file=$3 args rc lines
    fresh "$d" "$4"
    mapfile -t args < <(words "$d" "$4" "${FW[@]}" -o "$d/out")
    { SEQSHARD_KILL_SHARD=2 timeout "$SS_TIMEOUT" "$SEQSHARD" "${args[@]}" \
        </dev/null >/dev/null 2>&1; } 2>/dev/null
    if [ ! -f "$d/.out.tmp.seqshard" ] || [ ! -f "$d/.out.resume" ]; then
        ss_bad "$name: --resume" "the interrupted run left no temporary output and manifest" \
            "$(ss_left "$d" "${TPL[@]}")"
        return
    fi
    later "$d/$file"
    mapfile -t args < <(words "$d" "$4" "${FW[@]}" --resume -o "$d/out")
    timeout "$SS_TIMEOUT" "$SEQSHARD" "${args[@]}" </dev/null >/dev/null 2>"$d/err"
    rc=$?
    lines=$(ss_error_lines "$d/err" | grep -vc '^Note: ')
    if [ "$rc" != 1 ]; then
        ss_bad "$name: --resume after $file changed" "status $rc, want 1" "$(head -2 "$d/err")"
    elif [ "$lines" != 1 ]; then
        ss_bad "$name: --resume after $file changed" "$lines lines on stderr, want one" \
            "$(head -3 "$d/err")"
    elif ! grep -qF "cannot resume: inputs changed (" "$d/err" || ! grep -qF "$d/$file:" "$d/err"; then
        ss_bad "$name: --resume after $file changed" "no 'inputs changed (... $file:' line" \
            "$(head -2 "$d/err")"
    elif [ -e "$d/out" ]; then
        ss_bad "$name: --resume after $file changed" "an output appeared"
    else
        ss_ok "$name: --resume after $file changed"
    fi
}

# Three rows at a time (each a few short runs, mostly start-up): each row's lines and counts go
# to files, added up here in the table's order.
n=0
for c in "${cases[@]}"; do
    IFS='|' read -r name file args <<<"$c"
    n=$((n + 1))
    [ "$n" -gt 3 ] && wait -n
    (
        ss_passed=0 ss_failed=0 ss_failed_names=()
        clash "$n" "$name" "$file" "$args"
        resumed "$n" "$name" "$file" "$args"
        printf '%s\n' "$ss_passed" "${ss_failed_names[@]}" >"$W/row.$n.counts"
    ) >"$W/row.$n.out" 2>&1 &
done
wait
for i in $(seq "$n"); do
    cat "$W/row.$i.out"
    { read -r p && ss_passed=$((ss_passed + p)) && while read -r f; do
        ss_failed=$((ss_failed + 1)) && ss_failed_names+=("$f")
    done; } <"$W/row.$i.counts" || ss_bad "row $i" "it did not finish"
done

ss_summary
exit $?

# shellcheck shell=bash
# lib_index.sh -- helpers for the tests of indexes built from the shards' pieces
# (index_from_shards.sh, mpi_index_from_shards.sh); source it after lib.sh's setup.
#
# LAUNCH: the words before the seqshard binary (empty, or an mpirun line).

LAUNCH=()
BCFTOOLS=${BCFTOOLS:-bcftools}

# The tool's own index of FILE, of KIND (csi, bai: samtools index; tbi, tcsi: tabix
# -s1 -b2 -e2 [--csi]; bcsi, btbi: bcftools index [-t]; crai: samtools index of a CRAM), into $SS_WORK/theirs.KIND;
# prints that path.
idx_theirs() {
    local kind=$1 file=$2 theirs=$SS_WORK/theirs.$1
    rm -f "$theirs" "$SS_WORK/copy.gz" "$SS_WORK/copy.gz.tbi" "$SS_WORK/copy.gz.csi"
    case $kind in
    csi) "$SAMTOOLS" index -c -o "$theirs" "$file" ;;
    crai) "$SAMTOOLS" index -o "$theirs" "$file" ;;
    bai) "$SAMTOOLS" index -b -o "$theirs" "$file" ;;
    tbi | tcsi)
        cp "$file" "$SS_WORK/copy.gz"
        if [ "$kind" = tcsi ]; then
            tabix --csi -s1 -b2 -e2 "$SS_WORK/copy.gz" && mv "$SS_WORK/copy.gz.csi" "$theirs"
        else
            tabix -s1 -b2 -e2 "$SS_WORK/copy.gz" && mv "$SS_WORK/copy.gz.tbi" "$theirs"
        fi
        ;;
    bcsi | btbi)
        cp "$file" "$SS_WORK/copy.gz"
        if [ "$kind" = btbi ]; then
            "$BCFTOOLS" index -t -o "$theirs" "$SS_WORK/copy.gz"
        else
            "$BCFTOOLS" index -o "$theirs" "$SS_WORK/copy.gz"
        fi
        ;;
    esac
    echo "$theirs"
}

# idx_check NAME KIND OUT INDEX ARGS...: seqshard ARGS (which write OUT and its INDEX) under
# LAUNCH; INDEX must have the bytes of the tool's own index of OUT (idx_theirs KIND).
idx_check() {
    local name=$1 kind=$2 out=$3 idx=$4
    shift 4
    rm -f "$out" "$idx"
    # --quiet before the kernel's options: words after mpileup's --call are bcftools call's
    timeout "$SS_TIMEOUT" "${LAUNCH[@]}" "$SEQSHARD" "$1" --quiet "${@:2}" </dev/null >/dev/null \
        2>"$SS_WORK/err"
    local rc=$?
    if [ $rc != 0 ] || [ ! -f "$idx" ]; then
        ss_bad "$name" "exit status $rc, index ${idx##*/} $([ -f "$idx" ] || echo missing)" \
            "$(head -2 "$SS_WORK/err")" "$(ss_quote "${LAUNCH[@]}" seqshard "$@")"
        return
    fi
    local theirs
    theirs=$(idx_theirs "$kind" "$out" 2>"$SS_WORK/tool.err")
    if [ ! -f "$theirs" ]; then
        ss_bad "$name" "the tool could not index the output" "$(head -2 "$SS_WORK/tool.err")"
    elif cmp -s "$idx" "$theirs"; then
        ss_ok "$name"
    else
        ss_bad "$name" "index differs from the tool's ($kind)" "$(cmp "$idx" "$theirs" 2>&1)" \
            "$(ss_quote "${LAUNCH[@]}" seqshard "$@")"
    fi
}

# idx_matrix TAG THREADS SIZES: the index kinds over thread counts and shard sizes: BAM copied
# block for block (csi) and re-encoded (level=1: csi, bai; a region), SAM.gz (csi; bai of
# regions), text .gz (tbi, csi; a region), depth's text.
idx_matrix() {
    local tag=$1 t sz W=$SS_WORK
    for t in $2; do
        for sz in $3; do
            local run=(-@ "$t" --shard-size "$sz") c="$tag.@$t.$sz"
            idx_check "view_copy_csi.$c" csi "$W/v.bam" "$W/v.bam.csi" \
                view -b --write-index "${run[@]}" -o "$W/v.bam" "$TD/s1.bam"
            idx_check "view_copy_bai.$c" bai "$W/e.bam" "$W/e.bai" \
                view -b --write-index "${run[@]}" -o "$W/e.bam##idx##$W/e.bai" "$TD/edge.bam"
            idx_check "view_encode_csi.$c" csi "$W/l.bam" "$W/l.bam.csi" \
                view -b --output-fmt-option level=1 --write-index "${run[@]}" -o "$W/l.bam" "$TD/s1.bam"
            idx_check "view_encode_bai.$c" bai "$W/l.bam" "$W/l.bai" \
                view -b --output-fmt-option level=1 --write-index "${run[@]}" -o "$W/l.bam##idx##$W/l.bai" "$TD/edge.bam"
            idx_check "view_region_bai.$c" bai "$W/r.bam" "$W/r.bai" \
                view -b --write-index "${run[@]}" -o "$W/r.bam##idx##$W/r.bai" "$TD/s1.bam" \
                ctgA:1000-30000 ctgTiny
            idx_check "view_samgz_csi.$c" csi "$W/s.sam.gz" "$W/s.sam.gz.csi" \
                view --write-index "${run[@]}" -o "$W/s.sam.gz" "$TD/s1.bam"
            idx_check "view_samgz_region_bai.$c" bai "$W/t.sam.gz" "$W/t.bai" \
                view --write-index "${run[@]}" -o "$W/t.sam.gz##idx##$W/t.bai" "$TD/edge.bam" \
                ctgA:1000-30000 ctgTiny
            idx_check "pileup_tbi.$c" tbi "$W/p.txt.gz" "$W/p.txt.gz.tbi" \
                pileup -f "$REF" "${run[@]}" -o "$W/p.txt.gz" "$TD/s1.bam"
            idx_check "pileup_region_csi.$c" tcsi "$W/q.txt.gz" "$W/q.csi" \
                pileup -B -f "$REF" "${run[@]}" -r ctgB:100-20000 -o "$W/q.txt.gz##idx##$W/q.csi" \
                "$TD/s1.bam"
            idx_check "depth_tbi.$c" tbi "$W/d.txt.gz" "$W/d.txt.gz.tbi" \
                depth -a "${run[@]}" -o "$W/d.txt.gz" "$TD/s1.bam"
            idx_check "view_cram_crai.$c" crai "$W/c.cram" "$W/c.cram.crai" \
                view -C -T "$REF" --write-index "${run[@]}" -o "$W/c.cram" "$TD/s1.bam"
            idx_check "view_cram_multi_crai.$c" crai "$W/m.cram" "$W/m.crai" \
                view -C -T "$REF" --write-index "${run[@]}" -o "$W/m.cram##idx##$W/m.crai" \
                "$TD/edge.multi.cram"
            idx_mpileup "$c" "${run[@]}"
        done
    done
}

# idx_mpileup TAG RUN...: mpileup's BCF and VCF.gz (and --call's) indexes against bcftools
# index of the same file: .csi, and -t's .tbi for VCF; contigs with no reads (edge.bam).
idx_mpileup() {
    local c=$1 W=$SS_WORK
    shift
    idx_check "mpileup_bcf_csi.$c" bcsi "$W/m.bcf" "$W/m.bcf.csi" \
        mpileup -f "$REF" "$@" -Ob --write-index -o "$W/m.bcf" "$TD/s1.bam"
    idx_check "mpileup_vcf_tbi.$c" btbi "$W/m.vcf.gz" "$W/m.vcf.gz.tbi" \
        mpileup -f "$REF" "$@" -a AD,DP -Oz --write-index=tbi -o "$W/m.vcf.gz" "$TD/edge.bam"
    idx_check "mpileup_gvcf_csi.$c" bcsi "$W/g.vcf.gz" "$W/g.csi" \
        mpileup -f "$REF" "$@" -g 3,10 -Oz --write-index -o "$W/g.vcf.gz##idx##$W/g.csi" \
        "$TD/s1.bam"
    idx_check "call_bcf_csi.$c" bcsi "$W/c.bcf" "$W/c.bcf.csi" \
        mpileup -f "$REF" "$@" "$TD/s1.bam" --call -mv -Ob --write-index -o "$W/c.bcf"
}

# idx_big_bam PATH: a BAM (with its CSI) of one 600 Mbp contig, a read at 100 and one past
# 2^29, which no .bai can hold.
idx_big_bam() {
    {
        printf '@HD\tVN:1.6\tSO:coordinate\n@SQ\tSN:big\tLN:600000000\n'
        printf 'r1\t0\tbig\t100\t60\t4M\t*\t0\t0\tACGT\tIIII\n'
        printf 'r2\t0\tbig\t540000000\t60\t4M\t*\t0\t0\tACGT\tIIII\n'
    } | "$SAMTOOLS" view -b -o "$1" - && "$SAMTOOLS" index -c "$1"
}

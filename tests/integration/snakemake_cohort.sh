#!/usr/bin/env bash
# snakemake_cohort.sh -- examples/cohort/Snakefile on the test data (s1.bam, s2.bam),
# run by snakemake 7 locally (--cores 2) and, as root with Slurm installed, through a
# single-node Slurm cluster (scripts/slurm-cluster.sh) with --cluster 'sbatch ...'.
# Each run's outputs must all exist and match the reference tools:
#   {s}.pileup.gz         decompressed = samtools mpileup -f ref.fa {s}.bam; tabix index
#   {s}.per-base.bed.gz, {s}.regions.bed.gz = mosdepth --by 1000's; summary and dist
#                         files = mosdepth's but for the read-less contig ctgEmpty and the
#                         total rows (mosdepth 0.3.3 leaves such contigs out)
#   cohort.depth.txt.gz   decompressed = samtools depth -H s1.bam s2.bam (the header names
#                         each column by its path as given, in both); tabix index
#   cohort.calls.vcf.gz   records = bcftools mpileup -f ref.fa s1.bam s2.bam | bcftools
#                         call -mv; CSI index
# No snakemake: SKIP (77). Not root, or no Slurm: the Slurm part is skipped with the
# reason. The cluster shares slurm_jobs.sh's folder, ports and lock (they take turns).
set -u
. "$(dirname "$0")/lib.sh"

command -v snakemake >/dev/null || {
    echo "SKIP: snakemake not installed (apt-get install --no-install-recommends snakemake)"
    exit 77
}
ss_setup
command -v mosdepth >/dev/null ||
    echo "snakemake_cohort: mosdepth not installed: the mosdepth files are not compared"
PATH=$PATH:/usr/sbin:/sbin
SNAKEFILE=$SS_SRC/examples/cohort/Snakefile
STATUS=$SS_SRC/examples/cohort/slurm-status.sh
W=$SS_WORK
cat >"$W/config.yaml" <<EOF
seqshard: $SEQSHARD
reference: $REF
samples:
  s1: $TD/s1.bam
  s2: $TD/s2.bam
threads: 2
mosdepth_by: 1000
EOF

# ---- the expected outputs, once -------------------------------------------------------
mkdir -p "$W/exp"
for s in s1 s2; do
    "$SAMTOOLS" mpileup -f "$REF" "$TD/$s.bam" >"$W/exp/$s.pileup" 2>/dev/null ||
        ss_bad "samtools mpileup $s" "samtools itself failed: the test is wrong"
    if command -v mosdepth >/dev/null; then
        (cd "$W/exp" && mosdepth --by 1000 "$s" "$TD/$s.bam") ||
            ss_bad "mosdepth $s" "mosdepth itself failed: the test is wrong"
    fi
done
"$SAMTOOLS" depth -H "$TD/s1.bam" "$TD/s2.bam" >"$W/exp/cohort.depth" ||
    ss_bad "samtools depth" "samtools itself failed: the test is wrong"
bcftools mpileup -f "$REF" -Ou "$TD/s1.bam" "$TD/s2.bam" 2>/dev/null |
    bcftools call -mv 2>/dev/null | grep -v '^#' >"$W/exp/cohort.calls" ||
    ss_bad "bcftools call" "bcftools mpileup | bcftools call failed: the test is wrong"

# The summary/dist text without ctgEmpty and the total rows (see the header).
md_text() { grep -Ev $'^(ctgEmpty(_region)?|total(_region)?)\t' "$1"; }

# check_outputs NAME DIR: every output of the workflow in DIR, against the expected ones.
check_outputs() {
    local name=$1 d=$2 s f
    for s in s1 s2; do
        if [ ! -s "$d/$s.pileup.gz.tbi" ]; then
            ss_bad "$name: $s pileup" "no tabix index $d/$s.pileup.gz.tbi"
        elif ! gzip -dc "$d/$s.pileup.gz" 2>/dev/null | cmp -s "$W/exp/$s.pileup" -; then
            ss_bad "$name: $s pileup" "$d/$s.pileup.gz missing or differs from samtools mpileup"
        else
            ss_ok "$name: $s pileup = samtools mpileup"
        fi
        command -v mosdepth >/dev/null || continue
        local bad=""
        for f in per-base.bed.gz regions.bed.gz; do
            [ -s "$d/$s.$f.csi" ] || bad+=" $f.csi(missing)"
            cmp -s <(gzip -dc "$W/exp/$s.$f") <(gzip -dc "$d/$s.$f" 2>/dev/null) || bad+=" $f"
        done
        for f in mosdepth.summary.txt mosdepth.global.dist.txt mosdepth.region.dist.txt; do
            if [ ! -s "$d/$s.$f" ] || ! cmp -s <(md_text "$W/exp/$s.$f") <(md_text "$d/$s.$f"); then
                bad+=" $f"
            fi
        done
        if [ -n "$bad" ]; then
            ss_bad "$name: $s mosdepth files" "missing or differ from mosdepth's:$bad ($d)"
        else
            ss_ok "$name: $s mosdepth files = mosdepth"
        fi
    done
    if [ ! -s "$d/cohort.depth.txt.gz.tbi" ]; then
        ss_bad "$name: cohort depth" "no tabix index $d/cohort.depth.txt.gz.tbi"
    elif ! gzip -dc "$d/cohort.depth.txt.gz" 2>/dev/null | cmp -s "$W/exp/cohort.depth" -; then
        ss_bad "$name: cohort depth" "$d/cohort.depth.txt.gz missing or differs from samtools depth -H"
        gzip -dc "$d/cohort.depth.txt.gz" 2>/dev/null >"$W/got.cohort.depth"
        ss_show_diff "$W/exp/cohort.depth" "$W/got.cohort.depth"
    else
        ss_ok "$name: cohort depth = samtools depth -H"
    fi
    if [ ! -s "$d/cohort.calls.vcf.gz.csi" ]; then
        ss_bad "$name: cohort calls" "no index $d/cohort.calls.vcf.gz.csi"
    elif ! bcftools view -H "$d/cohort.calls.vcf.gz" 2>/dev/null >"$W/got.cohort.calls" ||
        ! cmp -s "$W/exp/cohort.calls" "$W/got.cohort.calls"; then
        ss_bad "$name: cohort calls" "$d/cohort.calls.vcf.gz missing or differs from the bcftools pipe"
        ss_show_diff "$W/exp/cohort.calls" "$W/got.cohort.calls"
    else
        ss_ok "$name: cohort calls = bcftools mpileup | bcftools call -mv"
    fi
}

# run_workflow NAME DIR SNAKEMAKE-ARGS...: the workflow in DIR; must exit 0.
run_workflow() {
    local name=$1 d=$2
    shift 2
    mkdir -p "$d"
    if ! timeout 120 snakemake -s "$SNAKEFILE" --configfile "$W/config.yaml" -d "$d" \
        "$@" </dev/null >"$d.out" 2>&1; then
        ss_bad "$name: snakemake" "exit status $? ($d.out):" "$(tail -n 8 "$d.out")"
        return 1
    fi
    ss_ok "$name: snakemake"
}

# ---- locally ----------------------------------------------------------------------------
run_workflow local "$W/local" --cores 2
check_outputs local "$W/local/results"

# ---- through Slurm ------------------------------------------------------------------------
slurm_ok=1
for t in munged slurmctld slurmd sbatch squeue scontrol; do
    command -v "$t" >/dev/null 2>&1 || slurm_ok=0
done
if [ "$(id -u)" != 0 ]; then
    echo "snakemake_cohort: Slurm part skipped: starting the daemons needs root"
elif [ "$slurm_ok" = 0 ]; then
    echo "snakemake_cohort: Slurm part skipped: Slurm is not installed" \
        "(apt-get install --no-install-recommends slurmctld slurmd slurm-client munge)"
else
    CLUSTER=$SS_SRC/scripts/slurm-cluster.sh
    while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_')
    export SS_SLURM_DIR=${SS_SLURM_DIR:-/tmp/seqshard-slurm-test}
    export SS_SLURM_PORT=${SS_SLURM_PORT:-16827}
    eval "$("$CLUSTER" env)"
    exec 9>"$SS_SLURM_DIR.lock"
    if ! flock -w 300 9; then
        ss_bad "cluster start" "another test has held $SS_SLURM_DIR.lock for 300 s"
    else
        trap 'timeout 120 "$CLUSTER" stop >/dev/null 2>&1 9>&-
              if [ "$ss_failed" = 0 ]; then rm -rf "$SS_WORK"; else echo "(kept $SS_WORK)"; fi' EXIT
        timeout 60 "$CLUSTER" stop >/dev/null 2>&1 9>&-
        if ! timeout 60 "$CLUSTER" start 9>&-; then
            ss_bad "cluster start" "scripts/slurm-cluster.sh start failed (messages above)"
        else
            mkdir -p "$W/slurm/logs"
            run_workflow slurm "$W/slurm" --jobs 4 --latency-wait 10 \
                --cluster "sbatch --parsable -c {threads} -t {resources.runtime} -J smk-{rule} -o logs/slurm-%j.log" \
                --cluster-status "$STATUS"
            check_outputs slurm "$W/slurm/results"
            # The rules ran as Slurm jobs, one log each, and got their threads as CPUs.
            n=$(find "$W/slurm/logs" -name 'slurm-*.log' | wc -l)
            if [ "$n" = 6 ] && grep -q '2 threads' "$W/slurm/results/logs/s1.pileup.log"; then
                ss_ok "slurm: 6 jobs ran under sbatch, 2 threads each"
            else
                ss_bad "slurm: jobs under sbatch" "$n Slurm job logs (want 6);" \
                    "$(head -2 "$W/slurm/results/logs/s1.pileup.log" 2>/dev/null)"
            fi
        fi
    fi
fi
ss_summary
exit $?

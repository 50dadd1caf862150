#!/usr/bin/env bash
# slurm-cluster.sh -- a throw-away single-node Slurm cluster on this machine, for
# testing the scripts in slurm/ for real (tests/integration/slurm_jobs.sh) and for
# trying them by hand.
#
#   scripts/slurm-cluster.sh start    start munged, slurmctld and slurmd (idempotent:
#                                     a healthy running cluster is kept as it is)
#   scripts/slurm-cluster.sh stop     cancel every job, `scontrol shutdown`, stop munged,
#                                     remove the state folder (idempotent)
#   scripts/slurm-cluster.sh status   is it up? (exit 0 when the node takes jobs)
#   scripts/slurm-cluster.sh env      the line to eval before using sbatch/srun/squeue:
#                                     eval "$(scripts/slurm-cluster.sh env)"
#
# Needs root and Debian's packages `slurmctld slurmd slurm-client munge` (installed with
# --no-install-recommends; slurm-wlm would pull dozens of packages nobody needs here).
#
# Everything lives in one folder, SS_SLURM_DIR [/tmp/seqshard-slurm; not under $TMPDIR,
# which may differ between start and stop, or be too long for a socket path]:
# slurm.conf, logs, state, spool, and a munged of our own on its own socket, so that a
# Slurm or munge already on the machine is neither used nor disturbed. The daemons listen
# on SS_SLURM_PORT and SS_SLURM_PORT+1 [16817, 16818], not on Slurm's 6817/6818.
# Every daemon this script starts carries SS_SLURM_CLUSTER=<folder> in its environment,
# and step daemons run in the folder; `stop` finds leftovers by those marks (and their
# children), so it never touches anything it did not start.
#
# The configuration follows what works on a machine without cgroups (containers, CI):
#   - the node line is `slurmd -C`'s, so sockets/cores/memory are the machine's own;
#   - ProctrackType=proctrack/linuxproc, TaskPlugin=task/none (no cgroups; so no CPU
#     binding is enforced here: --cpu-bind is accepted and ignored);
#   - EnforcePartLimits=ALL: a job asking for more than the node has is refused at
#     submission instead of pending forever;
#   - select/cons_tres, CR_Core: a job gets whole cores; `--overcommit` (-O) runs more
#     tasks than CPUs (`sbatch -n 2 -c 2 -O` on 2 cores), though not together with
#     --ntasks-per-node: the tests give each of 2 ranks half the CPUs instead;
#   - batch_sched_delay=0, sched_min_interval=0: the next job starts ~1 s after one ends;
#   - MailProg=/bin/true (no mail on test machines; quiets slurmctld's warning).
set -u

# Inside a job of another Slurm (running the tests on a real cluster), its SLURM_* and
# input variables would point our daemons and commands at the wrong job: drop them.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SRUN|SALLOC)_')

SS_SLURM_DIR=${SS_SLURM_DIR:-/tmp/seqshard-slurm}
SS_SLURM_PORT=${SS_SLURM_PORT:-16817}
SS_SLURM_START_TIMEOUT=${SS_SLURM_START_TIMEOUT:-30}
D=$SS_SLURM_DIR
CONF=$D/slurm.conf
MUNGE_SOCKET=$D/munge/munge.socket.2
HOSTS_MARK="# added by seqshard scripts/slurm-cluster.sh"

say() { echo "slurm-cluster: $*" >&2; }
die() { say "$*"; exit 1; }

# Run a Slurm client command against our cluster, never for longer than $1 seconds.
sl() {
    local t=$1
    shift
    SLURM_CONF=$CONF timeout "$t" "$@"
}

need_tools() {
    local missing="" t
    for t in munged munge unmunge slurmctld slurmd scontrol sinfo squeue scancel sbatch srun \
             runuser timeout; do
        command -v "$t" >/dev/null 2>&1 || missing+=" $t"
    done
    if [ -n "$missing" ]; then
        die "missing:$missing; install them with" \
            "apt-get install --no-install-recommends slurmctld slurmd slurm-client munge"
    fi
    [ "$(id -u)" = 0 ] || die "must run as root (slurmd and munged switch users); use sudo"
    [ -r /etc/munge/munge.key ] || die "/etc/munge/munge.key missing; reinstall munge" \
        "(its package creates the key) or run mungekey -c"
}

# pid_alive PIDFILE: the daemon the pid file names is running. The program name must
# match too (slurmctld.pid -> slurmctld), so a stale file whose pid now belongs to
# something else is never taken for ours.
pid_alive() {
    local pid name
    [ -f "$1" ] || return 1
    pid=$(cat "$1" 2>/dev/null)
    name=$(basename "$1" .pid)
    running "$pid" && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]
}

# The node takes jobs: slurmctld answers and the node is idle/mixed/allocated.
healthy() {
    [ -f "$CONF" ] || return 1
    pid_alive "$D/slurmctld.pid" && pid_alive "$D/slurmd.pid" && pid_alive "$D/munge/munged.pid" \
        || return 1
    local st
    st=$(sl 10 sinfo -h -N -o %t 2>/dev/null | head -1)
    case "$st" in idle | mix | alloc | comp) return 0 ;; *) return 1 ;; esac
}

# Something listens on 127.0.0.1:PORT (bash's /dev/tcp: no ss/netstat needed).
port_busy() {
    timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
}

show_logs() {
    local f
    for f in "$D/munge/munged.log" "$D/slurmctld.log" "$D/slurmd.log"; do
        [ -s "$f" ] || continue
        say "---- last lines of $f"
        tail -n 15 "$f" | sed 's/^/    /' >&2
    done
}

# The name slurmd reports (hostname -s) must resolve, or slurmd, srun and the step
# daemons cannot find each other. Add it to /etc/hosts when it does not; `stop` takes
# the line out again. /etc/hosts may be a bind mount: rewrite it in place, never mv.
ensure_host_resolves() {
    local h=$1
    getent hosts "$h" >/dev/null 2>&1 && return 0
    say "host name $h does not resolve; adding '127.0.0.1 $h' to /etc/hosts"
    printf '127.0.0.1 %s %s\n' "$h" "$HOSTS_MARK" >>/etc/hosts \
        || die "cannot write /etc/hosts; add a line for $h by hand"
}

remove_hosts_line() {
    grep -qF "$HOSTS_MARK" /etc/hosts 2>/dev/null || return 0
    local tmp
    tmp=$(mktemp) || return 0
    grep -vF "$HOSTS_MARK" /etc/hosts >"$tmp" && cat "$tmp" >/etc/hosts
    rm -f "$tmp"
}

write_conf() {
    local node_line=$1 host=$2
    cat >"$CONF" <<EOF
# Generated by seqshard scripts/slurm-cluster.sh on $(date -u +%FT%TZ); removed by 'stop'.
ClusterName=seqshard-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$SS_SLURM_PORT
SlurmdPort=$((SS_SLURM_PORT + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups on containers and CI machines.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
# Start the next job as soon as one ends (the defaults wait up to ~3 s: fine on a real
# cluster, most of the run time of a test).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Refuse impossible jobs at submission; without this they pend forever.
EnforcePartLimits=ALL
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
# Finished jobs stay visible (scontrol show job) for 10 minutes: the tests read exit codes.
MinJobAge=600
KillWait=5
MessageTimeout=10
InactiveLimit=0
$node_line State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munged() {
    install -d -o munge -g munge -m 0755 "$D/munge" || return 1
    # munged checks that its key, socket folder and log are not open to others; it runs
    # as the munge user with the key the package created.
    runuser -u munge -- env SS_SLURM_CLUSTER="$D" munged \
        --socket="$MUNGE_SOCKET" --key-file=/etc/munge/munge.key \
        --pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
        --seed-file="$D/munge/munged.seed" || return 1
    for _ in $(seq 1 50); do
        if timeout 5 munge -n -S "$MUNGE_SOCKET" 2>/dev/null \
            | timeout 5 unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1; then
            return 0
        fi
        sleep 0.1
    done
    say "munged does not answer on $MUNGE_SOCKET"
    return 1
}

cmd_start() {
    need_tools
    if healthy; then
        say "already running ($D)"
        return 0
    fi
    # Whatever is left of an earlier run (crashed test, half start) goes first.
    [ -e "$D" ] && cmd_stop quiet
    local t0=$SECONDS host node_line
    host=$(hostname -s) || die "hostname -s failed"
    ensure_host_resolves "$host"
    local port
    for port in "$SS_SLURM_PORT" "$((SS_SLURM_PORT + 1))"; do
        if port_busy "$port"; then
            die "port $port is in use (another cluster? scripts/slurm-cluster.sh stop," \
                "with its SS_SLURM_DIR); or choose other ports with SS_SLURM_PORT"
        fi
    done
    node_line=$(slurmd -C 2>/dev/null | grep '^NodeName=') \
        || die "slurmd -C printed no NodeName line; is slurmd installed correctly?"
    node_line=$(printf '%s\n' "$node_line" | head -1)
    { mkdir -p "$D" && chmod 0755 "$D"; } || die "cannot create $D"
    mkdir -p "$D/state" "$D/spool" || die "cannot create folders in $D"
    write_conf "$node_line" "$host" || die "cannot write $CONF"
    start_munged || { show_logs; cmd_stop quiet; die "munged did not start"; }
    # Both daemons fork into the background and write their pid files themselves.
    SLURM_CONF=$CONF SS_SLURM_CLUSTER=$D slurmctld -f "$CONF" \
        || { show_logs; cmd_stop quiet; die "slurmctld did not start"; }
    SLURM_CONF=$CONF SS_SLURM_CLUSTER=$D slurmd -f "$CONF" \
        || { show_logs; cmd_stop quiet; die "slurmd did not start"; }
    local deadline=$((SECONDS + SS_SLURM_START_TIMEOUT))
    until healthy; do
        local f
        for f in "$D/slurmctld.pid" "$D/slurmd.pid"; do
            if [ -f "$f" ] && ! pid_alive "$f"; then
                show_logs
                cmd_stop quiet
                die "$(basename "$f" .pid) exited at start; see the log lines above"
            fi
        done
        if [ $SECONDS -ge $deadline ]; then
            say "the node did not come up within ${SS_SLURM_START_TIMEOUT}s:"
            sl 10 sinfo -N -l >&2 2>&1
            show_logs
            cmd_stop quiet
            die "start failed; see the log lines above"
        fi
        sleep 0.3
    done
    say "up in $((SECONDS - t0)) s: node $host, config $CONF"
}

# The processes left over from our cluster: the daemons we started (marked with
# SS_SLURM_CLUSTER=$D in their environment), step daemons (slurmstepd running in $D,
# slurmd's folder, with an empty environment), and every descendant of those (tasks).
# Never this script or its callers. Prints pids, one a line.
leftovers() {
    local mine=" " q=$BASHPID p roots=" "
    while [ -n "$q" ] && [ "$q" -gt 1 ]; do
        mine+="$q "
        q=$(awk '/^PPid:/ {print $2}' "/proc/$q/status" 2>/dev/null)
    done
    # One grep for the marks (it reads every environ itself: forks are slow in sandboxes),
    # and a builtin test for the folder.
    while read -r p; do
        p=${p#/proc/}
        roots+="${p%/environ} "
    done < <(grep -lzxF "SS_SLURM_CLUSTER=$D" /proc/[0-9]*/environ 2>/dev/null)
    # Step daemons only: a shell someone left in $D is not ours to end.
    local comm
    for p in /proc/[0-9]*; do
        [ "$p/cwd" -ef "$D" ] || continue
        read -r comm <"$p/comm" 2>/dev/null || continue
        [ "$comm" = slurmstepd ] && roots+="${p#/proc/} "
    done
    local r roots_kept=" "
    for r in $roots; do
        case "$mine" in *" $r "*) ;; *) roots_kept+="$r " ;; esac
    done
    roots=$roots_kept
    [ "$roots" = " " ] && return 0
    # Close the set over children, a few generations deep (srun -> task -> threads...).
    # (From /proc, not ps: slim images have no procps. cat, because it goes on past a
    # process that ended while we read.)
    cat /proc/[0-9]*/status 2>/dev/null | awk '/^Pid:/ {p = $2} /^PPid:/ {print p, $2}' \
        | awk -v roots="$roots" -v mine="$mine" '
        { pid[NR] = $1; ppid[NR] = $2 }
        END {
            n = split(roots, r, " "); for (i = 1; i <= n; i++) set[r[i]] = 1
            for (g = 0; g < 8; g++)
                for (i = 1; i <= NR; i++)
                    if ((ppid[i] in set) && index(mine, " " pid[i] " ") == 0) set[pid[i]] = 1
            for (p in set) print p
        }'
}

# Alive and not a zombie (in some containers nobody reaps orphans).
running() {
    local st
    kill -0 "$1" 2>/dev/null || return 1
    st=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null)
    [ "$st" != Z ]
}

kill_leftovers() {
    local pids="" p left names="" comm
    # Only those still there (a daemon's child may be exiting as we look).
    for p in $(leftovers); do
        running "$p" || continue
        comm=$(cat "/proc/$p/comm" 2>/dev/null) || continue
        pids+=" $p"
        names+=" $p($comm)"
    done
    [ -n "$pids" ] || return 0
    say "stopping leftover processes:$names"
    # One set, decided before anything dies: once a step daemon is gone its children
    # are re-parented and could no longer be told apart.
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null
    for _ in $(seq 1 15); do
        left=""
        for p in $pids; do running "$p" && left+=" $p"; done
        [ -z "$left" ] && return 0
        sleep 0.2
    done
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null
    sleep 0.2
    return 0
}

wait_gone() { # seconds pidfile...
    local t=$1 f deadline
    shift
    deadline=$((SECONDS + t))
    for f in "$@"; do
        while pid_alive "$f" && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    done
}

cmd_stop() {
    local quiet=${1:-}
    if [ ! -e "$D" ]; then
        remove_hosts_line
        [ -z "$quiet" ] && say "not running"
        return 0
    fi
    if [ -f "$CONF" ] && pid_alive "$D/slurmctld.pid"; then
        # Jobs first, so no step daemon outlives slurmd (linuxproc has no cgroup to reap).
        local ids deadline=$((SECONDS + 15))
        ids=$(sl 10 squeue -h -t PD,R,S,CG -o %A 2>/dev/null)
        if [ -n "$ids" ]; then
            # shellcheck disable=SC2086
            sl 10 scancel $ids >/dev/null 2>&1
            while [ -n "$(sl 10 squeue -h -t PD,R,S,CG -o %A 2>/dev/null)" ] \
                && [ $SECONDS -lt $deadline ]; do
                sleep 0.3
            done
        fi
        sl 15 scontrol shutdown >/dev/null 2>&1
        wait_gone 10 "$D/slurmctld.pid" "$D/slurmd.pid"
    fi
    # What `scontrol shutdown` did not stop (no controller to ask, or it hung), and munged.
    local f
    for f in "$D/slurmctld.pid" "$D/slurmd.pid" "$D/munge/munged.pid"; do
        pid_alive "$f" && kill -TERM "$(cat "$f")" 2>/dev/null
    done
    wait_gone 5 "$D/slurmctld.pid" "$D/slurmd.pid" "$D/munge/munged.pid"
    # Anything of ours still running (a stuck daemon, a step daemon, a job task).
    kill_leftovers
    if [ "${SS_SLURM_KEEP:-0}" = 1 ]; then
        say "stopped; kept $D (SS_SLURM_KEEP=1)"
    else
        rm -rf "$D"
        [ -z "$quiet" ] && say "stopped"
    fi
    remove_hosts_line
    return 0
}

cmd_status() {
    if healthy; then
        sl 10 sinfo -N -l
        return 0
    fi
    say "not running (or not healthy) in $D"
    return 1
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    env) printf 'export SLURM_CONF=%q\n' "$CONF" ;;
    *)
        echo "usage: $0 start|stop|status|env   (see the comment at the top)" >&2
        exit 2
        ;;
esac

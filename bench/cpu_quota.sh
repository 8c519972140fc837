#!/usr/bin/env bash
# Run a command, and optionally a running PostgreSQL server, under a CPU quota: a stand-in for a
# slower machine when checking that a latency figure holds with margin (needs root and cgroups).
#
#   bench/cpu_quota.sh CPUS [--postgres] -- COMMAND...
#
# CPUS is the quota in cores (1 = half of a 2-core machine), enforced every 5 ms so throttling
# adds at most a few milliseconds of jitter. --postgres moves the processes of the user
# `postgres` (the server and its backends) into the same group, so the store shares the quota.
# Everything goes back to the root group at the end.
set -euo pipefail
cpus=${1:?usage: bench/cpu_quota.sh CPUS [--postgres] -- COMMAND...}
shift
pg=0
if [ "${1:-}" = "--postgres" ]; then pg=1; shift; fi
[ "${1:-}" = "--" ] && shift
period=5000
quota=$(python3 -c "print(int($cpus * $period))")
name="assay-quota-$$"
if [ -d /sys/fs/cgroup/cpu ] && [ -f /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]; then  # cgroup v1
  group=/sys/fs/cgroup/cpu/$name
  root=/sys/fs/cgroup/cpu
  mkdir "$group"
  echo "$period" > "$group/cpu.cfs_period_us"
  echo "$quota" > "$group/cpu.cfs_quota_us"
else  # cgroup v2
  root=/sys/fs/cgroup
  group=$root/$name
  mkdir "$group"
  echo "$quota $period" > "$group/cpu.max"
fi
move_back() {
  for p in $(cat "$group/cgroup.procs" 2>/dev/null); do echo "$p" > "$root/cgroup.procs" 2>/dev/null || true; done
  rmdir "$group" 2>/dev/null || true
}
trap move_back EXIT
if [ "$pg" = 1 ]; then
  for p in $(pgrep -u postgres); do echo "$p" > "$group/cgroup.procs"; done
fi
what="the command"; [ "$pg" = 1 ] && what="the command and PostgreSQL"
echo "CPU quota: $cpus core(s) for $what" >&2
bash -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' _ "$group" "$@"

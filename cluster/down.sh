#!/usr/bin/env bash
# Stop everything cluster/up.sh started in the run folder (replicas and HAProxy), found by
# their pid files. Idempotent. Data folders and logs stay for inspection; `--purge` removes
# them too.
#
# usage: cluster/down.sh [--purge]      (run folder: $RAFTER_RUN_DIR or cluster/run)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
run=${RAFTER_RUN_DIR:-$here/run}
purge=false
[ "${1:-}" = "--purge" ] && purge=true
[ -d "$run" ] || exit 0

# The pid is ours only if the process still runs the program we started (pids get reused).
ours() { # pid, expected program name
  local exe
  exe=$(readlink "/proc/$1/exe" 2>/dev/null) || return 1
  case $(basename "${exe% (deleted)}") in "$2"*) return 0 ;; *) return 1 ;; esac
}

pids=()
for f in "$run"/replica-*.pid "$run"/lb.pid; do
  [ -e "$f" ] || continue
  pid=$(cat "$f" 2>/dev/null)
  prog=rafter
  [ "$(basename "$f")" = lb.pid ] && prog=haproxy
  if [ -n "$pid" ] && ours "$pid" "$prog"; then
    kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  fi
  rm -f "$f"
done

# Bounded wait, then SIGKILL what is left.
for _ in $(seq 1 50); do
  left=()
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
  [ "${#left[@]}" -eq 0 ] && break
  sleep 0.1
done
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null; done

if $purge; then
  rm -rf "$run"/replica-* "$run"/lb.log "$run"/haproxy.cfg "$run"/ports.env "$run"/kubeconfig
  rmdir "$run" 2>/dev/null || true
fi
exit 0

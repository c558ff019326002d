#!/usr/bin/env bash
# Start a local Rafter cluster: N replicas (default 3) on 127.0.0.1 and HAProxy in front of
# their Kubernetes API ports. Waits (bounded) until every replica and the load balancer are
# ready, then prints the kubeconfig path (the last line of its output).
#
# usage: cluster/up.sh [N]
#
# Environment:
#   RAFTER_BIN         rafter binary to run (default: `cargo build --bin rafter`, then the
#                      target directory's debug/rafter)
#   RAFTER_RUN_DIR     run folder (default: cluster/run)
#   RAFTER_UP_TIMEOUT  seconds to wait for readiness (default 90)
#   RAFTER_ARGS        extra arguments for every `rafter serve` (e.g. --compaction-window 1m)
#
# The run folder holds: replica-<i>/ (data folders), replica-<i>.pid, replica-<i>.log,
# haproxy.cfg, lb.pid, lb.log, ports.env, kubeconfig. Previous files of these names are
# replaced (a fresh cluster); cluster/down.sh stops everything.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
n=${1:-3}
run=${RAFTER_RUN_DIR:-$here/run}
timeout_s=${RAFTER_UP_TIMEOUT:-90}

die() { echo "up.sh: $*" >&2; exit 1; }
case $n in '' | *[!0-9]*) die "N must be a positive number (got '$n')" ;; esac
[ "$n" -ge 1 ] || die "N must be at least 1"
command -v haproxy >/dev/null || die "haproxy is not installed (Debian: apt-get install haproxy)"

mkdir -p "$run"
run=$(cd "$run" && pwd)

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
for f in "$run"/replica-*.pid "$run"/lb.pid; do
  [ -e "$f" ] || continue
  alive "$f" && die "a cluster is already running in $run (run cluster/down.sh first)"
done
rm -rf "$run"/replica-* "$run"/lb.pid "$run"/lb.log "$run"/haproxy.cfg "$run"/ports.env \
  "$run"/kubeconfig

# The binary.
if [ -n "${RAFTER_BIN:-}" ]; then
  bin=$RAFTER_BIN
else
  (cd "$root" && cargo build --bin rafter >&2)
  target=${CARGO_TARGET_DIR:-}
  if [ -z "$target" ]; then
    target=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
      sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
  fi
  bin=$target/debug/rafter
fi
[ -x "$bin" ] || die "no rafter binary at $bin"
serve_help=$("$bin" serve --help)
supports() { grep -q -- "$1" <<<"$serve_help"; }
if [ "$n" -gt 1 ] && ! supports --initial-members; then
  die "$bin cannot run several replicas (no --initial-members flag)"
fi

# Free loopback ports, all distinct.
used=" "
port_free() {
  if command -v ss >/dev/null; then
    [ -z "$(ss -Htan "sport = :$1" 2>/dev/null)" ]
  else
    ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
  fi
}
free_port() {
  local p
  for _ in $(seq 1 200); do
    # Below the kernel's ephemeral range (32768-60999 by default), so an outgoing connection
    # cannot take the port between this check and the bind.
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 12000))
    case $used in *" $p "*) continue ;; esac
    if port_free "$p"; then
      used="$used$p "
      echo "$p"
      return
    fi
  done
  die "no free port found"
}
declare -a API PEER ADMIN
lb=$(free_port)
for i in $(seq 1 "$n"); do
  API[i]=$(free_port)
  PEER[i]=$(free_port)
  ADMIN[i]=$(free_port)
done
members=""
for i in $(seq 1 "$n"); do members+="$i=127.0.0.1:${PEER[i]},"; done
members=${members%,}

{
  echo "LB_API=127.0.0.1:$lb"
  for i in $(seq 1 "$n"); do
    echo "REPLICA_${i}_API=127.0.0.1:${API[i]}"
    echo "REPLICA_${i}_PEER=127.0.0.1:${PEER[i]}"
    echo "REPLICA_${i}_ADMIN=127.0.0.1:${ADMIN[i]}"
  done
} >"$run/ports.env"

stop_all() { "$here/down.sh" >/dev/null 2>&1 || true; }

start_replica() {
  local i=$1
  local args=(serve --data-dir "$run/replica-$i" --node-id "$i"
    --listen "127.0.0.1:${API[i]}" --admin-listen "127.0.0.1:${ADMIN[i]}")
  if supports --peer-listen; then args+=(--peer-listen "127.0.0.1:${PEER[i]}"); fi
  if supports --initial-members; then args+=(--initial-members "$members"); fi
  # shellcheck disable=SC2206
  args+=(${RAFTER_ARGS:-})
  # setsid: the replicas outlive this script and ignore the terminal's Ctrl-C.
  RAFTER_LOG=${RAFTER_LOG:-warn} setsid "$bin" "${args[@]}" \
    >"$run/replica-$i.log" 2>&1 </dev/null &
  echo $! >"$run/replica-$i.pid"
}

deadline=$((SECONDS + timeout_s))
wait_for() { # description, command...
  local what=$1
  shift
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      stop_all
      die "timed out after ${timeout_s}s waiting for $what"
    fi
    for f in "$run"/replica-*.pid; do
      if [ -e "$f" ] && ! alive "$f"; then
        local r
        r=$(basename "$f" .pid)
        echo "up.sh: $r exited; last lines of $run/$r.log:" >&2
        tail -n 20 "$run/$r.log" >&2 || true
        stop_all
        exit 1
      fi
    done
    sleep 0.2
  done
}

# Replica 1 creates the cluster CA, the front-proxy CA and the service-account signing key;
# the others get a copy before their first start, so every replica's certificates (and the kubeconfig) chain to
# one CA and every replica verifies the tokens any of them issued.
start_replica 1
wait_for "replica 1's CA" test -s "$run/replica-1/ca.key"
if "$bin" serve --help | grep -q -- --service-account-signing-key-file; then
  wait_for "replica 1's service-account key" test -s "$run/replica-1/sa.key"
fi
sleep 0.2
for i in $(seq 2 "$n"); do
  mkdir -p "$run/replica-$i"
  cp "$run/replica-1/ca.crt" "$run/replica-1/ca.key" "$run/replica-$i/"
  chmod 600 "$run/replica-$i/ca.key"
  if [ -s "$run/replica-1/peer-ca.key" ]; then
    cp "$run/replica-1/peer-ca.crt" "$run/replica-1/peer-ca.key" "$run/replica-$i/"
    chmod 600 "$run/replica-$i/peer-ca.key"
  fi
  # The aggregator's front-proxy CA: extension servers trust one CA for every replica's proxy.
  if [ -s "$run/replica-1/front-proxy-ca.key" ]; then
    cp "$run/replica-1/front-proxy-ca.crt" "$run/replica-1/front-proxy-ca.key" "$run/replica-$i/"
    chmod 600 "$run/replica-$i/front-proxy-ca.key"
  fi
  if [ -s "$run/replica-1/sa.key" ]; then
    cp "$run/replica-1/sa.key" "$run/replica-$i/"
    chmod 600 "$run/replica-$i/sa.key"
  fi
  start_replica "$i"
done

# HAProxy from the documented template.
servers=""
for i in $(seq 1 "$n"); do servers+="    server replica-$i 127.0.0.1:${API[i]}"$'\n'; done
# The template binds with `noreuseport`: a port another cluster's balancer took meanwhile
# (tests start clusters in parallel) fails the start, and another port is tried.
for attempt in 1 2 3 4 5; do
  awk -v bind="127.0.0.1:$lb" -v servers="$servers" '
    /^@SERVERS@$/ { printf "%s", servers; next }
    { gsub(/@LB_BIND@/, bind); print }' "$root/deploy/haproxy.cfg" >"$run/haproxy.cfg"
  haproxy -c -q -f "$run/haproxy.cfg" || { stop_all; die "invalid $run/haproxy.cfg"; }
  if haproxy -f "$run/haproxy.cfg" -D -p "$run/lb.pid" >"$run/lb.log" 2>&1; then
    break
  fi
  [ "$attempt" -lt 5 ] || { stop_all; die "haproxy failed to start (see $run/lb.log)"; }
  echo "up.sh: haproxy could not bind 127.0.0.1:$lb; trying another port" >&2
  lb=$(free_port)
  sed -i "s#^LB_API=.*#LB_API=127.0.0.1:$lb#" "$run/ports.env"
done

# The kubeconfig of the load balancer (replica 1's admin identity).
wait_for "replica 1's admin kubeconfig" test -s "$run/replica-1/admin.kubeconfig"
sed "s#^\(    server:\) .*#\1 https://127.0.0.1:$lb#" "$run/replica-1/admin.kubeconfig" \
  >"$run/kubeconfig"
chmod 600 "$run/kubeconfig"

ready() { # host:port
  if command -v curl >/dev/null; then
    curl -sf --max-time 2 --cacert "$run/replica-1/ca.crt" \
      --cert "$run/replica-1/admin.crt" --key "$run/replica-1/admin.key" \
      "https://$1/readyz" >/dev/null 2>&1
  else
    timeout 5 kubectl --kubeconfig "$run/kubeconfig" --server "https://$1" \
      get --raw /readyz >/dev/null 2>&1
  fi
}
for i in $(seq 1 "$n"); do wait_for "replica $i to be ready" ready "127.0.0.1:${API[i]}"; done
wait_for "the load balancer" ready "127.0.0.1:$lb"

echo "rafter cluster: $n replica(s) behind HAProxy on https://127.0.0.1:$lb (run folder $run)" >&2
echo "  kubectl --kubeconfig $run/kubeconfig get ns" >&2
echo "  $bin admin status --endpoint 127.0.0.1:${ADMIN[1]} --data-dir $run/replica-1" >&2
echo "$run/kubeconfig"

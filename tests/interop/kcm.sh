#!/usr/bin/env bash
# Interop: the real kube-controller-manager and kube-scheduler against a three-replica Rafter
# cluster (cluster/up.sh 3, HAProxy in front). See tests/interop/README.md.
#
# usage: tests/interop/kcm.sh [--build-only]
#
# 1. Build (cached): Debian bookworm's `kubernetes` source package (Kubernetes 1.20.2), built
#    with Debian's Go 1.19 in GOPATH mode by the source's own `make WHAT=...`; the binaries
#    land in $RAFTER_INTEROP_DIR/bin. Skipped when they are there.
# 2. Run: cluster/up.sh 3, a Node object kept Ready by a stand-in kubelet loop (node status
#    and Lease heartbeats; bound Pending pods marked Running/Ready; terminating pods finished
#    with a zero grace period, as a kubelet does), kube-controller-manager and kube-scheduler
#    with leader election, through the load balancer's kubeconfig.
# 3. Checks a-f, each PASS/FAIL with a bounded wait; exit status 1 if any failed.
#
# Environment:
#   RAFTER_BIN          rafter binary (default $HOME/.cache/rafter-target/debug/rafter)
#   RAFTER_INTEROP_DIR  Kubernetes source and built binaries (default $HOME/.cache/rafter-interop)
#   RAFTER_RUN_DIR      run folder for the cluster and all logs (default: a new /tmp folder)
#   RAFTER_CONTROLLERS  value for `rafter serve --controllers` when the binary has that flag
#                       (default '*,-namespace', so kube-controller-manager empties namespaces)
#   KUBE_CONTENT_TYPE   --kube-api-content-type of both components (default: their own,
#                       application/vnd.kubernetes.protobuf)
#   KCM_ARGS, SCHED_ARGS  extra flags for kube-controller-manager / kube-scheduler (e.g.
#                       KCM_ARGS='--kube-api-qps=200 --kube-api-burst=400'; the default 20 QPS
#                       bounds check f: about 2 requests per dependent)
#   CHECKS              the checks to run, e.g. "a f" (default: all, in the order a b1 b2 b3 c d f e)
#   GC_COUNT            dependents in check f (default 1000)
#   GC_TIMEOUT          seconds check f waits for them to go (default 300)
#   BIN_WAIT            seconds to wait for RAFTER_BIN to appear (default 2400)
# Helpers called only through wait_for look unreachable to shellcheck:
# shellcheck disable=SC2317
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
interop=${RAFTER_INTEROP_DIR:-$HOME/.cache/rafter-interop}
rafter=${RAFTER_BIN:-$HOME/.cache/rafter-target/debug/rafter}
gc_count=${GC_COUNT:-1000}
gc_timeout=${GC_TIMEOUT:-300}
go_root=/usr/lib/go-1.19
node="interop-node-1"

log() { printf '%s %s\n' "$(date +%T)" "$*" >&2; }
die() { log "kcm.sh: $*"; exit 2; }

# ---------------------------------------------------------------------------------------------
# 1. Build
# ---------------------------------------------------------------------------------------------

# The Go 1.19 build of this 1.20 tree needs no source patch; a patch would be applied here,
# generated at run time (sed), before `make`.
patch_source() { :; }

build_kube() {
  local bin=$interop/bin
  if [ -x "$bin/kube-controller-manager" ] && [ -x "$bin/kube-scheduler" ]; then
    log "using cached $("$bin/kube-controller-manager" --version 2>/dev/null) binaries in $bin"
    return
  fi
  [ "$(id -u)" = 0 ] || die "the build step installs Debian packages: run as root"
  local start=$SECONDS
  # Source packages: a deb-src twin of the bookworm entry of debian.sources.
  local srcs=/etc/apt/sources.list.d/debian-src.sources
  if [ ! -e "$srcs" ]; then
    log "adding $srcs"
    cat >"$srcs" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  fi
  log "apt-get update; installing golang-1.19-go dpkg-dev rsync jq"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q golang-1.19-go dpkg-dev rsync jq \
    >/dev/null
  mkdir -p "$interop"
  local src
  src=$(find "$interop" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
  if [ -z "$src" ]; then
    log "apt-get source kubernetes (into $interop)"
    (cd "$interop" && apt-get source -q kubernetes >"$interop/apt-source.log" 2>&1) ||
      die "apt-get source kubernetes failed (see $interop/apt-source.log)"
    src=$(find "$interop" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
  fi
  [ -n "$src" ] || die "no kubernetes-* source folder in $interop"
  patch_source "$src"
  # The tree's own build: hack/lib/init.sh sets GO111MODULE=off, hack/lib/golang.sh makes
  # GOPATH=_output/local/go with src/k8s.io/kubernetes -> the tree (so vendor/ is used) and
  # generates the build-time files (zz_generated.openapi.go, bindata) first. Version
  # stamps come from the tarball's `git archive` placeholders (v1.20.2).
  log "building cmd/kube-controller-manager cmd/kube-scheduler in $src (Go 1.19, GOPATH mode)"
  (cd "$src" && env PATH="$go_root/bin:$PATH" CGO_ENABLED=0 GOFLAGS= \
    make WHAT="cmd/kube-controller-manager cmd/kube-scheduler") >"$interop/build.log" 2>&1 ||
    die "build failed (see $interop/build.log)"
  mkdir -p "$bin"
  cp "$src/_output/bin/kube-controller-manager" "$src/_output/bin/kube-scheduler" "$bin/"
  "$bin/kube-controller-manager" --version >"$bin/VERSION"
  log "built $(cat "$bin/VERSION") in $((SECONDS - start)) s: $bin"
}

build_kube
[ "${1:-}" = --build-only ] && exit 0
kcm_bin=$interop/bin/kube-controller-manager
sched_bin=$interop/bin/kube-scheduler

# ---------------------------------------------------------------------------------------------
# 2. Run: cluster, node, components
# ---------------------------------------------------------------------------------------------

for t in jq curl haproxy; do
  command -v "$t" >/dev/null ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$t" >/dev/null || die "no $t"
done
command -v kubectl >/dev/null || die "kubectl is not installed"
waited=0
until [ -x "$rafter" ]; do
  [ "$waited" -ge "${BIN_WAIT:-2400}" ] && die "no rafter binary at $rafter"
  log "waiting for $rafter ..."
  sleep 60
  waited=$((waited + 60))
done

run=${RAFTER_RUN_DIR:-$(mktemp -d /tmp/rafter-interop.XXXXXX)}
mkdir -p "$run"
run=$(cd "$run" && pwd)
export RAFTER_RUN_DIR=$run RAFTER_BIN=$rafter
summary=$run/summary.txt
: >"$summary"

bg_pids=()
cleanup() {
  local rc=$?
  set +e
  for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
  sleep 1
  for p in "${bg_pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  "$root/cluster/down.sh" >/dev/null 2>&1
  log "stopped; logs in $run"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Rafter's own controllers: turned off (except the bootstrap) when the binary can.
rafter_args=${RAFTER_ARGS:-}
own_controllers="Rafter's own namespace controller also runs (rafter serve has no --controllers flag)"
if "$rafter" serve --help | grep -q -- '--controllers'; then
  want=${RAFTER_CONTROLLERS:-'*,-namespace,-garbage-collector'}
  if "$rafter" serve --controllers "$want" --help >/dev/null 2>&1; then
    rafter_args="$rafter_args --controllers=$want"
    own_controllers="rafter serve --controllers=$want"
  else
    own_controllers="rafter serve --controllers rejects '$want': Rafter's own controllers run"
  fi
fi
log "$own_controllers"

log "starting cluster/up.sh 3 in $run"
kc=$(RAFTER_ARGS=$rafter_args "$root/cluster/up.sh" 3 2>"$run/up.log" | tail -n 1) ||
  { cat "$run/up.log" >&2; die "cluster/up.sh failed"; }
# shellcheck disable=SC1091
. "$run/ports.env"

k() { kubectl --kubeconfig "$kc" --request-timeout=20s "$@"; }
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }
now_micro() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }

# wait_for SECONDS COMMAND...: polls every second; 1 when it never held.
wait_for() {
  local end=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -ge "$end" ] && return 1
    sleep 1
  done
}

# The Node, as a kubelet registers it.
boot=$(now)
node_status() {
  cat <<EOF
{"status":{"capacity":{"cpu":"8","memory":"16Gi","pods":"110"},
 "allocatable":{"cpu":"8","memory":"16Gi","pods":"110"},
 "conditions":[{"type":"Ready","status":"True","reason":"KubeletReady",
   "message":"stand-in kubelet of tests/interop/kcm.sh","lastHeartbeatTime":"$(now)",
   "lastTransitionTime":"$boot"}],
 "addresses":[{"type":"InternalIP","address":"127.0.0.1"},{"type":"Hostname","address":"$node"}],
 "nodeInfo":{"machineID":"","systemUUID":"","bootID":"","kernelVersion":"","osImage":"",
   "containerRuntimeVersion":"","kubeletVersion":"v1.20.2","kubeProxyVersion":"v1.20.2",
   "operatingSystem":"linux","architecture":"amd64"}}}
EOF
}
{
  echo '{"apiVersion":"v1","kind":"Node","metadata":{"name":"'$node'","labels":{'
  echo '"kubernetes.io/hostname":"'$node'","kubernetes.io/os":"linux","kubernetes.io/arch":"amd64"}},'
  node_status | sed '1s/^{//'
} >"$run/node.json"
k apply -f "$run/node.json" >/dev/null || die "cannot create Node $node"
k get ns kube-node-lease >/dev/null 2>&1 || k create ns kube-node-lease >/dev/null
k apply -f - >/dev/null <<EOF || die "cannot create the node Lease"
{"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
 "metadata":{"name":"$node","namespace":"kube-node-lease"},
 "spec":{"holderIdentity":"$node","leaseDurationSeconds":40,"renewTime":"$(now_micro)"}}
EOF

# The stand-in kubelet: every 2 s, pods on the node; every 10 s, node status and Lease.
pod_ready='{"status":{"phase":"Running","podIP":"10.244.0.10","hostIP":"127.0.0.1",
 "startTime":"NOW","conditions":[{"type":"Initialized","status":"True"},
 {"type":"Ready","status":"True"},{"type":"ContainersReady","status":"True"},
 {"type":"PodScheduled","status":"True"}]}}'
kubelet() {
  set +e # keeps going through API errors (a replica kill)
  local tick=0
  while true; do
    if [ $((tick % 5)) = 0 ]; then
      k patch node "$node" --subresource=status --type=merge -p "$(node_status)" >/dev/null ||
        echo "$(date +%T) node status heartbeat failed"
      k -n kube-node-lease patch lease "$node" --type=merge \
        -p '{"spec":{"renewTime":"'"$(now_micro)"'"}}' >/dev/null ||
        echo "$(date +%T) node lease heartbeat failed"
    fi
    tick=$((tick + 1))
    k get pods -A -o json 2>/dev/null | jq -r --arg n "$node" '.items[]
        | select(.spec.nodeName == $n)
        | if .metadata.deletionTimestamp then "delete \(.metadata.namespace) \(.metadata.name)"
          elif (.status.phase // "Pending") == "Pending"
          then "start \(.metadata.namespace) \(.metadata.name)" else empty end' |
      while read -r what ns name; do
        case $what in
          start)
            k -n "$ns" patch pod "$name" --subresource=status --type=merge \
              -p "${pod_ready//NOW/$(now)}" >/dev/null && echo "$(date +%T) started $ns/$name" ;;
          delete)
            # A kubelet confirms the deletion with a zero grace period once containers stop.
            k -n "$ns" delete pod "$name" --grace-period=0 --force --wait=false \
              >/dev/null 2>&1 && echo "$(date +%T) finished $ns/$name" ;;
        esac
      done
    sleep 2
  done
}
kubelet >"$run/kubelet.log" 2>&1 &
bg_pids+=($!)

# The components. Flags are Kubernetes 1.20's: no serving (--port=0, --secure-port=0), so no
# authentication/authorization delegation lookups; Leases for leader election; cloud
# controllers off; the cluster CA signs CSRs. Client requests and their status codes are
# logged (--vmodule=round_trippers=6) so 4xx/5xx answers show up in the logs. KCM_ARGS and
# SCHED_ARGS are split into words on purpose.
content_type=()
[ -n "${KUBE_CONTENT_TYPE:-}" ] && content_type=(--kube-api-content-type="$KUBE_CONTENT_TYPE")
# shellcheck disable=SC2086
"$kcm_bin" --kubeconfig="$kc" --leader-elect=true --leader-elect-resource-lock=leases \
  --port=0 --secure-port=0 --use-service-account-credentials=false \
  --controllers='*,-cloud-node-lifecycle,-route,-service' \
  --cluster-signing-cert-file="$run/replica-1/ca.crt" \
  --cluster-signing-key-file="$run/replica-1/ca.key" \
  --node-monitor-grace-period=60s --pod-eviction-timeout=5m \
  "${content_type[@]}" --v=2 --vmodule=round_trippers=6 ${KCM_ARGS:-} \
  >"$run/kcm.log" 2>&1 &
kcm_pid=$!
bg_pids+=("$kcm_pid")
# PodDisruptionBudget=false: 1.20's preemption plugin lists policy/v1beta1 PDBs, which
# Rafter (like kube >= 1.25) does not serve; the informer would never sync.
# shellcheck disable=SC2086
"$sched_bin" --kubeconfig="$kc" --leader-elect=true --leader-elect-resource-lock=leases \
  --port=0 --secure-port=0 --feature-gates=PodDisruptionBudget=false \
  "${content_type[@]}" --v=2 --vmodule=round_trippers=6 ${SCHED_ARGS:-} \
  >"$run/scheduler.log" 2>&1 &
sched_pid=$!
bg_pids+=("$sched_pid")

lease_holder() { k -n kube-system get lease "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
lease_renew() { k -n kube-system get lease "$1" -o jsonpath='{.spec.renewTime}' 2>/dev/null; }
has_holder() { [ -n "$(lease_holder "$1")" ]; }
log "waiting for the components' leader Leases"
wait_for 90 has_holder kube-controller-manager || log "no kube-controller-manager Lease holder"
wait_for 90 has_holder kube-scheduler || log "no kube-scheduler Lease holder"
gc_synced() { grep -q 'all resource monitors have synced' "$run/kcm.log"; }
wait_for 120 gc_synced || log "garbage collector monitors have not synced within 120 s"

# ---------------------------------------------------------------------------------------------
# 3. Checks
# ---------------------------------------------------------------------------------------------

failed=0
note() { printf '      %s\n' "$*" >&2; }
# evidence FILE PATTERN: the last matching lines of a log, indented.
evidence() {
  local lines
  lines=$(grep -E "$2" "$1" 2>/dev/null | tail -n "${3:-6}" | cut -c1-400) || true
  [ -n "$lines" ] && printf '%s\n' "$lines" | sed "s|^|      $(basename "$1"): |" >&2
  return 0
}
check() { # ID TITLE FUNCTION
  case " ${CHECKS:-a b1 b2 b3 c d f e} " in *" $1 "*) ;; *) return 0 ;; esac
  log "check $1: $2"
  local out
  if out=$("$3" 2>&1); then
    printf 'PASS %s: %s\n' "$1" "$2" | tee -a "$summary"
  else
    printf 'FAIL %s: %s\n' "$1" "$2" | tee -a "$summary"
    failed=$((failed + 1))
  fi
  [ -n "$out" ] && printf '%s\n' "$out" | tee -a "$summary"
  return 0
}

json() { k "$@" -o json 2>/dev/null; }
gone() { # kubectl ARGS...: the object is NotFound
  local out
  out=$(k "$@" 2>&1) && return 1
  grep -q NotFound <<<"$out"
}
# pods_of NS RS: names of the live pods controlled by ReplicaSet RS.
pods_of() {
  json -n "$1" get pods | jq -r --arg rs "$2" '.items[]
    | select(.metadata.deletionTimestamp == null)
    | select(any(.metadata.ownerReferences[]?; .kind == "ReplicaSet" and .name == $rs))
    | .metadata.name'
}
# rs_of NS DEPLOY: the ReplicaSet controlled by Deployment DEPLOY.
rs_of() {
  json -n "$1" get rs | jq -r --arg d "$2" '.items[]
    | select(any(.metadata.ownerReferences[]?;
        .kind == "Deployment" and .name == $d and .controller == true))
    | .metadata.name' | head -n 1
}
two_bound_pods() { # NS RS
  local p
  p=$(json -n "$1" get pods | jq --arg rs "$2" --arg n "$node" '[.items[]
    | select(.metadata.deletionTimestamp == null)
    | select(any(.metadata.ownerReferences[]?; .kind == "ReplicaSet" and .name == $rs))
    | select(.spec.nodeName == $n)] | length')
  [ "${p:-0}" = 2 ]
}
has_rs() { [ -n "$(rs_of "$1" "$2")" ]; }
deploy() { # NS NAME: a 2-replica Deployment
  k -n "$1" create deployment "$2" --image=registry.invalid/pause:3.2 --replicas=2 >/dev/null
}
# rolled_out NS NAME: RS, 2 scheduled pods; prints the RS name.
rolled_out() {
  wait_for 60 has_rs "$1" "$2" || { note "no ReplicaSet owned by deployment $1/$2 in 60 s"; return 1; }
  local rs
  rs=$(rs_of "$1" "$2")
  if ! wait_for 60 two_bound_pods "$1" "$rs"; then
    note "replicaset $rs: pods (name nodeName phase):"
    json -n "$1" get pods | jq -r '.items[] | "        \(.metadata.name) \(.spec.nodeName // "-") \(.status.phase // "-")"' >&2
    return 1
  fi
  echo "$rs"
}
available() { # NS NAME N
  [ "$(k -n "$1" get deploy "$2" -o jsonpath='{.status.availableReplicas}')" = "$3" ]
}

check_a() {
  local ns=interop-a rs
  k create ns $ns >/dev/null
  deploy $ns web || return 1
  rs=$(rolled_out $ns web) || { evidence "$run/scheduler.log" '^E|40[0-9] |50[0-9] '; evidence "$run/kcm.log" 'replica_set|deployment_controller|^E' 4; return 1; }
  note "replicaset $rs, pods bound to $node: $(pods_of $ns "$rs" | tr '\n' ' ')"
  evidence "$run/scheduler.log" 'Successfully bound|Attempting to bind|POST .*binding' 2
  if ! wait_for 60 available $ns web 2; then
    note "deployment web: availableReplicas never reached 2 (pods marked Ready by the stand-in kubelet)"
    note "$(k -n $ns get deploy web -o jsonpath='{.status}')"
    return 1
  fi
  note "deployment web: 2/2 available"
}

# b. Garbage collection modes on Deployment -> ReplicaSet -> Pods.
gcns="interop-gc-modes"
check_b_background() {
  k create ns $gcns >/dev/null 2>&1 || true
  deploy $gcns bg || return 1
  local rs
  rs=$(rolled_out $gcns bg) || return 1
  k -n "$gcns" delete deploy bg --cascade=background --wait=false >/dev/null || return 1
  wait_for 30 gone -n $gcns get deploy bg || { note "deployment still there after 30 s"; return 1; }
  if ! wait_for 90 gone -n $gcns get rs "$rs"; then
    note "replicaset $rs still there 90 s after the deployment went"
    evidence "$run/kcm.log" 'garbagecollector|DELETE .*replicasets' 6
    return 1
  fi
  local left
  no_pods() {
    local j
    j=$(json -n "$gcns" get pods) || return 1
    ! jq -e --arg rs "$rs" 'any(.items[]; any(.metadata.ownerReferences[]?; .name == $rs))' \
      <<<"$j" >/dev/null
  }
  if ! wait_for 90 no_pods; then
    left=$(json -n "$gcns" get pods | jq -r '[.items[].metadata.name] | join(" ")')
    note "pods of $rs still there 90 s after it went: $left"
    evidence "$run/kcm.log" 'garbagecollector|DELETE .*pods' 6
    return 1
  fi
  note "deployment, replicaset $rs and its pods are gone"
}

hold=interop.rafter.dev/hold
check_b_foreground() {
  deploy $gcns fg || return 1
  local rs pod
  rs=$(rolled_out $gcns fg) || return 1
  pod=$(pods_of $gcns "$rs" | head -n 1)
  # A pod finalizer of our own keeps the chain in its foreground phase until we lift it.
  k -n "$gcns" patch pod "$pod" --type=merge -p '{"metadata":{"finalizers":["'$hold'"]}}' >/dev/null ||
    return 1
  k -n "$gcns" delete deploy fg --cascade=foreground --wait=false >/dev/null || return 1
  fg_waiting() {
    json -n "$gcns" get deploy fg | jq -e '.metadata.deletionTimestamp != null
      and any(.metadata.finalizers[]?; . == "foregroundDeletion")' >/dev/null
  }
  pod_terminating() {
    json -n "$gcns" get pod "$pod" | jq -e '.metadata.deletionTimestamp != null' >/dev/null
  }
  local ok=0
  if ! wait_for 30 fg_waiting; then
    note "deployment fg has no deletionTimestamp + foregroundDeletion finalizer"; ok=1
  elif ! wait_for 60 pod_terminating; then
    note "held pod $pod was never deleted by the garbage collector (60 s)"
    note "deployment: $(json -n "$gcns" get deploy fg | jq -c '.metadata | {deletionTimestamp, finalizers}')"
    note "replicaset: $(json -n "$gcns" get rs "$rs" | jq -c '.metadata | {deletionTimestamp, finalizers}')"
    evidence "$run/kcm.log" 'garbagecollector|DELETE .*(replicasets|pods)' 6
    ok=1
  else
    sleep 3
    if fg_waiting; then
      note "while pod $pod is held: deployment waits with finalizer foregroundDeletion" \
        "(replicaset: $(json -n "$gcns" get rs "$rs" | jq -c '.metadata.finalizers'))"
    else
      note "deployment went before its dependents"; ok=1
    fi
  fi
  k -n "$gcns" patch pod "$pod" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
  [ $ok = 0 ] || return 1
  if ! wait_for 90 gone -n $gcns get deploy fg; then
    note "deployment fg still there 90 s after its last dependent was released:"
    note "$(json -n "$gcns" get deploy fg | jq -c '.metadata | {deletionTimestamp, finalizers}')"
    note "replicaset: $(json -n "$gcns" get rs "$rs" 2>/dev/null | jq -c '.metadata | {deletionTimestamp, finalizers}')"
    evidence "$run/kcm.log" 'garbagecollector|PATCH .*|DELETE .*' 6
    return 1
  fi
  wait_for 30 gone -n $gcns get rs "$rs" || { note "replicaset $rs outlived its deployment"; return 1; }
  note "deployment went after replicaset $rs and its pods"
}

check_b_orphan() {
  deploy $gcns orphan || return 1
  local rs
  rs=$(rolled_out $gcns orphan) || return 1
  k -n "$gcns" delete deploy orphan --cascade=orphan --wait=false >/dev/null || return 1
  if ! wait_for 60 gone -n $gcns get deploy orphan; then
    note "deployment orphan still there after 60 s:"
    note "$(json -n "$gcns" get deploy orphan | jq -c '.metadata | {deletionTimestamp, finalizers}')"
    note "replicaset ownerReferences: $(json -n "$gcns" get rs "$rs" | jq -c '.metadata.ownerReferences')"
    evidence "$run/kcm.log" 'garbagecollector|orphan|PATCH .*replicasets' 6
    return 1
  fi
  sleep 5
  local refs n
  refs=$(json -n "$gcns" get rs "$rs" | jq -c '.metadata.ownerReferences // []') ||
    { note "replicaset $rs was deleted"; return 1; }
  n=$(pods_of $gcns "$rs" | wc -l)
  note "replicaset $rs ownerReferences: $refs; its pods: $n"
  [ "$refs" = "[]" ] && [ "$n" = 2 ]
  local rc=$?
  k -n "$gcns" delete rs "$rs" --wait=false >/dev/null 2>&1
  return $rc
}

# c. Namespace deletion.
check_c() {
  local ns=interop-nsdel
  note "$own_controllers"
  k create ns $ns >/dev/null || return 1
  k -n $ns create configmap one --from-literal=a=b >/dev/null || return 1
  k -n $ns create configmap two --from-literal=a=b >/dev/null || return 1
  deploy $ns web || return 1
  rolled_out $ns web >/dev/null || return 1
  k delete ns $ns --wait=false >/dev/null || return 1
  if ! wait_for 120 gone get ns $ns; then
    note "namespace $ns still there after 120 s: $(json get ns $ns | jq -c '.status')"
    note "left: $(k -n $ns get all,cm -o name 2>/dev/null | tr '\n' ' ')"
    evidence "$run/kcm.log" 'namespace|DELETE .*namespaces/'$ns 8
    return 1
  fi
  note "namespace $ns and its contents are gone"
}

# d. ReplicationController without spec.selector.
check_d() {
  local ns=interop-rc
  k create ns $ns >/dev/null || return 1
  if ! k -n $ns create -f - >/dev/null 2>"$run/rc-create.err" <<'EOF'
{"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"nosel"},
 "spec":{"replicas":3,"template":{"metadata":{"labels":{"app":"nosel"}},
   "spec":{"containers":[{"name":"c","image":"registry.invalid/pause:3.2"}]}}}}
EOF
  then
    note "create failed: $(cat "$run/rc-create.err")"
    return 1
  fi
  note "stored spec.selector: $(k -n $ns get rc nosel -o jsonpath='{.spec.selector}')"
  sleep 20
  local live all
  live=$(json -n $ns get pods | jq '[.items[] | select(.metadata.deletionTimestamp == null)] | length')
  all=$(json -n $ns get pods | jq '.items | length')
  note "after 20 s: $live live pods ($all including terminating)," \
    "rc status: $(k -n $ns get rc nosel -o jsonpath='{.status}')"
  if [ "$live" != 3 ]; then
    evidence "$run/kcm.log" 'replication|POST .*namespaces/'$ns'/pods' 4
    return 1
  fi
}

# f. Garbage collector throughput.
check_f() {
  local ns=interop-gc-scale uid start
  k create ns $ns >/dev/null || return 1
  k -n $ns create configmap owner --from-literal=role=owner >/dev/null || return 1
  uid=$(k -n $ns get cm owner -o jsonpath='{.metadata.uid}')
  jq -n --arg uid "$uid" --argjson n "$gc_count" '{apiVersion: "v1", kind: "List",
    items: [range($n) | {apiVersion: "v1", kind: "ConfigMap",
      metadata: {name: "dep-\(.)", labels: {interop: "dep"},
        ownerReferences: [{apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: $uid,
          blockOwnerDeletion: false}]}, data: {i: "\(.)"}}]}' >"$run/dependents.json"
  start=$SECONDS
  k -n $ns create -f "$run/dependents.json" >/dev/null 2>"$run/dependents.err" ||
    { note "creating dependents failed: $(tail -n 3 "$run/dependents.err")"; return 1; }
  count() { # -1 when the list failed
    local o
    o=$(k -n $ns get cm -l interop=dep -o name 2>/dev/null) || { echo -1; return 0; }
    if [ -z "$o" ]; then echo 0; else printf '%s\n' "$o" | wc -l; fi
  }
  local n
  n=$(count)
  note "created $n dependents in $((SECONDS - start)) s"
  k -n $ns delete cm owner --cascade=background --wait=false >/dev/null || return 1
  local t0 ms last=$n stalled=$SECONDS
  t0=$(date +%s%3N)
  while [ "$n" != 0 ]; do
    sleep 1
    n=$(count)
    if [ "$n" -ge 0 ] && [ "$n" -lt "$last" ]; then last=$n; stalled=$SECONDS; fi
    if [ $((SECONDS - stalled)) -ge 60 ] || [ $(($(date +%s%3N) - t0)) -gt $((gc_timeout * 1000)) ]; then
      note "$last of $gc_count dependents left (no progress for $((SECONDS - stalled)) s)"
      evidence "$run/kcm.log" 'garbagecollector|DELETE .*configmaps/dep-' 6
      return 1
    fi
  done
  ms=$(($(date +%s%3N) - t0))
  gc_seconds=$((ms / 1000)).$(printf '%03d' $((ms % 1000)))
  note "garbage collector deleted $gc_count dependents in $gc_seconds s (polled every 1 s)"
  echo "gc_seconds=$gc_seconds" >"$run/gc-seconds"
}

# e. Leader election of both components across a Rafter leader kill.
status_json() { # replica index
  local ep="REPLICA_$1_ADMIN"
  "$rafter" admin status -o json --timeout 5 --endpoint "${!ep}" --data-dir "$run/replica-$1" 2>/dev/null
}
raft_leader() { # [EXCEPT]: the leader named by a replica other than EXCEPT, if not EXCEPT
  local i l
  for i in 1 2 3; do
    [ "$i" = "${1:-}" ] && continue
    l=$(status_json "$i" | jq -r '.leader // empty') || continue
    [ -n "$l" ] && [ "$l" != "${1:-}" ] && { echo "$l"; return 0; }
  done
  return 1
}
renewed_after() { # LEASE EPOCH
  local r
  r=$(lease_renew "$1") && [ -n "$r" ] && [ "$(date -d "$r" +%s)" -gt "$2" ]
}
check_e() {
  local leader pid t_kill h_kcm h_sched ok=0
  leader=$(raft_leader) || { note "no Raft leader found"; return 1; }
  h_kcm=$(lease_holder kube-controller-manager)
  h_sched=$(lease_holder kube-scheduler)
  note "before: raft leader $leader; kcm lease holder '$h_kcm' renewTime $(lease_renew kube-controller-manager); scheduler holder '$h_sched' renewTime $(lease_renew kube-scheduler)"
  if [ -z "$h_kcm" ] || [ -z "$h_sched" ]; then note "a component holds no Lease"; return 1; fi
  pid=$(cat "$run/replica-$leader.pid")
  local -a cmd
  mapfile -d '' -t cmd <"/proc/$pid/cmdline"
  t_kill=$(date +%s)
  kill -9 "$pid"
  note "killed replica $leader (pid $pid, SIGKILL) at $(date -u -d @"$t_kill" +%T)"
  local new
  if wait_for 30 raft_leader "$leader"; then
    new=$(raft_leader "$leader")
    note "new raft leader: $new after $(($(date +%s) - t_kill)) s"
  else
    note "no new Raft leader within 30 s"; ok=1
  fi
  for l in kube-controller-manager kube-scheduler; do
    if wait_for 60 renewed_after $l "$((t_kill + 1))"; then
      note "$l lease renewed at $(lease_renew $l) ($(($(date +%s) - t_kill)) s after the kill)"
    else
      note "$l lease not renewed within 60 s of the kill: $(lease_renew $l)"; ok=1
    fi
  done
  sleep 10
  local t2=$(($(date +%s) - 8))
  for l in kube-controller-manager kube-scheduler; do
    renewed_after $l "$t2" || { note "$l lease stopped being renewed: $(lease_renew $l)"; ok=1; }
  done
  [ "$(lease_holder kube-controller-manager)" = "$h_kcm" ] ||
    { note "kcm lease holder changed: $(lease_holder kube-controller-manager)"; ok=1; }
  [ "$(lease_holder kube-scheduler)" = "$h_sched" ] ||
    { note "scheduler lease holder changed: $(lease_holder kube-scheduler)"; ok=1; }
  kill -0 "$kcm_pid" 2>/dev/null || { note "kube-controller-manager exited"; evidence "$run/kcm.log" 'leaderelection|lost|F[0-9]{4}' 5; ok=1; }
  kill -0 "$sched_pid" 2>/dev/null || { note "kube-scheduler exited"; evidence "$run/scheduler.log" 'leaderelection|lost|F[0-9]{4}' 5; ok=1; }
  evidence "$run/kcm.log" 'leaderelection.go' 3
  evidence "$run/scheduler.log" 'leaderelection.go' 3
  k create ns interop-e >/dev/null 2>&1 || true
  if deploy interop-e after-failover && rolled_out interop-e after-failover >/dev/null &&
    wait_for 60 available interop-e after-failover 2; then
    note "deployment after-failover rolled out (2/2 available)"
  else
    note "deployment after-failover did not roll out"; ok=1
  fi
  # The killed replica rejoins with its data (same command line), for what follows.
  RAFTER_LOG=${RAFTER_LOG:-warn} setsid "${cmd[@]}" >>"$run/replica-$leader.log" 2>&1 </dev/null &
  echo $! >"$run/replica-$leader.pid"
  note "restarted replica $leader (pid $!)"
  return $ok
}

check a "Deployment (2 replicas) -> ReplicaSet -> Pods bound by kube-scheduler" check_a
check b1 "GC: delete deploy --cascade=background removes ReplicaSet and Pods" check_b_background
check b2 "GC: delete deploy --cascade=foreground waits for dependents, then goes" check_b_foreground
check b3 "GC: delete deploy --cascade=orphan leaves ReplicaSet and Pods, ownerReferences removed" check_b_orphan
check c "kubectl delete ns empties and removes a namespace (configmaps, deployment)" check_c
check d "ReplicationController without spec.selector, replicas 3 -> exactly 3 pods after 20 s" check_d
check f "GC deletes $gc_count dependents of a deleted ConfigMap (background)" check_f
check e "kcm and scheduler Leases keep being renewed across a Raft leader kill; new Deployment rolls out" check_e

# Client-side record of the server's error answers (method, path shape, status).
errors() { # log
  grep -E 'round_trippers.go.*\] (GET|PUT|POST|PATCH|DELETE) .* [45][0-9][0-9] ' "$1" 2>/dev/null |
    sed -E 's/.*\] (GET|PUT|POST|PATCH|DELETE) https?:\/\/[^/]+([^? ]*)[^ ]* ([45][0-9][0-9] [A-Za-z ]*[a-zA-Z]) in .*/\1 \2 \3/' |
    awk '{ # names and namespaces out of the path: /api/v1/namespaces/NS/pods/NAME/status
      n = split($2, p, "/"); i = (p[2] == "api") ? 4 : 5
      if (p[i] == "namespaces" && n > i + 1) { p[i + 1] = "NS"; i += 2 }
      if (n > i) p[i + 1] = "NAME"
      path = ""; for (j = 2; j <= n; j++) path = path "/" p[j]
      $2 = path; print }' |
    sort | uniq -c | sort -rn | head -n 12
}
{
  echo "--- kube-controller-manager: 4xx/5xx answers (count, request, status)"
  errors "$run/kcm.log" || true
  echo "--- kube-scheduler: 4xx/5xx answers"
  errors "$run/scheduler.log" || true
  echo "--- kube-controller-manager: watches that ended with a decode error (count, kind)"
  grep -o 'unable to decode watch event: no kind \\"[A-Za-z]*\\" is registered for version \\"[^\\]*' \
    "$run/kcm.log" | sed 's/.*no kind \\"\([A-Za-z]*\)\\" is registered for version \\"/\1 /' |
    sort | uniq -c | sort -rn || true
  echo "--- kube-controller-manager: error lines (last 8)"
  grep -E '^E[0-9]{4}' "$run/kcm.log" | cut -c1-300 | tail -n 8 || true
  echo "--- kube-scheduler: error lines (last 5)"
  grep -E '^E[0-9]{4}' "$run/scheduler.log" | cut -c1-300 | tail -n 5 || true
} | tee -a "$summary"

gc_seconds=-
[ -s "$run/gc-seconds" ] && gc_seconds=$(sed 's/^gc_seconds=//' "$run/gc-seconds")
built=$(cat "$interop/bin/VERSION" 2>/dev/null || echo '?')
printf 'components: %s; gc %s dependents: %s s; %s failed; run folder %s\n' \
  "$built" "$gc_count" "$gc_seconds" "$failed" "$run" | tee -a "$summary"
[ "$failed" = 0 ]

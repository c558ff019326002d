#!/usr/bin/env bash
# Make the certificates and keys of an N-replica Rafter cluster with openssl (ECDSA P-256, as
# Rafter makes its own), laid out as kubeadm lays out a control plane's PKI.
#
# usage: deploy/tls/bootstrap.sh [options] N OUT_DIR LB_NAMES REPLICA_1_NAMES ... REPLICA_N_NAMES
#
#   N                 number of replicas
#   OUT_DIR           output folder (created; mode 0700)
#   LB_NAMES          the load balancer's names and IPs, comma-separated (lb.example.com,10.0.0.10);
#                     every serving certificate carries them, the admin kubeconfig uses the first
#   REPLICA_i_NAMES   replica i's names and IPs, comma-separated (rafter-1.example.com,10.0.0.11);
#                     its serving and peer certificates carry them
#
# options:
#   --force           replace existing keys and certificates (default: keep every file that
#                     exists, make only what is missing; a re-run changes nothing)
#   --server URL      API server URL of admin.kubeconfig (default https://<first LB name>:6443)
#   --cluster-name N  cluster name in admin.kubeconfig (default rafter)
#   --days D          lifetime of leaf certificates in days (default 365; CAs get 10 years)
#
# OUT_DIR receives (keys 0600, everything else 0644):
#   ca.crt ca.key                          cluster CA: serving certificates, client certificates
#   front-proxy-ca.crt front-proxy-ca.key  aggregator front-proxy CA (requestheader trust)
#   front-proxy-client.crt/.key            CN=front-proxy-client, the aggregator's identity
#   peer-ca.crt peer-ca.key                Raft peer CA (signs nothing else)
#   sa.key sa.pub                          service-account token signing key (PKCS#8) and its public key
#   admin.crt admin.key admin.kubeconfig   CN=admin, O=system:masters; kubeconfig for the load balancer
#   apiserver-kubelet-client.crt/.key      client certificate for kubelets (O=system:masters)
#   replica-<i>/                           what replica i's host needs, and no CA key:
#       server.crt server.key              serving certificate (replica names, LB names,
#                                          kubernetes.default.svc names, localhost, 127.0.0.1)
#       peer.crt peer.key                  peer certificate (O=rafter:peers, server+client auth)
#       ca.crt peer-ca.crt front-proxy-ca.crt front-proxy-client.crt/.key sa.key sa.pub
#       admin.crt admin.key                copies of the shared files above
#
# replica-<i>/ uses the file names of a Rafter data folder: copied into an empty data folder
# before the first start, the replica uses these files instead of generating its own
# (deploy/README.md). Keep OUT_DIR's CA keys offline.
set -euo pipefail

prog=bootstrap.sh
die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

force=0
server=""
cluster_name=rafter
days=365
while [ $# -gt 0 ]; do
  case $1 in
    --force) force=1; shift ;;
    --server) server=${2:?--server needs a URL}; shift 2 ;;
    --cluster-name) cluster_name=${2:?--cluster-name needs a name}; shift 2 ;;
    --days) days=${2:?--days needs a number}; shift 2 ;;
    -h | --help) usage ;;
    --) shift; break ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[ $# -ge 3 ] || usage
n=$1 out=$2 lb=$3
shift 3
case $n in '' | *[!0-9]*) die "N must be a positive number (got '$n')" ;; esac
[ "$n" -ge 1 ] || die "N must be at least 1"
[ $# -eq "$n" ] || die "expected $n replica name lists, got $#"
case $days in '' | *[!0-9]*) die "--days must be a number" ;; esac
command -v openssl >/dev/null || die "openssl is not installed"
[ -n "$lb" ] || die "LB_NAMES is empty"
replicas=("$@")
[ -n "$server" ] || server="https://${lb%%,*}:6443"

umask 077
mkdir -p "$out"
chmod 700 "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Whether FILE must be (re)made.
missing() { [ "$force" = 1 ] || [ ! -s "$1" ]; }

# A P-256 key in PKCS#8 PEM (what --service-account-signing-key-file and rustls read).
new_key() { # file
  missing "$1" || return 0
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.tmp" 2>/dev/null
  chmod 600 "$1.tmp"
  mv -f "$1.tmp" "$1"
  made+=("$1")
}

# subjectAltName value of a comma list: IPs as IP:, names as DNS:.
sans() {
  local IFS=, s out=""
  for s in $1; do
    [ -n "$s" ] || continue
    if [[ $s =~ ^[0-9]+(\.[0-9]+){3}$ || $s == *:* ]]; then out+="IP:$s,"; else out+="DNS:$s,"; fi
  done
  echo "${out%,}"
}

new_ca() { # name, CN
  local key=$out/$1.key crt=$out/$1.crt
  new_key "$key"
  missing "$crt" || [ "$key" -nt "$crt" ] || return 0
  openssl req -x509 -new -key "$key" -subj "/CN=$2" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,digitalSignature,keyCertSign,cRLSign" \
    -addext "subjectKeyIdentifier=hash" \
    -out "$crt.tmp" 2>/dev/null
  chmod 644 "$crt.tmp"
  mv -f "$crt.tmp" "$crt"
  made+=("$crt")
}

# A leaf signed by CA: file stem, CA name, subject, extended key usage, SANs (may be empty).
new_leaf() {
  local key=$1.key crt=$1.crt ca=$out/$2
  new_key "$key"
  if ! missing "$crt" && [ ! "$key" -nt "$crt" ] && [ ! "$ca.crt" -nt "$crt" ]; then return 0; fi
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$4"
    echo "authorityKeyIdentifier=keyid"
    [ -z "$5" ] || echo "subjectAltName=$5"
  } >"$tmp/ext"
  openssl req -new -key "$key" -subj "$3" -out "$tmp/csr" 2>/dev/null
  openssl x509 -req -in "$tmp/csr" -CA "$ca.crt" -CAkey "$ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days "$days" -sha256 \
    -extfile "$tmp/ext" -out "$crt.tmp" 2>/dev/null
  chmod 644 "$crt.tmp"
  mv -f "$crt.tmp" "$crt"
  made+=("$crt")
}

made=()

new_ca ca rafter-ca
new_ca peer-ca rafter-peer-ca
new_ca front-proxy-ca front-proxy-ca

new_leaf "$out/front-proxy-client" front-proxy-ca "/CN=front-proxy-client" clientAuth ""
new_leaf "$out/admin" ca "/O=system:masters/CN=admin" clientAuth ""
new_leaf "$out/apiserver-kubelet-client" ca "/O=system:masters/CN=kube-apiserver-kubelet-client" \
  clientAuth ""

# Service-account keys: every replica signs with sa.key and verifies with it (or sa.pub).
new_key "$out/sa.key"
if missing "$out/sa.pub" || [ "$out/sa.key" -nt "$out/sa.pub" ]; then
  openssl pkey -in "$out/sa.key" -pubout -out "$out/sa.pub.tmp" 2>/dev/null
  chmod 644 "$out/sa.pub.tmp"
  mv -f "$out/sa.pub.tmp" "$out/sa.pub"
  made+=("$out/sa.pub")
fi

# The names in-cluster clients use for the API (the `kubernetes` Service).
kube_names="kubernetes,kubernetes.default,kubernetes.default.svc,kubernetes.default.svc.cluster.local"
shared=(ca.crt peer-ca.crt front-proxy-ca.crt front-proxy-client.crt front-proxy-client.key
  sa.key sa.pub admin.crt admin.key)
for i in $(seq 1 "$n"); do
  names=${replicas[i - 1]}
  [ -n "$names" ] || die "replica $i has no names"
  first=${names%%,*}
  d=$out/replica-$i
  mkdir -p "$d"
  chmod 700 "$d"
  new_leaf "$d/server" ca "/CN=kube-apiserver" serverAuth \
    "$(sans "$names,$lb,$kube_names,localhost,127.0.0.1")"
  new_leaf "$d/peer" peer-ca "/O=rafter:peers/CN=$first" serverAuth,clientAuth \
    "$(sans "$names,localhost,127.0.0.1")"
  for f in "${shared[@]}"; do
    if [ ! -e "$d/$f" ] || ! cmp -s "$out/$f" "$d/$f"; then
      if [ -e "$d/$f" ] && [ "$force" != 1 ] && [[ " ${made[*]} " != *" $out/$f "* ]]; then
        die "$d/$f differs from $out/$f (remove it or use --force)"
      fi
      cp -f "$out/$f" "$d/$f.tmp"
      case $f in *.key) chmod 600 "$d/$f.tmp" ;; *) chmod 644 "$d/$f.tmp" ;; esac
      mv -f "$d/$f.tmp" "$d/$f"
      made+=("$d/$f")
    fi
  done
done

# The admin kubeconfig (embedded credentials, like kubeadm's admin.conf).
kc=$out/admin.kubeconfig
if missing "$kc" || [ "$out/admin.crt" -nt "$kc" ] || [ "$out/ca.crt" -nt "$kc" ]; then
  b64() { base64 -w0 <"$1"; }
  cat >"$kc.tmp" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $cluster_name
  cluster:
    server: $server
    certificate-authority-data: $(b64 "$out/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(b64 "$out/admin.crt")
    client-key-data: $(b64 "$out/admin.key")
contexts:
- name: admin@$cluster_name
  context:
    cluster: $cluster_name
    user: admin
current-context: admin@$cluster_name
EOF
  chmod 600 "$kc.tmp"
  mv -f "$kc.tmp" "$kc"
  made+=("$kc")
fi

# Every leaf must chain to its CA.
for i in $(seq 1 "$n"); do
  openssl verify -CAfile "$out/ca.crt" "$out/replica-$i/server.crt" >/dev/null ||
    die "replica-$i/server.crt does not verify against ca.crt"
  openssl verify -CAfile "$out/peer-ca.crt" "$out/replica-$i/peer.crt" >/dev/null ||
    die "replica-$i/peer.crt does not verify against peer-ca.crt"
done

if [ ${#made[@]} -eq 0 ]; then
  echo "$prog: $out is complete; nothing made" >&2
else
  echo "$prog: made ${#made[@]} file(s) in $out" >&2
fi

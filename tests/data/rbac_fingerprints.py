#!/usr/bin/env python3
"""Print the RBAC bootstrap-policy fingerprint oracle.

usage: python3 rbac_fingerprints.py <kubernetes>/plugin/pkg/auth/authorizer/rbac/bootstrappolicy/testdata
       > tests/data/rbac-bootstrap-fingerprints.txt

Reads the six default-feature-gate fixtures (cluster-roles.yaml, cluster-role-bindings.yaml,
controller-roles.yaml, controller-role-bindings.yaml, namespace-roles.yaml,
namespace-role-bindings.yaml; not the *-featuregates.yaml ones) and prints, for every
object in file order, one line:

    <Kind> <namespace, or - when cluster-scoped> <name> <sha256 hex of the canonical text>

Canonical text (src/authz/bootstrap.rs's `fingerprint` implements the same; keep both
in step). It depends only on an object's semantic content: `kind`, `apiVersion`,
metadata other than name/namespace/labels/annotations (uid, resourceVersion,
creationTimestamp, managedFields, ...) and every other field are ignored. It is the
concatenation of these lines, each ended by "\\n", in this order:

    name=<metadata.name>
    namespace=<metadata.namespace, or nothing>
    label=<J([key, value])>             one per label, lines sorted
    annotation=<J([key, value])>        one per annotation, lines sorted
  then, for an object without a `roleRef` (ClusterRole, Role):
    aggregate=<J([[key, value], ...])>  one per aggregationRule.clusterRoleSelectors entry,
                                        its matchLabels pairs sorted by key; lines sorted,
                                        duplicates dropped (only matchLabels counts)
    rule=<J([apiGroups, resources, resourceNames, nonResourceURLs, verbs])>
                                        one per rule; each of the five lists sorted with
                                        duplicates dropped, a missing or null list being [];
                                        lines sorted, duplicates dropped (rules are a set;
                                        null or missing `rules` is the empty set)
  or, for an object with a `roleRef` (ClusterRoleBinding, RoleBinding):
    roleRef=<J([apiGroup, kind, name])>
    subject=<J([kind, apiGroup, name, namespace])>
                                        one per subject, a missing field being ""; lines
                                        sorted, duplicates dropped

J(x) is compact JSON: no whitespace, separators "," and ":", strings escaped as JSON
requires and nothing more (non-ASCII characters are written as themselves; Python's
json.dumps(x, separators=(",", ":"), ensure_ascii=False), serde_json::to_string).
Sorting is by Unicode code point (equivalently by UTF-8 bytes). Label and annotation
values are taken as strings. The hash is SHA-256 over the UTF-8 bytes, lowercase hex.
"""
import hashlib
import json
import os
import sys

import yaml

FILES = [
    "cluster-roles.yaml",
    "cluster-role-bindings.yaml",
    "controller-roles.yaml",
    "controller-role-bindings.yaml",
    "namespace-roles.yaml",
    "namespace-role-bindings.yaml",
]


def J(x):
    return json.dumps(x, separators=(",", ":"), ensure_ascii=False)


def sset(xs):
    return sorted(set(xs or []))


def canonical(o):
    md = o.get("metadata") or {}
    lines = ["name=" + (md.get("name") or ""), "namespace=" + (md.get("namespace") or "")]
    lines += sorted("label=" + J([k, str(v)]) for k, v in (md.get("labels") or {}).items())
    lines += sorted("annotation=" + J([k, str(v)]) for k, v in (md.get("annotations") or {}).items())
    if "roleRef" in o:
        ref = o["roleRef"] or {}
        lines.append("roleRef=" + J([ref.get("apiGroup") or "", ref.get("kind") or "", ref.get("name") or ""]))
        lines += sorted({"subject=" + J([s.get("kind") or "", s.get("apiGroup") or "", s.get("name") or "",
                                         s.get("namespace") or ""]) for s in (o.get("subjects") or [])})
    else:
        sels = ((o.get("aggregationRule") or {}).get("clusterRoleSelectors")) or []
        lines += sorted({"aggregate=" + J(sorted([k, str(v)] for k, v in (s.get("matchLabels") or {}).items()))
                         for s in sels})
        lines += sorted({"rule=" + J([sset(r.get(f)) for f in
                                      ("apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs")])
                         for r in (o.get("rules") or [])})
    return "".join(l + "\n" for l in lines)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = []
    for f in FILES:
        doc = yaml.safe_load(open(os.path.join(sys.argv[1], f)))
        for o in doc["items"]:
            md = o["metadata"]
            h = hashlib.sha256(canonical(o).encode("utf-8")).hexdigest()
            out.append(f"{o['kind']} {md.get('namespace') or '-'} {md['name']} {h}")
    print("\n".join(out))


main()

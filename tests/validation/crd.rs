//! CustomResourceDefinitions refused as apiextensions-apiserver v0.33 refuses them: structural
//! schema rules (reported under `spec.validation` when every version shares one schema, as
//! kube's internal conversion moves it there), list-type rules, version names, conversion,
//! and stored versions a spec update may not drop.

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::support::Server;
use super::Case;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const SV: &str = "spec.validation.openAPIV3Schema";

/// A CRD `<plural>.example.com` with `versions` and extra spec fields.
fn crd(plural: &str, versions: Value, extra: Value) -> Value {
    let mut spec = json!({"group": "example.com", "scope": "Namespaced",
        "names": {"plural": plural, "kind": "Widget"}, "versions": versions});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": format!("{plural}.example.com")}, "spec": spec})
}

/// One served storage version `v1` with `schema` as its `openAPIV3Schema`.
fn v1(schema: Value) -> Value {
    json!([{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": schema}}])
}

fn object(props: Value) -> Value {
    json!({"type": "object", "properties": props})
}

fn msg(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

fn invalid(body: Value, errs: &[&str], causes: Vec<(&'static str, &'static str)>) -> Case {
    let name = body["metadata"]["name"].as_str().unwrap_or("").to_string();
    let list = if errs.len() == 1 {
        errs[0].to_string()
    } else {
        format!("[{}]", errs.join(", "))
    };
    Case {
        path: CRDS,
        body,
        code: 422,
        reason: "Invalid",
        message: msg(format!(
            "CustomResourceDefinition.apiextensions.k8s.io \"{name}\" is invalid: {list}"
        )),
        causes: Some(causes),
    }
}

fn at(path: &str) -> &'static str {
    msg(format!("{SV}.{path}"))
}

pub(super) fn cases() -> Vec<Case> {
    vec![
        // selectableFields (kube's ValidateCustomResourceSelectableFields; identical in every
        // version, so reported at spec level as kube's conversion moves them).
        invalid({
            let mut c = crd("selects", v1(object(json!({"spec": {"type": "object", "properties": {
                "color": {"type": "string"}, "size": {"type": "object"}}}}))), json!({}));
            c["spec"]["versions"][0]["selectableFields"] = json!([
                {"jsonPath": ".spec.color"}, {"jsonPath": ".spec.color"}, {"jsonPath": ".spec.size"},
                {"jsonPath": ".spec.none"}, {"jsonPath": ".spec[0]"}, {"jsonPath": ""}]);
            c
        },
            &[
                "spec.selectableFields[1].jsonPath: Duplicate value: \".spec.color\"",
                "spec.selectableFields[2].jsonPath: Invalid value: \".spec.size\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
                "spec.selectableFields[3].jsonPath: Invalid value: \".spec.none\": is an invalid path: does not refer to a valid field",
                "spec.selectableFields[4].jsonPath: Invalid value: \".spec[0]\": is an invalid path: array notation is not allowed",
                "spec.selectableFields[5].jsonPath: Required value",
            ],
            vec![("spec.selectableFields[1].jsonPath", "FieldValueDuplicate"),
                 ("spec.selectableFields[2].jsonPath", "FieldValueInvalid"),
                 ("spec.selectableFields[3].jsonPath", "FieldValueInvalid"),
                 ("spec.selectableFields[4].jsonPath", "FieldValueInvalid"),
                 ("spec.selectableFields[5].jsonPath", "FieldValueRequired")],
        ),
        invalid(
            crd("untyped", v1(object(json!({"a": {"description": "x"}, "b": {"type": "array"}}))), json!({})),
            &[
                &format!("{SV}.properties[a].type: Required value: must not be empty for specified object fields"),
                &format!("{SV}.properties[b].items: Required value: must be specified"),
            ],
            vec![(at("properties[a].type"), "FieldValueRequired"), (at("properties[b].items"), "FieldValueRequired")],
        ),
        invalid(
            crd("metas", v1(object(json!({"metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}))), json!({})),
            &[&format!("{SV}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified")],
            vec![(at("properties[metadata]"), "FieldValueForbidden")],
        ),
        invalid(
            crd("extensions", v1(object(json!({
                "e": {"x-kubernetes-embedded-resource": true},
                "p": {"x-kubernetes-int-or-string": true, "x-kubernetes-preserve-unknown-fields": true},
                "q": {"type": "string", "anyOf": [{"type": "integer"}, {"type": "boolean"}]}}))), json!({})),
            &[
                &format!("{SV}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"),
                &format!("{SV}.properties[e].type: Required value: must be object if x-kubernetes-embedded-resource is true"),
                &format!("{SV}.properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true"),
                &format!("{SV}.properties[q].anyOf[0].type: Forbidden: must be empty to be structural"),
                &format!("{SV}.properties[q].anyOf[1].type: Forbidden: must be empty to be structural"),
            ],
            vec![(at("properties[e].properties"), "FieldValueRequired"), (at("properties[e].type"), "FieldValueRequired"),
                 (at("properties[p].x-kubernetes-preserve-unknown-fields"), "FieldValueInvalid"),
                 (at("properties[q].anyOf[0].type"), "FieldValueForbidden"), (at("properties[q].anyOf[1].type"), "FieldValueForbidden")],
        ),
        invalid(
            crd("lists", v1(object(json!({"ports": {"type": "array", "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"], "additionalProperties": {"type": "string"}, "properties": {"x": {"type": "string"}},
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}))), json!({})),
            &[
                &format!("{SV}.properties[ports].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"),
                &format!("{SV}.properties[ports].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"),
            ],
            vec![(at("properties[ports].additionalProperties"), "FieldValueForbidden"),
                 (at("properties[ports].items.properties[name].default"), "FieldValueRequired")],
        ),
        invalid(
            crd("prunes", v1(object(json!({"spec": {"type": "object", "default": {"size": 1, "extra": "x"},
                "properties": {"size": {"type": "integer"}}}}))), json!({})),
            &[&format!("{SV}.properties[spec].default: Invalid value: map[string]interface {{}}{{\"extra\":\"x\", \"size\":1}}: must not have unknown fields")],
            vec![(at("properties[spec].default"), "FieldValueInvalid")],
        ),
        invalid(
            crd("columns", json!([{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}},
                "subresources": {"scale": {"specReplicasPath": "spec.replicas", "statusReplicasPath": ".spec.replicas"}},
                "additionalPrinterColumns": [{"name": "Age", "type": "time", "format": "duration", "jsonPath": ""}]}]), json!({})),
            &[
                "spec.subresources.scale.specReplicasPath: Invalid value: \"spec.replicas\": must be a simple json path starting with .",
                "spec.subresources.scale.statusReplicasPath: Invalid value: \".spec.replicas\": should be a json path under .status",
                "spec.additionalPrinterColumns[0].type: Invalid value: \"time\": must be one of boolean,date,integer,number,string",
                "spec.additionalPrinterColumns[0].format: Invalid value: \"duration\": must be one of byte,date,date-time,double,float,int32,int64,password",
                "spec.additionalPrinterColumns[0].JSONPath: Required value",
            ],
            vec![("spec.subresources.scale.specReplicasPath", "FieldValueInvalid"),
                 ("spec.subresources.scale.statusReplicasPath", "FieldValueInvalid"),
                 ("spec.additionalPrinterColumns[0].type", "FieldValueInvalid"),
                 ("spec.additionalPrinterColumns[0].format", "FieldValueInvalid"),
                 ("spec.additionalPrinterColumns[0].JSONPath", "FieldValueRequired")],
        ),
        {
            let mut body = crd("things", v1(json!({"type": "object"})), json!({}));
            body["metadata"]["name"] = json!("things.example.k8s.io");
            body["metadata"]["annotations"] = json!({"api-approved.kubernetes.io": "soon"});
            body["spec"]["group"] = json!("example.k8s.io");
            invalid(
                body,
                &["metadata.annotations[api-approved.kubernetes.io]: Invalid value: \"soon\": protected groups must have approval annotation \"api-approved.kubernetes.io\" with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"],
                vec![("metadata.annotations[api-approved.kubernetes.io]", "FieldValueInvalid")],
            )
        },
        // Differing schemas are validated per version.
        invalid(
            crd("perversion", json!([
                {"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "string"}}},
                {"name": "v2", "served": true, "storage": false, "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v3", "served": true, "storage": false}]), json!({})),
            &[
                "spec.versions[2].schema.openAPIV3Schema: Required value: schemas are required",
                "spec.versions[0].schema.openAPIV3Schema.type: Invalid value: \"string\": must be object at the root",
            ],
            vec![("spec.versions[2].schema.openAPIV3Schema", "FieldValueRequired"),
                 ("spec.versions[0].schema.openAPIV3Schema.type", "FieldValueInvalid")],
        ),
        invalid(
            crd("badversions", json!([{"name": "V1", "served": true, "storage": true, "deprecationWarning": "old",
                "schema": {"openAPIV3Schema": {"type": "object"}}}]), json!({})),
            &[
                &format!("spec.versions[0].name: Invalid value: \"V1\": {DNS1035}"),
                "spec.versions[0].deprecationWarning: Invalid value: \"old\": can only be set for deprecated versions",
                &format!("spec.version: Invalid value: \"V1\": {DNS1035}"),
            ],
            vec![("spec.versions[0].name", "FieldValueInvalid"), ("spec.versions[0].deprecationWarning", "FieldValueInvalid"),
                 ("spec.version", "FieldValueInvalid")],
        ),
        invalid(
            crd("webhooks", v1(json!({"type": "object"})), json!({"conversion": {"strategy": "Webhook",
                "webhook": {"clientConfig": {"url": "http://convert.example.com/x"}, "conversionReviewVersions": ["v2"]}}})),
            &[
                "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "spec.conversion.conversionReviewVersions: Invalid value: []string{\"v2\"}: must include at least one of v1, v1beta1",
            ],
            vec![("spec.conversion.webhookClientConfig.url", "FieldValueInvalid"),
                 ("spec.conversion.conversionReviewVersions", "FieldValueInvalid")],
        ),
        invalid(
            crd("noneconversions", v1(json!({"type": "object"})), json!({"conversion": {"strategy": "None",
                "webhook": {"clientConfig": {"service": {"namespace": "ns", "name": "conv"}}, "conversionReviewVersions": ["v1"]}}})),
            &[
                "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
                "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook",
            ],
            vec![("spec.conversion.webhookClientConfig", "FieldValueForbidden"),
                 ("spec.conversion.conversionReviewVersions", "FieldValueForbidden")],
        ),
    ]
}

#[tokio::test]
async fn a_definition_keeps_its_group_plural_scope_and_kind() {
    let s = Server::start();
    let c = s.client();
    let body = crd("gizmos", v1(json!({"type": "object"})), json!({}));
    let r = s.json(&c, Method::POST, CRDS, Some(body)).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    let path = format!("{CRDS}/gizmos.example.com");
    // Wait until established: scope and kind are fixed from then on.
    let mut r = s.json(&c, Method::GET, &path, None).await;
    for _ in 0..50 {
        let established = r.body["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Established" && c["status"] == "True");
        if established {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        r = s.json(&c, Method::GET, &path, None).await;
    }
    for _ in 0..20 {
        let mut obj = r.body.clone();
        obj["spec"]["scope"] = json!("Cluster");
        obj["spec"]["names"]["kind"] = json!("Gizmo");
        obj["spec"]["group"] = json!("other.example.com");
        r = s.json(&c, Method::PUT, &path, Some(obj)).await;
        if r.code != StatusCode::CONFLICT {
            break;
        }
        r = s.json(&c, Method::GET, &path, None).await;
    }
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"gizmos.example.com\" is invalid: [spec.scope: Invalid value: \"Cluster\": field is immutable, spec.names.kind: Invalid value: \"Gizmo\": field is immutable, spec.group: Invalid value: \"other.example.com\": field is immutable]"
    );
}

#[tokio::test]
async fn a_stored_version_stays_in_spec_versions() {
    let s = Server::start();
    let c = s.client();
    let schema = json!({"openAPIV3Schema": {"type": "object"}});
    let body = crd(
        "gadgets",
        json!([
        {"name": "v1", "served": true, "storage": true, "schema": schema},
        {"name": "v2", "served": true, "storage": false, "schema": schema}]),
        json!({}),
    );
    let r = s.json(&c, Method::POST, CRDS, Some(body)).await;
    assert_eq!(r.code, StatusCode::CREATED, "{}", r.body);
    assert_eq!(r.body["status"]["storedVersions"], json!(["v1"]));
    // The definition's controller writes its status meanwhile: retry on conflicts.
    let path = format!("{CRDS}/gadgets.example.com");
    let mut r = s.json(&c, Method::GET, &path, None).await;
    for _ in 0..20 {
        let mut obj = r.body.clone();
        obj["spec"]["versions"] =
            json!([{"name": "v2", "served": true, "storage": true, "schema": schema}]);
        r = s.json(&c, Method::PUT, &path, Some(obj)).await;
        if r.code != StatusCode::CONFLICT {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        r = s.json(&c, Method::GET, &path, None).await;
    }
    assert_eq!(r.code, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"gadgets.example.com\" is invalid: status.storedVersions[0]: Invalid value: \"v1\": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions"
    );
}

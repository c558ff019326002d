//! Services (core/v1): defaults, address allocation (done by the store, see
//! [`crate::registry::allocate`]), field selectors and the printer.

use serde_json::{json, Value};

use crate::registry::field_selectors::{self as fields, not_supported, Put, SelectableFields};
use crate::registry::strategy::{obj_entry, Strategy};
use crate::registry::table::{printers, Printer};

pub struct Services;

impl Strategy for Services {
    fn default(&self, obj: &mut Value) {
        let spec = obj_entry(obj, "spec");
        spec.entry("type").or_insert(json!("ClusterIP"));
        spec.entry("sessionAffinity").or_insert(json!("None"));
        if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
            for p in ports.iter_mut().filter_map(Value::as_object_mut) {
                p.entry("protocol").or_insert(json!("TCP"));
                // Unset (or 0, as protobuf clients send it) means "same as port".
                let unset = p.get("targetPort").is_none_or(|t| t == &json!(0));
                if unset {
                    if let Some(port) = p.get("port").cloned() {
                        p.insert("targetPort".into(), port);
                    }
                }
            }
        }
        let ty = spec
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if matches!(ty.as_str(), "NodePort" | "LoadBalancer") {
            spec.entry("externalTrafficPolicy")
                .or_insert(json!("Cluster"));
        }
        if ty == "LoadBalancer" {
            spec.entry("allocateLoadBalancerNodePorts")
                .or_insert(json!(true));
        }
        if ty != "ExternalName" {
            spec.entry("internalTrafficPolicy")
                .or_insert(json!("Cluster"));
            spec.entry("ipFamilyPolicy").or_insert(json!("SingleStack"));
            spec.entry("ipFamilies").or_insert(json!(["IPv4"]));
        }
    }

    fn allocates(&self) -> bool {
        true
    }

    fn fields(&self) -> Option<&'static SelectableFields> {
        Some(&FIELDS)
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn printer(&self) -> Printer {
        printers::SERVICE
    }
}

static FIELDS: SelectableFields = SelectableFields {
    labels: &[
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
        ("spec.clusterIP", "spec.clusterIP"),
        ("spec.type", "spec.type"),
    ],
    reject: not_supported,
    extract: service_fields,
};

fn service_fields(obj: &Value, put: Put<'_>) {
    put("spec.clusterIP", fields::text(obj, &["spec", "clusterIP"]));
    put("spec.type", fields::text(obj, &["spec", "type"]));
}

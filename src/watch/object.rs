//! One object as the watch cache keeps it: its compact JSON bytes (as served, with its
//! `resourceVersion` stamped), where its list-item form starts, and its labels — not a
//! `serde_json::Value` tree, which costs several times the JSON's size. Consumers that need
//! the tree (followers, Table, protobuf, conversions, field selectors) parse it when they
//! need it ([`Object::value`]); JSON lists and watch lines are written from the bytes.

use std::sync::Arc;

use serde_json::{Map, Value};

/// A cached object. Clone is cheap (shared bytes).
#[derive(Clone)]
pub struct Object(Arc<Inner>);

struct Inner {
    /// The object's JSON, as `serde_json` writes the decoded value (compact, members in
    /// order).
    json: Box<[u8]>,
    /// When the object's first two members are `kind` and `apiVersion`: where the members
    /// after them start (the item form of a built-in list is `{` + `json[item_at..]`);
    /// 0 otherwise.
    item_at: u32,
    /// `metadata.labels` as `key \0 value \0 ...` (a value that is not a string as ""), the
    /// only part of an object label selectors read.
    labels: Box<str>,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0.json))
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.0.json == other.0.json
    }
}

fn put<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) {
    if serde_json::to_writer(&mut *out, v).is_err() {
        out.extend_from_slice(b"null");
    }
}

impl Object {
    /// The compact form of `v`.
    pub fn new(v: &Value) -> Object {
        let mut json = Vec::with_capacity(512);
        let mut item_at = 0;
        match v.as_object() {
            Some(m) => {
                let type_meta =
                    m.len() >= 2 && m.keys().take(2).all(|k| k == "kind" || k == "apiVersion");
                json.push(b'{');
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        json.push(b',');
                    }
                    if i == 2 && type_meta {
                        item_at = json.len();
                    }
                    put(&mut json, k);
                    json.push(b':');
                    put(&mut json, v);
                }
                if m.len() == 2 && type_meta {
                    item_at = json.len();
                }
                json.push(b'}');
            }
            None => put(&mut json, v),
        }
        let mut labels = String::new();
        if let Some(l) = v
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
        {
            for (k, v) in l {
                labels.push_str(k);
                labels.push('\0');
                labels.push_str(v.as_str().unwrap_or(""));
                labels.push('\0');
            }
        }
        Object(Arc::new(Inner {
            json: json.into_boxed_slice(),
            item_at: item_at as u32,
            labels: labels.into_boxed_str(),
        }))
    }

    /// The object's JSON.
    pub fn json(&self) -> &[u8] {
        &self.0.json
    }

    /// The JSON after `kind` and `apiVersion` (`{` prepended, this is the object without
    /// them, as kube's lists of built-ins carry their items), when those are its first two
    /// members.
    pub fn members_after_type(&self) -> Option<&[u8]> {
        (self.0.item_at > 0).then(|| &self.0.json[self.0.item_at as usize..])
    }

    /// The parsed object (a new tree each time: the cache keeps only the bytes).
    pub fn value(&self) -> Value {
        serde_json::from_slice(&self.0.json).unwrap_or_else(|_| Value::Object(Map::new()))
    }

    /// A label's value (`""` for a value that is not a string), if the object has it.
    pub fn label(&self, key: &str) -> Option<&str> {
        let mut it = self.0.labels.split('\0');
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            if k == key {
                return Some(v);
            }
        }
        None
    }

    /// Whether both are the same cached object (not merely equal).
    pub fn ptr_eq(&self, other: &Object) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Heap bytes this object holds (for the bench's accounting and tests).
    pub fn heap_size(&self) -> usize {
        self.0.json.len() + self.0.labels.len() + std::mem::size_of::<Inner>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bytes_labels_and_item_form() {
        let v = json!({"kind": "ConfigMap", "apiVersion": "v1",
            "metadata": {"name": "a", "labels": {"app": "x", "n": 1}}, "data": {"k": "v\"q"}});
        let o = Object::new(&v);
        assert_eq!(o.json(), serde_json::to_vec(&v).unwrap().as_slice());
        assert_eq!(o.value(), v);
        assert_eq!(o.label("app"), Some("x"));
        assert_eq!(o.label("n"), Some(""));
        assert_eq!(o.label("missing"), None);
        let mut item = b"{".to_vec();
        item.extend_from_slice(o.members_after_type().unwrap());
        let parsed: Value = serde_json::from_slice(&item).unwrap();
        assert_eq!(
            parsed,
            json!({"metadata": {"name": "a", "labels": {"app": "x", "n": 1}}, "data": {"k": "v\"q"}})
        );
        // Only kind and apiVersion: the item is `{}`.
        let o = Object::new(&json!({"apiVersion": "v1", "kind": "X"}));
        assert_eq!(o.members_after_type(), Some(&b"}"[..]));
        // kind not first: no item form.
        let o = Object::new(&json!({"metadata": {}, "kind": "X", "apiVersion": "v1"}));
        assert_eq!(o.members_after_type(), None);
        assert_eq!(o.label("a"), None);
    }
}

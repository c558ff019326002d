//! `--admission-control-config-file`: an AdmissionConfiguration (`apiserver.config.k8s.io/v1`,
//! or the deprecated `apiserver.k8s.io/v1alpha1`), YAML or JSON, whose `plugins` give each
//! plugin its configuration inline (`configuration`) or in a file (`path`, relative to the
//! configuration file). A plugin's configuration is handed to it as JSON.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// Each named plugin's configuration.
pub fn load(path: &Path) -> Result<BTreeMap<String, Value>, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("failed to read plugin config: {e}"))?;
    parse(&text, path.parent().unwrap_or(Path::new(".")))
}

fn yaml(text: &str) -> Result<Value, String> {
    serde_yaml::from_str::<Value>(text).map_err(|e| e.to_string())
}

/// Parses an AdmissionConfiguration; `dir` resolves relative `path`s.
pub fn parse(text: &str, dir: &Path) -> Result<BTreeMap<String, Value>, String> {
    let doc = yaml(text).map_err(|e| format!("failed to read plugin config: {e}"))?;
    let api = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
    if kind != "AdmissionConfiguration"
        || !["apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1"].contains(&api)
    {
        return Err(format!(
            "failed to read plugin config: no kind \"{kind}\" is registered for version \"{api}\""
        ));
    }
    let mut out = BTreeMap::new();
    for p in doc
        .get("plugins")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(name) = p.get("name").and_then(Value::as_str) else {
            continue;
        };
        let cfg = match (
            p.get("configuration"),
            p.get("path").and_then(Value::as_str),
        ) {
            (Some(c), _) if !c.is_null() => c.clone(),
            (_, Some(file)) if !file.is_empty() => {
                let full = if Path::new(file).is_absolute() {
                    Path::new(file).to_path_buf()
                } else {
                    dir.join(file)
                };
                let text = std::fs::read_to_string(&full).map_err(|e| {
                    format!(
                        "couldn't open admission plugin configuration {}: {e}",
                        full.display()
                    )
                })?;
                yaml(&text).map_err(|e| {
                    format!("couldn't read admission plugin {name:?} configuration: {e}")
                })?
            }
            _ => continue,
        };
        out.insert(name.to_string(), cfg);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_versions_inline_and_by_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("erl.yaml"),
            "kind: Configuration\nlimits: []\n",
        )
        .unwrap();
        let text = "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  configuration:\n    defaults: {enforce: baseline}\n- name: EventRateLimit\n  path: erl.yaml\n";
        let c = parse(text, dir.path()).unwrap();
        assert_eq!(c["PodSecurity"]["defaults"]["enforce"], "baseline");
        assert_eq!(c["EventRateLimit"]["kind"], "Configuration");
        let old = text.replace("apiserver.config.k8s.io/v1", "apiserver.k8s.io/v1alpha1");
        assert!(parse(&old, dir.path()).is_ok());
        let bad = text.replace("AdmissionConfiguration", "Other");
        assert!(parse(&bad, dir.path())
            .unwrap_err()
            .contains("no kind \"Other\""));
    }
}

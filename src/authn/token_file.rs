//! Static bearer tokens from `--token-auth-file`: a CSV file of `token,user,uid[,"g1,g2"]`
//! (further columns ignored), as kube-apiserver reads it. Read once at start.

use std::collections::HashMap;
use std::path::Path;

use super::UserInfo;

/// Token → user.
#[derive(Debug, Default)]
pub struct Tokens(HashMap<String, UserInfo>);

impl Tokens {
    /// Parses the file; errors name the line, never a token.
    pub fn load(path: &Path) -> Result<Tokens, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("reading token file {}: {e}", path.display()))?;
        Tokens::parse(&text).map_err(|e| format!("token file {}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Tokens, String> {
        let mut out = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let fields = csv_fields(line).map_err(|e| format!("line {}: {e}", i + 1))?;
            if fields.len() < 3 {
                return Err(format!(
                    "line {}: must have at least 3 columns (token, user name, user uid), found {}",
                    i + 1,
                    fields.len()
                ));
            }
            let token = fields[0].clone();
            if token.is_empty() {
                continue;
            }
            let groups = fields
                .get(3)
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|g| !g.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            out.insert(
                token,
                UserInfo {
                    name: fields[1].clone(),
                    uid: fields[2].clone(),
                    groups,
                    extra: Default::default(),
                },
            );
        }
        Ok(Tokens(out))
    }

    pub fn lookup(&self, token: &str) -> Option<&UserInfo> {
        self.0.get(token)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One CSV record (RFC 4180 quoting: `"a,b"`, `""` for a quote).
fn csv_fields(line: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (false, '"') if at_start => {
                quoted = true;
                at_start = false;
            }
            (true, '"') => {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    quoted = false;
                }
            }
            (false, ',') => {
                out.push(std::mem::take(&mut cur));
                at_start = true;
            }
            (_, c) => {
                cur.push(c);
                at_start = false;
            }
        }
    }
    if quoted {
        return Err("extraneous or missing \" in quoted-field".into());
    }
    out.push(cur);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kube_format() {
        let t = Tokens::parse(
            "abc123,alice,1001,\"dev,ops\"\n\ndef456,bob,1002\nxyz,carol,1003,admins,ignored\n",
        )
        .unwrap();
        assert_eq!(t.len(), 3);
        let a = t.lookup("abc123").unwrap();
        assert_eq!(
            (a.name.as_str(), a.uid.as_str(), a.groups.clone()),
            ("alice", "1001", vec!["dev".to_string(), "ops".to_string()])
        );
        assert!(t.lookup("def456").unwrap().groups.is_empty());
        assert_eq!(t.lookup("xyz").unwrap().groups, vec!["admins".to_string()]);
        assert!(t.lookup("nope").is_none());
        assert!(Tokens::parse("tok,user\n")
            .unwrap_err()
            .contains("at least 3 columns"));
        assert!(Tokens::parse("\"tok,user,uid\n").is_err());
    }
}

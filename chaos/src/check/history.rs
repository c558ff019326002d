//! The recorded client history and the replayed ground truth.
//!
//! The harness drives a Kubernetes-shaped register per key: every key is one ConfigMap (its
//! `data` holds the value), and the operations are exactly what the API offers on it:
//!
//! | [`Input`]            | HTTP                                                   | possible [`Output`]s                         |
//! |----------------------|--------------------------------------------------------|----------------------------------------------|
//! | `Get`                | `GET` (resourceVersion unset: a linearizable read)      | `Value` (`value: None` or `NotFound` on 404)  |
//! | `Put`                | `PUT` without `metadata.resourceVersion`               | `Written`, `NotFound`                         |
//! | `PutIf`              | `PUT` with `metadata.resourceVersion = expect_rv`      | `Written`, `Conflict`, `NotFound`             |
//! | `Create`             | `POST`                                                 | `Written`, `AlreadyExists`                    |
//! | `Delete`             | `DELETE`                                               | `Deleted`, `NotFound`                         |
//! | `DeleteIf`           | `DELETE` with `preconditions.resourceVersion`          | `Deleted`, `Conflict`, `NotFound`             |
//!
//! and `Unknown` for every input (timeout, 5xx, connection error).
//!
//! Semantics chosen here (and assumed by the checkers):
//! * An unconditional `Put` is an *update*: ConfigMaps do not allow create-on-update, so a PUT to
//!   a missing object answers 404 (`NotFound`) and changes nothing. Keys come into existence only
//!   through `Create`.
//! * A precondition on a missing object (`PutIf`, `DeleteIf`) answers `NotFound`, not `Conflict`.
//! * `resourceVersion` is the global revision: `Written.rv` is the new object's
//!   resourceVersion, `Deleted.rv` the revision of the delete itself (what the apiserver stamps
//!   on the object returned by DELETE), `Value.rv` the object's resourceVersion (its last
//!   modification). Revisions are > 0 and `< u64::MAX`.
//! * The **rv order rule**: every successful write gets a revision strictly greater than that of
//!   any write that completed before it started.
//! * `ret: None` means the return time is unknown (the op may take effect at any time after its
//!   call). `output: Unknown` means the outcome is unknown; such an op may take effect at any
//!   time after its call, or never, whatever `ret` says (a 5xx or a timeout can still commit
//!   later). An op with `ret: None` and a known output (`Written { rv }`, e.g. learned from the
//!   ground truth) did take effect, time unknown.
//! * Written values should be unique per key (the harness writes `client-seq` strings): the
//!   checkers then learn the fate of unknown-outcome writes from the ground truth (see
//!   [`super::linearizable`]).

use std::fmt;

use serde::{Deserialize, Serialize};

/// One client operation on one key.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Op {
    /// The client (one sequential actor) that issued it.
    pub client: u32,
    /// The key (ConfigMap name) it acts on.
    pub key: String,
    /// When the request was sent, nanoseconds on the harness's monotonic clock.
    pub call: u64,
    /// When the response arrived; `None` when it never did (see the module docs).
    pub ret: Option<u64>,
    /// What was asked.
    pub input: Input,
    /// What was answered.
    pub output: Output,
}

/// A request on one key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Input {
    /// Linearizable GET.
    Get,
    /// Unconditional update (the object must exist).
    Put { value: String },
    /// Update with a resourceVersion precondition.
    PutIf { value: String, expect_rv: u64 },
    /// Create (the object must not exist).
    Create { value: String },
    /// Unconditional delete.
    Delete,
    /// Delete with a resourceVersion precondition.
    DeleteIf { expect_rv: u64 },
}

/// A response (or the lack of one).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Output {
    /// GET: the value and resourceVersion; `value: None` on 404 (`rv` is then ignored).
    Value { value: Option<String>, rv: u64 },
    /// Successful PUT or create: the new resourceVersion.
    Written { rv: u64 },
    /// 409 on a resourceVersion precondition.
    Conflict,
    /// 404.
    NotFound,
    /// 409 AlreadyExists on create.
    AlreadyExists,
    /// Successful delete: the revision of the delete.
    Deleted { rv: u64 },
    /// Timeout, 5xx, connection error: it may or may not have taken effect.
    Unknown,
}

impl Input {
    /// The value this request writes, if it writes one.
    pub fn value(&self) -> Option<&str> {
        match self {
            Input::Put { value } | Input::PutIf { value, .. } | Input::Create { value } => {
                Some(value)
            }
            _ => None,
        }
    }

    /// Whether it is a write (anything but `Get`).
    pub fn is_write(&self) -> bool {
        !matches!(self, Input::Get)
    }
}

impl Op {
    /// The outcome is known (output is not `Unknown`).
    pub fn outcome_known(&self) -> bool {
        self.output != Output::Unknown
    }

    /// `Some(rv)` for an acknowledged successful write: a response arrived (`ret` is `Some`) and
    /// it is `Written` or `Deleted`.
    /// Malformed ops (see [`Op::validate`]) never count.
    pub fn acknowledged_rv(&self) -> Option<u64> {
        self.ret?;
        self.validate().ok()?;
        match self.output {
            Output::Written { rv } | Output::Deleted { rv } => Some(rv),
            _ => None,
        }
    }

    /// Whether this combination of input and output is one the API can produce (see the table
    /// in the module docs) and the times and revisions are sane. `Err` says why not.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(ret) = self.ret {
            if ret < self.call {
                return Err(format!("returns ({ret}) before its call ({})", self.call));
            }
        }
        let rv_ok = |rv: u64| rv > 0 && rv < u64::MAX;
        let combo_ok = match (&self.input, &self.output) {
            (_, Output::Unknown) => true,
            (Input::Get, Output::Value { value: None, .. } | Output::NotFound) => true,
            (Input::Get, Output::Value { value: Some(_), rv }) => {
                if !rv_ok(*rv) {
                    return Err(format!("read resourceVersion {rv} out of range"));
                }
                true
            }
            (
                Input::Put { .. } | Input::PutIf { .. } | Input::Create { .. },
                Output::Written { rv },
            )
            | (Input::Delete | Input::DeleteIf { .. }, Output::Deleted { rv }) => {
                if !rv_ok(*rv) {
                    return Err(format!("write resourceVersion {rv} out of range"));
                }
                true
            }
            (
                Input::Put { .. } | Input::PutIf { .. } | Input::Delete | Input::DeleteIf { .. },
                Output::NotFound,
            ) => true,
            (Input::PutIf { .. } | Input::DeleteIf { .. }, Output::Conflict) => true,
            (Input::Create { .. }, Output::AlreadyExists) => true,
            _ => false,
        };
        if combo_ok {
            Ok(())
        } else {
            Err(format!("{} cannot answer {}", self.input, self.output))
        }
    }

    /// One line for reports: `#12 c3 k1 PUT v=a -> written rv=17 [100..250]`.
    pub fn describe(&self, index: usize) -> String {
        let ret = match self.ret {
            Some(r) => r.to_string(),
            None => "?".to_string(),
        };
        format!(
            "#{index} c{} {} {} -> {} [{}..{}]",
            self.client, self.key, self.input, self.output, self.call, ret
        )
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Input::Get => write!(f, "GET"),
            Input::Put { value } => write!(f, "PUT v={value:?}"),
            Input::PutIf { value, expect_rv } => write!(f, "PUT v={value:?} if rv={expect_rv}"),
            Input::Create { value } => write!(f, "CREATE v={value:?}"),
            Input::Delete => write!(f, "DELETE"),
            Input::DeleteIf { expect_rv } => write!(f, "DELETE if rv={expect_rv}"),
        }
    }
}

impl fmt::Display for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Output::Value { value: Some(v), rv } => write!(f, "value {v:?} rv={rv}"),
            Output::Value { value: None, .. } => write!(f, "absent"),
            Output::Written { rv } => write!(f, "written rv={rv}"),
            Output::Conflict => write!(f, "409 conflict"),
            Output::NotFound => write!(f, "404 not found"),
            Output::AlreadyExists => write!(f, "409 already exists"),
            Output::Deleted { rv } => write!(f, "deleted rv={rv}"),
            Output::Unknown => write!(f, "unknown"),
        }
    }
}

/// One committed write of the ground truth: the replayed revision history of the resource
/// (every write that committed, in any order; the checkers sort by `rv`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Commit {
    pub key: String,
    /// Its revision (unique across the truth).
    pub rv: u64,
    /// The value written; `None` for a delete.
    pub value: Option<String>,
}

impl Commit {
    /// A create or update of `key` to `value` at `rv`.
    pub fn put(key: &str, rv: u64, value: &str) -> Commit {
        Commit {
            key: key.to_string(),
            rv,
            value: Some(value.to_string()),
        }
    }

    /// A delete of `key` at `rv`.
    pub fn delete(key: &str, rv: u64) -> Commit {
        Commit {
            key: key.to_string(),
            rv,
            value: None,
        }
    }
}

/// Every op whose [`Op::validate`] fails, as `(index, reason)`, in index order.
pub fn malformed(history: &[Op]) -> Vec<(usize, String)> {
    history
        .iter()
        .enumerate()
        .filter_map(|(i, op)| op.validate().err().map(|e| (i, e)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(input: Input, output: Output) -> Op {
        Op {
            client: 1,
            key: "k".into(),
            call: 10,
            ret: Some(20),
            input,
            output,
        }
    }

    #[test]
    fn valid_combinations() {
        let v = || "v".to_string();
        let ok = [
            op(
                Input::Get,
                Output::Value {
                    value: Some(v()),
                    rv: 3,
                },
            ),
            op(Input::Get, Output::Value { value: None, rv: 0 }),
            op(Input::Get, Output::NotFound),
            op(Input::Put { value: v() }, Output::Written { rv: 4 }),
            op(Input::Put { value: v() }, Output::NotFound),
            op(
                Input::PutIf {
                    value: v(),
                    expect_rv: 3,
                },
                Output::Conflict,
            ),
            op(Input::Create { value: v() }, Output::AlreadyExists),
            op(Input::Delete, Output::Deleted { rv: 9 }),
            op(Input::DeleteIf { expect_rv: 3 }, Output::Conflict),
            op(Input::Get, Output::Unknown),
        ];
        for o in &ok {
            assert_eq!(o.validate(), Ok(()), "{o:?}");
        }
        assert!(malformed(&ok).is_empty());
    }

    #[test]
    fn invalid_combinations() {
        let v = || "v".to_string();
        let bad = [
            op(Input::Get, Output::Written { rv: 3 }),
            op(Input::Put { value: v() }, Output::Conflict),
            op(Input::Create { value: v() }, Output::NotFound),
            op(Input::Delete, Output::Written { rv: 3 }),
            op(Input::Put { value: v() }, Output::Written { rv: 0 }),
            op(
                Input::Get,
                Output::Value {
                    value: Some(v()),
                    rv: 0,
                },
            ),
            Op {
                ret: Some(5),
                ..op(Input::Get, Output::NotFound)
            },
        ];
        let m = malformed(&bad);
        assert_eq!(
            m.iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            (0..bad.len()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn acknowledged_rv_needs_a_response() {
        let w = op(
            Input::Create { value: "v".into() },
            Output::Written { rv: 7 },
        );
        assert_eq!(w.acknowledged_rv(), Some(7));
        assert_eq!(
            Op {
                ret: None,
                ..w.clone()
            }
            .acknowledged_rv(),
            None
        );
        assert_eq!(
            op(Input::Get, Output::Value { value: None, rv: 0 }).acknowledged_rv(),
            None
        );
    }

    #[test]
    fn json_round_trip() {
        let h = vec![
            op(
                Input::PutIf {
                    value: "a".into(),
                    expect_rv: 3,
                },
                Output::Written { rv: 5 },
            ),
            Op {
                ret: None,
                ..op(Input::Delete, Output::Unknown)
            },
        ];
        let s = serde_json::to_string(&h).unwrap();
        assert!(s.contains(r#""type":"put_if""#), "{s}");
        let back: Vec<Op> = serde_json::from_str(&s).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn describe_is_one_line() {
        let d = Op {
            ret: None,
            ..op(Input::Put { value: "a".into() }, Output::Unknown)
        }
        .describe(4);
        assert_eq!(d, r#"#4 c1 k PUT v="a" -> unknown [10..?]"#);
    }
}

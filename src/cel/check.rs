//! The type checker and cost estimator: one walk over a parsed expression that finds its
//! type, the errors cel-go's checker reports (`undefined field 'x'`, `undeclared reference to
//! 'x' (in container '')`, `found no matching overload for '_>_' applied to '(int, string)'`,
//! ...) and an upper bound of its cost in cel-go's cost units (`checker.CostEstimate.Max`).
//!
//! The checker is deliberately lenient where the project does not model a type exactly: a
//! `dyn` operand is accepted everywhere, library functions are known by name and result type,
//! so an expression kube accepts is never rejected here. Costs follow cel-go's model: one per
//! identifier, selection and call, string work a tenth of a unit per character (a quarter for
//! regular expressions), comprehensions their body times the range's largest size.

use std::collections::BTreeMap;

use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::lexer::Anchor;
use super::types::{Type, MAX_REQUEST_SIZE};

/// An upper bound of cost, saturating.
pub type Cost = f64;

/// What the walk found for one expression.
pub struct Checked {
    pub ty: Type,
    pub cost: Cost,
    pub errors: Vec<(Anchor, String)>,
    /// Variables the expression refers to (free identifiers).
    pub refs: Vec<String>,
}

struct Walk<'a> {
    vars: &'a BTreeMap<String, Type>,
    locals: Vec<(String, Type)>,
    errors: Vec<(Anchor, String)>,
    refs: Vec<String>,
}

/// Checks `e` with the variables `vars`.
pub fn check(e: &IdedExpr, vars: &BTreeMap<String, Type>) -> Checked {
    let mut w = Walk {
        vars,
        locals: Vec::new(),
        errors: Vec::new(),
        refs: Vec::new(),
    };
    let (ty, cost) = w.expr(e);
    Checked {
        ty,
        cost,
        errors: w.errors,
        refs: w.refs,
    }
}

const TYPE_NAMES: &[&str] = &[
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "list",
    "map",
    "null_type",
    "type",
    "dyn",
];

/// Namespaces of library functions (`math.ceil`, `sets.contains`, ...).
const NAMESPACES: &[&str] = &[
    "math",
    "sets",
    "strings",
    "lists",
    "base64",
    "format",
    "optional",
    "jsonpatch",
    "ip",
];

fn size_of(t: &Type) -> f64 {
    match t {
        Type::Null => 0.0,
        _ => t.max_size().unwrap_or(MAX_REQUEST_SIZE) as f64,
    }
}

fn traverse(t: &Type, factor: f64) -> f64 {
    (size_of(t) * factor).ceil()
}

fn numeric(t: &Type) -> bool {
    matches!(t, Type::Int | Type::Uint | Type::Double | Type::Dyn)
}

fn is_str(t: &Type) -> bool {
    matches!(t, Type::String { .. } | Type::Dyn)
}

fn same(a: &Type, b: &Type) -> bool {
    a.assignable(b)
}

fn pick(a: &Type, b: &Type) -> Type {
    if a.is_dyn() {
        b.clone()
    } else {
        a.clone()
    }
}

fn opaque(n: &'static str) -> Type {
    Type::Opaque(n)
}

impl Walk<'_> {
    fn lookup(&mut self, name: &str) -> Option<Type> {
        if let Some((_, t)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            return Some(t.clone());
        }
        let t = self.vars.get(name).cloned()?;
        if !self.refs.iter().any(|r| r == name) {
            self.refs.push(name.to_string());
        }
        Some(t)
    }

    fn err(&mut self, a: Anchor, msg: String) {
        self.errors.push((a, msg));
    }

    fn no_overload(&mut self, a: Anchor, f: &str, recv: Option<&Type>, args: &[Type]) -> Type {
        let list: Vec<String> = args.iter().map(ToString::to_string).collect();
        let applied = match recv {
            Some(r) => format!("{r}.({})", list.join(", ")),
            None => format!("({})", list.join(", ")),
        };
        self.err(
            a,
            format!("found no matching overload for '{f}' applied to '{applied}'"),
        );
        Type::Dyn
    }

    fn expr(&mut self, e: &IdedExpr) -> (Type, Cost) {
        match &e.expr {
            Expr::Unspecified => (Type::Dyn, 0.0),
            Expr::Literal(l) => (
                match l {
                    LiteralValue::Boolean(_) => Type::Bool,
                    LiteralValue::Bytes(b) => Type::Bytes {
                        max: b.inner().len() as u64,
                    },
                    LiteralValue::Double(_) => Type::Double,
                    LiteralValue::Int(_) => Type::Int,
                    LiteralValue::Null => Type::Null,
                    LiteralValue::String(s) => Type::String {
                        max: s.inner().len() as u64,
                    },
                    LiteralValue::UInt(_) => Type::Uint,
                },
                0.0,
            ),
            Expr::Ident(name) => {
                if let Some(t) = self.lookup(name) {
                    return (t, 1.0);
                }
                if TYPE_NAMES.contains(&name.as_str()) {
                    return (Type::TypeValue, 1.0);
                }
                self.err(
                    Anchor::Ident(name.clone()),
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                (Type::Dyn, 1.0)
            }
            Expr::Select(s) => {
                let (t, c) = self.expr(&s.operand);
                let ft = self.field(&t, &s.field);
                if s.test {
                    (Type::Bool, c + 1.0)
                } else {
                    (ft, c + 1.0)
                }
            }
            Expr::List(l) => {
                let mut cost = 10.0;
                let mut elem: Option<Type> = None;
                for x in &l.elements {
                    let (t, c) = self.expr(x);
                    cost += c;
                    elem = Some(match elem {
                        None => t,
                        Some(prev) if same(&prev, &t) => merge_sizes(&prev, &t),
                        Some(_) => Type::Dyn,
                    });
                }
                (
                    Type::List {
                        elem: Box::new(elem.unwrap_or(Type::Dyn)),
                        max: l.elements.len() as u64,
                    },
                    cost,
                )
            }
            Expr::Map(m) => {
                let mut cost = 30.0;
                let (mut kt, mut vt): (Option<Type>, Option<Type>) = (None, None);
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        let (k, c1) = self.expr(&me.key);
                        let (v, c2) = self.expr(&me.value);
                        cost += c1 + c2;
                        kt = Some(match kt {
                            None => k,
                            Some(p) if same(&p, &k) => p,
                            Some(_) => Type::Dyn,
                        });
                        vt = Some(match vt {
                            None => v,
                            Some(p) if same(&p, &v) => p,
                            Some(_) => Type::Dyn,
                        });
                    }
                }
                (
                    Type::Map {
                        key: Box::new(kt.unwrap_or(Type::Dyn)),
                        value: Box::new(vt.unwrap_or(Type::Dyn)),
                        max: m.entries.len() as u64,
                    },
                    cost,
                )
            }
            Expr::Struct(s) => {
                let mut cost = 40.0;
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        cost += self.expr(&f.value).1;
                    }
                }
                self.err(
                    Anchor::Ident(s.type_name.clone()),
                    format!(
                        "undeclared reference to '{}' (in container '')",
                        s.type_name
                    ),
                );
                (Type::Dyn, cost)
            }
            Expr::Comprehension(c) => {
                let (range, rc) = self.expr(&c.iter_range);
                let (v1, v2) = match &range {
                    Type::List { elem, .. } => (
                        if c.iter_var2.is_some() {
                            Type::Int
                        } else {
                            (**elem).clone()
                        },
                        (**elem).clone(),
                    ),
                    Type::Map { key, value, .. } => ((**key).clone(), (**value).clone()),
                    Type::Dyn => (Type::Dyn, Type::Dyn),
                    other => {
                        self.err(
                            Anchor::Start,
                            format!("expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"),
                        );
                        (Type::Dyn, Type::Dyn)
                    }
                };
                let n = size_of(&range);
                let (init, ic) = self.expr(&c.accu_init);
                self.locals.push((c.iter_var.clone(), v1));
                if let Some(v) = &c.iter_var2 {
                    self.locals.push((v.clone(), v2));
                }
                self.locals.push((c.accu_var.clone(), init.clone()));
                let (_, cc) = self.expr(&c.loop_cond);
                let (step, sc) = self.expr(&c.loop_step);
                // `map` and `filter` start from an empty list of unknown elements: the
                // accumulator has the step's type, sized by the range.
                let accu = match (&init, &step) {
                    (Type::List { .. }, Type::List { elem, .. }) => Type::List {
                        elem: elem.clone(),
                        max: range.max_size().unwrap_or(MAX_REQUEST_SIZE),
                    },
                    _ => init,
                };
                self.locals.pop();
                self.locals.push((c.accu_var.clone(), accu));
                let (result, resc) = self.expr(&c.result);
                self.locals.pop();
                if c.iter_var2.is_some() {
                    self.locals.pop();
                }
                self.locals.pop();
                (result, rc + ic + n * (cc + sc) + resc)
            }
            Expr::Call(call) => self.call(call),
        }
    }

    fn field(&mut self, t: &Type, field: &str) -> Type {
        match t {
            Type::Object(o) => match o.fields.get(field) {
                Some(ft) => ft.clone(),
                // An object typed from a value (the runtime cost of an admission
                // expression) that has no such field: selecting it fails when run.
                None if o.max.is_some() => Type::Null,
                None => {
                    self.err(
                        Anchor::Select(field.to_string()),
                        format!("undefined field '{field}'"),
                    );
                    Type::Dyn
                }
            },
            Type::Map { value, .. } => (**value).clone(),
            Type::Dyn => Type::Dyn,
            // `authorizer.requestResource`
            t if is_authz(t) && field == "requestResource" => {
                opaque("kubernetes.authorization.ResourceCheck")
            }
            Type::Optional(inner) => Type::Optional(Box::new(self.field(inner, field))),
            other => {
                self.err(
                    Anchor::Select(field.to_string()),
                    format!("type '{other}' does not support field selection"),
                );
                Type::Dyn
            }
        }
    }

    fn call(&mut self, call: &kube_cel::cel::common::ast::CallExpr) -> (Type, Cost) {
        let name = call.func_name.as_str();
        // `x.?field`: the field as an optional (the field name is a string literal)
        if name == "_?._" && call.args.len() == 2 {
            let (t, c) = self.expr(&call.args[0]);
            let field = match &call.args[1].expr {
                Expr::Literal(LiteralValue::String(s)) => s.inner().to_string(),
                _ => String::new(),
            };
            let inner = match t {
                Type::Optional(i) => *i,
                t => t,
            };
            let ft = self.field(&inner, &field);
            return (Type::Optional(Box::new(ft)), c + 1.0);
        }
        // a namespaced function: `math.ceil(x)` parses as a call of `ceil` on `math`
        if let Some(t) = &call.target {
            if let Expr::Ident(ns) = &t.expr {
                if NAMESPACES.contains(&ns.as_str()) && self.lookup(ns).is_none() {
                    let full = format!("{ns}.{name}");
                    let mut cost = 1.0;
                    let mut args = Vec::new();
                    for a in &call.args {
                        let (t, c) = self.expr(a);
                        cost += c;
                        args.push(t);
                    }
                    let ty = match namespaced(&full, &args) {
                        Some(t) => t,
                        None => {
                            self.err(
                                Anchor::Call(name.to_string()),
                                format!("undeclared reference to '{full}' (in container '')"),
                            );
                            Type::Dyn
                        }
                    };
                    let extra = args.first().map_or(0.0, |a| traverse(a, 0.1));
                    return (ty, cost + extra);
                }
            }
        }
        // cel-go charges nothing for the logical operators themselves
        let mut cost = match name {
            "_&&_" | "_||_" | "_?_:_" | "@not_strictly_false" => 0.0,
            _ => 1.0,
        };
        let recv = match &call.target {
            Some(t) => {
                let (ty, c) = self.expr(t);
                cost += c;
                Some(ty)
            }
            None => None,
        };
        let mut args = Vec::new();
        for a in &call.args {
            let (t, c) = self.expr(a);
            cost += c;
            args.push(t);
        }
        let (ty, extra) = match recv {
            None => self.global(name, &args),
            Some(r) => self.method(name, &r, &args),
        };
        (ty, cost + extra)
    }

    fn global(&mut self, name: &str, a: &[Type]) -> (Type, Cost) {
        let op = |s: &'static str| Anchor::Op(s);
        let bin = |a: &[Type]| (a[0].clone(), a.get(1).cloned().unwrap_or(Type::Dyn));
        match name {
            "_&&_" | "_||_" => {
                for t in a {
                    if !matches!(t, Type::Bool | Type::Dyn) {
                        let sym = if name == "_&&_" { "&&" } else { "||" };
                        return (self.no_overload(op(sym), name, None, a), 0.0);
                    }
                }
                (Type::Bool, 0.0)
            }
            "!_" => {
                if !matches!(a[0], Type::Bool | Type::Dyn) {
                    return (self.no_overload(op("!"), name, None, a), 0.0);
                }
                (Type::Bool, 0.0)
            }
            "-_" => {
                if !matches!(a[0], Type::Int | Type::Double | Type::Duration | Type::Dyn) {
                    return (self.no_overload(op("-"), name, None, a), 0.0);
                }
                (a[0].clone(), 0.0)
            }
            "@not_strictly_false" => (Type::Bool, 0.0),
            "_?_:_" => {
                if !matches!(a[0], Type::Bool | Type::Dyn) || !same(&a[1], &a[2]) {
                    return (self.no_overload(op("?"), name, None, a), 0.0);
                }
                (pick(&a[1], &a[2]), 0.0)
            }
            "_==_" | "_!=_" => {
                let (l, r) = bin(a);
                let sym = if name == "_==_" { "==" } else { "!=" };
                if !same(&l, &r) && !(numeric(&l) && numeric(&r)) {
                    return (self.no_overload(op(sym), name, None, a), 0.0);
                }
                let c = match (&l, &r) {
                    (Type::String { .. } | Type::Bytes { .. }, _)
                    | (Type::List { .. } | Type::Map { .. }, _) => {
                        (size_of(&l).min(size_of(&r)) * 0.1).ceil()
                    }
                    _ => 0.0,
                };
                (Type::Bool, c)
            }
            "_<_" | "_<=_" | "_>_" | "_>=_" => {
                let (l, r) = bin(a);
                let ok = (numeric(&l) && numeric(&r))
                    || (l.is_dyn() || r.is_dyn())
                    || matches!(
                        (&l, &r),
                        (Type::String { .. }, Type::String { .. })
                            | (Type::Bytes { .. }, Type::Bytes { .. })
                            | (Type::Bool, Type::Bool)
                            | (Type::Timestamp, Type::Timestamp)
                            | (Type::Duration, Type::Duration)
                    );
                if !ok {
                    let sym = match name {
                        "_<_" => "<",
                        "_<=_" => "<=",
                        "_>_" => ">",
                        _ => ">=",
                    };
                    return (self.no_overload(op(sym), name, None, a), 0.0);
                }
                let c = if matches!(l, Type::String { .. } | Type::Bytes { .. }) {
                    (size_of(&l).min(size_of(&r)) * 0.1).ceil()
                } else {
                    0.0
                };
                (Type::Bool, c)
            }
            "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => self.arith(name, a),
            "_[_]" | "_[?_]" => {
                let (c, k) = bin(a);
                let t = match (&c, &k) {
                    (Type::List { elem, .. }, Type::Int | Type::Uint | Type::Dyn) => {
                        (**elem).clone()
                    }
                    (Type::Map { key, value, .. }, k) if same(key, k) => (**value).clone(),
                    (Type::Dyn, _) => Type::Dyn,
                    (Type::Optional(_), _) => Type::Dyn,
                    _ => return (self.no_overload(op("["), name, None, a), 0.0),
                };
                if name == "_[?_]" {
                    (Type::Optional(Box::new(t)), 0.0)
                } else {
                    (t, 0.0)
                }
            }
            "@in" => {
                let (x, c) = bin(a);
                match &c {
                    Type::List { elem, .. } if same(&x, elem) => (Type::Bool, size_of(&c)),
                    Type::Map { key, .. } if same(&x, key) => (Type::Bool, 0.0),
                    Type::Dyn => (Type::Bool, size_of(&c)),
                    _ => (
                        self.no_overload(Anchor::Ident("in".into()), name, None, a),
                        0.0,
                    ),
                }
            }
            "size" => {
                if a.len() == 1 && sized(&a[0]) {
                    (Type::Int, 0.0)
                } else {
                    (
                        self.no_overload(Anchor::Call(name.into()), name, None, a),
                        0.0,
                    )
                }
            }
            "int" => (Type::Int, 0.0),
            "uint" => (Type::Uint, 0.0),
            "double" => (Type::Double, 0.0),
            "string" => (Type::String { max: arg_size(a) }, traverse_first(a)),
            "bytes" => (Type::Bytes { max: arg_size(a) }, traverse_first(a)),
            "bool" => (Type::Bool, 0.0),
            "dyn" => (Type::Dyn, 0.0),
            "type" => (Type::TypeValue, 0.0),
            "duration" => (Type::Duration, 0.0),
            "timestamp" => (Type::Timestamp, 0.0),
            "matches" if a.len() == 2 => (Type::Bool, regex_cost(&a[0], &a[1])),
            "quantity" => (opaque("kubernetes.Quantity"), traverse_first(a)),
            "isQuantity" | "isURL" | "isIP" | "isCIDR" | "isSemver" => {
                (Type::Bool, traverse_first(a))
            }
            "url" => (opaque("kubernetes.URL"), traverse_first(a)),
            "ip" => (opaque("net.IP"), traverse_first(a)),
            "cidr" => (opaque("net.CIDR"), traverse_first(a)),
            "semver" => (opaque("kubernetes.Semver"), traverse_first(a)),
            _ => {
                self.err(
                    Anchor::Call(name.to_string()),
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                (Type::Dyn, 0.0)
            }
        }
    }

    fn arith(&mut self, name: &str, a: &[Type]) -> (Type, Cost) {
        let (l, r) = (a[0].clone(), a.get(1).cloned().unwrap_or(Type::Dyn));
        use Type::*;
        let t = match (name, &l, &r) {
            (_, Dyn, x) | (_, x, Dyn) => Some(if x.is_dyn() { Dyn } else { x.clone() }),
            ("_%_", Int, Int) | ("_%_", Uint, Uint) => Some(l.clone()),
            ("_%_", ..) => None,
            (_, Int, Int) | (_, Uint, Uint) | (_, Double, Double) => Some(l.clone()),
            ("_+_", String { max: x }, String { max: y }) => Some(String {
                max: x.saturating_add(*y),
            }),
            ("_+_", Bytes { max: x }, Bytes { max: y }) => Some(Bytes {
                max: x.saturating_add(*y),
            }),
            ("_+_", List { elem: e1, max: x }, List { elem: e2, max: y }) => Some(List {
                elem: Box::new(if same(e1, e2) { pick(e1, e2) } else { Dyn }),
                max: x.saturating_add(*y),
            }),
            ("_+_", Timestamp, Duration) | ("_+_", Duration, Timestamp) => Some(Timestamp),
            ("_+_", Duration, Duration) | ("_-_", Duration, Duration) => Some(Duration),
            ("_-_", Timestamp, Timestamp) => Some(Duration),
            ("_-_", Timestamp, Duration) => Some(Timestamp),
            _ => None,
        };
        match t {
            Some(t) => {
                let c = if matches!(t, String { .. } | Bytes { .. } | List { .. }) {
                    traverse(&t, 0.1)
                } else {
                    0.0
                };
                (t, c)
            }
            None => {
                let sym = match name {
                    "_+_" => "+",
                    "_-_" => "-",
                    "_*_" => "*",
                    "_/_" => "/",
                    _ => "%",
                };
                (self.no_overload(Anchor::Op(sym), name, None, a), 0.0)
            }
        }
    }

    fn method(&mut self, name: &str, r: &Type, a: &[Type]) -> (Type, Cost) {
        let anchor = Anchor::Call(name.to_string());
        let list_elem = match r {
            Type::List { elem, .. } => Some((**elem).clone()),
            _ => None,
        };
        let string_only = |t: &Type| is_str(t);
        let t = match name {
            "size" if sized(r) => (Type::Int, 0.0),
            "contains" | "startsWith" | "endsWith" if string_only(r) => (
                Type::Bool,
                (size_of(r) * 0.1).ceil()
                    * a.first()
                        .map_or(1.0, |x| (size_of(x) * 0.1).ceil().max(1.0)),
            ),
            "matches" if string_only(r) => {
                (Type::Bool, regex_cost(r, a.first().unwrap_or(&Type::Dyn)))
            }
            "find" if string_only(r) => (
                Type::String { max: arg_max(r) },
                regex_cost(r, a.first().unwrap_or(&Type::Dyn)),
            ),
            "findAll" if string_only(r) => (
                Type::List {
                    elem: Box::new(Type::String { max: arg_max(r) }),
                    max: arg_max(r),
                },
                regex_cost(r, a.first().unwrap_or(&Type::Dyn)),
            ),
            "charAt" | "lowerAscii" | "upperAscii" | "replace" | "substring" | "trim"
                if string_only(r) =>
            {
                (Type::String { max: arg_max(r) }, traverse(r, 0.1))
            }
            "format" if string_only(r) => (Type::string(), traverse(r, 0.1)),
            "split" if string_only(r) => (
                Type::List {
                    elem: Box::new(Type::String { max: arg_max(r) }),
                    max: arg_max(r),
                },
                traverse(r, 0.1),
            ),
            "indexOf" | "lastIndexOf" if string_only(r) || list_elem.is_some() => {
                (Type::Int, traverse(r, 0.1))
            }
            "reverse" if string_only(r) => (Type::String { max: arg_max(r) }, traverse(r, 0.1)),
            "reverse" | "slice" | "sort" | "distinct" if list_elem.is_some() || r.is_dyn() => {
                (r.clone(), size_of(r))
            }
            "join" if list_elem.is_some() || r.is_dyn() => (Type::string(), size_of(r)),
            "isSorted" if list_elem.is_some() || r.is_dyn() => (Type::Bool, size_of(r)),
            "sum" | "min" | "max" if list_elem.is_some() || r.is_dyn() => {
                (list_elem.unwrap_or(Type::Dyn), size_of(r))
            }
            "flatten" if list_elem.is_some() || r.is_dyn() => (Type::list(Type::Dyn), size_of(r)),
            "first" | "last" if list_elem.is_some() || r.is_dyn() => (
                Type::Optional(Box::new(list_elem.unwrap_or(Type::Dyn))),
                1.0,
            ),
            // optionals
            "hasValue" if matches!(r, Type::Optional(_) | Type::Dyn) => (Type::Bool, 0.0),
            "value" if matches!(r, Type::Optional(_) | Type::Dyn) => (unwrap_opt(r), 0.0),
            "orValue" if matches!(r, Type::Optional(_) | Type::Dyn) => (unwrap_opt(r), 0.0),
            "or" if matches!(r, Type::Optional(_) | Type::Dyn) => (r.clone(), 0.0),
            // timestamps and durations
            "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
            | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds"
                if matches!(r, Type::Timestamp | Type::Duration | Type::Dyn) =>
            {
                (Type::Int, 0.0)
            }
            // library types
            "isInteger"
            | "isGreaterThan"
            | "isLessThan"
            | "isLoopback"
            | "isUnspecified"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast"
            | "containsIP"
            | "containsCIDR"
                if matches!(r, Type::Opaque(_) | Type::Dyn) =>
            {
                (Type::Bool, 1.0)
            }
            "asInteger" | "sign" | "compareTo" | "family" | "prefixLength" | "major" | "minor"
            | "patch"
                if matches!(r, Type::Opaque(_) | Type::Dyn) =>
            {
                (Type::Int, 1.0)
            }
            "asApproximateFloat" if matches!(r, Type::Opaque(_) | Type::Dyn) => (Type::Double, 1.0),
            "add" | "sub" if matches!(r, Type::Opaque(_) | Type::Dyn) => (r.clone(), 1.0),
            "masked" if matches!(r, Type::Opaque(_) | Type::Dyn) => (opaque("net.CIDR"), 1.0),
            "ip" if matches!(r, Type::Opaque(_) | Type::Dyn) => (opaque("net.IP"), 1.0),
            "string" if matches!(r, Type::Opaque(_) | Type::Dyn) => (Type::string(), 1.0),
            "getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath"
                if matches!(r, Type::Opaque(_) | Type::Dyn) =>
            {
                (Type::string(), 1.0)
            }
            "getQuery" if matches!(r, Type::Opaque(_) | Type::Dyn) => {
                (Type::map(Type::string(), Type::list(Type::string())), 1.0)
            }
            "validate" if matches!(r, Type::Opaque(_) | Type::Dyn) => (
                Type::Optional(Box::new(Type::list(Type::string()))),
                a.first().map_or(1.0, |x| traverse(x, 0.1)),
            ),
            // the authorizer library of admission policies
            "group" | "resource" | "subresource" | "namespace" | "name" | "path"
            | "serviceAccount"
                if is_authz(r) || r.is_dyn() =>
            {
                (opaque("kubernetes.authorization.ResourceCheck"), 1.0)
            }
            "check" if is_authz(r) || r.is_dyn() => {
                (opaque("kubernetes.authorization.Decision"), 350_000.0)
            }
            "allowed" | "errored" if is_authz(r) || r.is_dyn() => (Type::Bool, 1.0),
            "reason" | "error" if is_authz(r) || r.is_dyn() => (Type::string(), 1.0),
            _ if r.is_dyn() && known_method(name) => (Type::Dyn, 1.0),
            _ if known_method(name) => {
                let t = self.no_overload(anchor, name, Some(r), a);
                (t, 0.0)
            }
            _ => {
                self.err(
                    anchor,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                (Type::Dyn, 0.0)
            }
        };
        t
    }
}

fn is_authz(t: &Type) -> bool {
    matches!(t, Type::Opaque(n) if n.starts_with("kubernetes.authorization"))
}

fn sized(t: &Type) -> bool {
    matches!(
        t,
        Type::String { .. } | Type::Bytes { .. } | Type::List { .. } | Type::Map { .. } | Type::Dyn
    )
}

fn unwrap_opt(t: &Type) -> Type {
    match t {
        Type::Optional(i) => (**i).clone(),
        _ => Type::Dyn,
    }
}

fn arg_size(a: &[Type]) -> u64 {
    a.first()
        .and_then(Type::max_size)
        .unwrap_or(MAX_REQUEST_SIZE)
}

fn arg_max(t: &Type) -> u64 {
    t.max_size().unwrap_or(MAX_REQUEST_SIZE)
}

fn traverse_first(a: &[Type]) -> f64 {
    a.first().map_or(0.0, |t| {
        if t.max_size().is_some() {
            traverse(t, 0.1)
        } else {
            0.0
        }
    })
}

fn regex_cost(s: &Type, re: &Type) -> f64 {
    traverse(s, 0.25).max(1.0) * traverse(re, 0.25).max(1.0)
}

fn known_method(name: &str) -> bool {
    const METHODS: &[&str] = &[
        "size",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "find",
        "findAll",
        "charAt",
        "lowerAscii",
        "upperAscii",
        "replace",
        "substring",
        "trim",
        "format",
        "split",
        "indexOf",
        "lastIndexOf",
        "reverse",
        "slice",
        "sort",
        "distinct",
        "join",
        "isSorted",
        "sum",
        "min",
        "max",
        "flatten",
        "first",
        "last",
        "hasValue",
        "value",
        "orValue",
        "or",
        "getFullYear",
        "getMonth",
        "getDayOfYear",
        "getDayOfMonth",
        "getDate",
        "getDayOfWeek",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
        "isInteger",
        "isGreaterThan",
        "isLessThan",
        "isLoopback",
        "isUnspecified",
        "isLinkLocalMulticast",
        "isLinkLocalUnicast",
        "isGlobalUnicast",
        "containsIP",
        "containsCIDR",
        "asInteger",
        "sign",
        "compareTo",
        "family",
        "prefixLength",
        "major",
        "minor",
        "patch",
        "asApproximateFloat",
        "add",
        "sub",
        "masked",
        "ip",
        "string",
        "getScheme",
        "getHost",
        "getHostname",
        "getPort",
        "getEscapedPath",
        "getQuery",
        "validate",
    ];
    METHODS.contains(&name)
}

/// Result types of the namespaced library functions.
fn namespaced(name: &str, a: &[Type]) -> Option<Type> {
    let first = || a.first().cloned().unwrap_or(Type::Dyn);
    Some(match name {
        "math.ceil" | "math.floor" | "math.round" | "math.trunc" | "math.sqrt" => Type::Double,
        "math.abs" | "math.sign" | "math.bitNot" => first(),
        "math.bitAnd" | "math.bitOr" | "math.bitXor" | "math.bitShiftLeft"
        | "math.bitShiftRight" => first(),
        "math.isInf" | "math.isNaN" | "math.isFinite" => Type::Bool,
        "math.greatest" | "math.least" => match first() {
            Type::List { elem, .. } => *elem,
            t => t,
        },
        "sets.contains" | "sets.equivalent" | "sets.intersects" => Type::Bool,
        "strings.quote" => Type::string(),
        "lists.range" => Type::list(Type::Int),
        "base64.decode" => Type::Bytes {
            max: MAX_REQUEST_SIZE,
        },
        "base64.encode" => Type::string(),
        "jsonpatch.escapeKey" => Type::string(),
        "ip.isCanonical" => Type::Bool,
        "optional.of" | "optional.ofNonZeroValue" => Type::Optional(Box::new(first())),
        "optional.none" => Type::Optional(Box::new(Type::Dyn)),
        "format.named" => Type::Optional(Box::new(Type::Opaque("kubernetes.NamedFormat"))),
        n if n.starts_with("format.")
            && [
                "dns1123Label",
                "dns1123Subdomain",
                "dns1035Label",
                "dns1035LabelPrefix",
                "dns1123LabelPrefix",
                "dns1123SubdomainPrefix",
                "qualifiedName",
                "labelValue",
                "uri",
                "uuid",
                "byte",
                "date",
                "datetime",
            ]
            .contains(&&n["format.".len()..]) =>
        {
            Type::Opaque("kubernetes.NamedFormat")
        }
        _ => return None,
    })
}

/// The larger sizes of two types of the same shape (`a` when the shapes differ).
pub fn merge_sizes(a: &Type, b: &Type) -> Type {
    match (a, b) {
        (Type::String { max: x }, Type::String { max: y }) => Type::String { max: (*x).max(*y) },
        (Type::Bytes { max: x }, Type::Bytes { max: y }) => Type::Bytes { max: (*x).max(*y) },
        (Type::List { elem: e1, max: x }, Type::List { elem: e2, max: y }) => Type::List {
            elem: Box::new(merge_sizes(e1, e2)),
            max: (*x).max(*y),
        },
        (
            Type::Map {
                key: k1,
                value: v1,
                max: x,
            },
            Type::Map {
                key: k2,
                value: v2,
                max: y,
            },
        ) => Type::Map {
            key: Box::new(merge_sizes(k1, k2)),
            value: Box::new(merge_sizes(v1, v2)),
            max: (*x).max(*y),
        },
        _ => a.clone(),
    }
}

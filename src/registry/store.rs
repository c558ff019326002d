//! The generic store: every resource-independent rule of create, get, list, update, patch and
//! delete (k8s `registry/generic/registry/store.go` is the model).
//!
//! A resource contributes only a [`Resource`] entry and a small stateless strategy
//! ([`super::strategy`]). Objects travel as JSON values; the store settles every
//! non-deterministic field (uid, timestamps, generated names) *before* proposing a transaction,
//! so apply stays deterministic. This is the only place where `kv::Error` becomes a `Status`.
//!
//! Keys: `/<group or "core">/<resource>/[<namespace>/]<name>`. Values are the object's JSON
//! without `metadata.resourceVersion`, which is always derived from the key's mod revision.

use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::kv::{self, Compare, KeyValue, Kv, Op, Revision, Txn};
use crate::meta::fields::FieldSelector;
use crate::meta::labels::Selector;
use crate::meta::status::{GroupResource, Status};
use crate::meta::validation;
pub use crate::registry::object::{finalizers, meta, meta_mut, meta_str, Part, WriteOptions};
use crate::registry::prepare;
use crate::registry::{deletion, field_selectors, Registry, Resource};
use std::sync::Arc;

/// How long a read for a future resourceVersion waits before answering 504.
const FUTURE_RV_WAIT: Duration = Duration::from_secs(3);
/// How many times create retries a generated name that clashes.
const GENERATE_NAME_RETRIES: usize = 8;
/// Internal retries of a read-modify-write that lost a race (no client precondition).
const UPDATE_RETRIES: usize = 16;

/// Translates a storage error into the API error, once.
pub fn kv_status(err: kv::Error) -> Status {
    match err {
        kv::Error::Compacted { .. } => {
            Status::gone("The resourceVersion for the provided list is too old.")
        }
        kv::Error::FutureRevision { requested, current } => {
            Status::too_large_resource_version(requested, current)
        }
        kv::Error::Timeout(m) => Status::timeout(format!("Timeout: {m}"), 1),
        kv::Error::Unavailable(m) => Status::service_unavailable(m),
        kv::Error::Storage(m) => Status::internal(m),
        kv::Error::Invalid(m) => Status::bad_request(m),
    }
}

/// `resourceVersion` / `resourceVersionMatch` of a read, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadAt {
    /// Unset: most recent, linearizable.
    Latest,
    /// "0": any, from local state.
    Any,
    /// At least this revision.
    NotOlderThan(Revision),
    /// Exactly this revision.
    Exact(Revision),
}

/// Parses a resourceVersion string the way clients send it.
pub fn parse_rv(s: &str) -> Result<Revision, Status> {
    s.parse::<Revision>()
        .ok()
        .filter(|r| *r >= 0)
        .ok_or_else(|| Status::bad_request(format!("invalid resource version: {s:?}")))
}

/// Options of a LIST (and of the initial state of a WATCH).
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    pub label_selector: Option<Selector>,
    pub field_selector: Option<FieldSelector>,
    pub limit: usize,
    pub continue_token: Option<String>,
    pub read_at: Option<ReadAt>,
}

/// Options of a DELETE.
#[derive(Clone, Debug, Default)]
pub struct DeleteOptions {
    pub write: WriteOptions,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
    pub propagation_policy: Option<String>,
    /// The deprecated `orphanDependents` (wins over `propagationPolicy`, as in kube).
    pub orphan_dependents: Option<bool>,
    pub grace_period_seconds: Option<i64>,
}

/// A page of a list.
#[derive(Debug)]
pub struct ListResult {
    pub items: Vec<Value>,
    pub revision: Revision,
    pub continue_token: Option<String>,
    pub remaining: Option<i64>,
}

/// What a DELETE did.
#[derive(Debug)]
pub enum Deleted {
    /// The object is gone; this was its last state.
    Gone(Value),
    /// The object stays (finalizers); this is its new state with a deletionTimestamp.
    Pending(Value),
}

/// Where an object lives: a resource plus, for namespaced resources, a namespace.
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    pub info: &'a Resource,
    pub namespace: Option<&'a str>,
}

impl<'a> Scope<'a> {
    pub fn gr(&self) -> GroupResource<'a> {
        self.info.gr()
    }

    /// The storage group's segment: versions and cohabiting resources share one key space.
    fn group_segment(&self) -> &'a str {
        if self.info.storage_group.is_empty() {
            "core"
        } else {
            &self.info.storage_group
        }
    }

    /// Key prefix of the resource (and namespace, when given).
    pub fn prefix(&self) -> String {
        match (self.info.namespaced, self.namespace) {
            (true, Some(ns)) => format!("/{}/{}/{}/", self.group_segment(), self.info.resource, ns),
            _ => format!("/{}/{}/", self.group_segment(), self.info.resource),
        }
    }

    pub fn key(&self, name: &str) -> Vec<u8> {
        format!("{}{}", self.prefix(), name).into_bytes()
    }
}

/// kube's `etcd_request_duration_seconds`: one storage call of `operation` (`get`, `list`,
/// `create`, `update`, `delete`) on the scope's resource, `type` being `resource.group` as
/// kube labels it.
fn record_storage(operation: &'static str, scope: Scope<'_>, started: Instant) {
    metrics::histogram!(
        "etcd_request_duration_seconds",
        "operation" => operation,
        "type" => scope.gr().to_string()
    )
    .record(started.elapsed().as_secs_f64());
}

/// The end of the key range that starts with `prefix`.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0xff]
}

/// Decodes a stored value and stamps its resourceVersion.
pub fn decode(kv: &KeyValue) -> Result<Value, Status> {
    let opened = super::encryption::open(&kv.key, &kv.value).map_err(|e| {
        Status::internal(format!(
            "cannot read the object at {:?}: {e}",
            String::from_utf8_lossy(&kv.key)
        ))
    })?;
    let bytes = opened.as_deref().unwrap_or(&kv.value);
    let mut obj: Value = serde_json::from_slice(bytes).map_err(|e| {
        Status::internal(format!(
            "corrupt object at {:?}: {e}",
            String::from_utf8_lossy(&kv.key)
        ))
    })?;
    set_rv(&mut obj, kv.mod_revision);
    Ok(obj)
}

fn set_rv(obj: &mut Value, rev: Revision) {
    crate::registry::encoding::stamp_resource_version(obj, rev.to_string());
}

/// The stored bytes of `obj` at `key`: its JSON without resourceVersion, sealed when
/// encryption at rest covers the resource (an internal error when it cannot be sealed, a
/// KMS plugin not ready, say: the write fails).
pub(crate) fn encode(key: &[u8], obj: &Value) -> Result<Vec<u8>, Status> {
    let mut o = obj.clone();
    if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("resourceVersion");
    }
    super::encryption::seal(key, serde_json::to_vec(&o).unwrap_or_default()).map_err(|e| {
        Status::internal(format!(
            "cannot write the object at {:?}: {e}",
            String::from_utf8_lossy(key)
        ))
    })
}

/// The compares and writes of charged objects (quotas) in a write's transaction.
fn add_charges(
    charged: &[crate::registry::object::Charged],
    compares: &mut Vec<Compare>,
    success: &mut Vec<Op>,
) -> Result<(), Status> {
    for c in charged {
        compares.push(Compare::ModRevision(c.key.clone(), c.mod_revision));
        success.push(Op::Put {
            value: encode(&c.key, &c.value)?,
            key: c.key.clone(),
        });
    }
    Ok(())
}

/// Characters kube uses for generated name suffixes (no vowels, no confusable digits).
const SUFFIX_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn random_suffix() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    (0..5)
        .map(|_| SUFFIX_ALPHABET[rng.gen_range(0..SUFFIX_ALPHABET.len())] as char)
        .collect()
}

/// The generic store over the replicated KV.
#[derive(Clone)]
pub struct Store {
    kv: Kv,
    registry: Arc<Registry>,
    /// Service creates on this replica allocate one at a time (no lost races among
    /// themselves); across replicas the write's range compare decides.
    allocations: std::sync::Arc<tokio::sync::Mutex<()>>,
    /// How long an expiring object (an Event) lives after its last write.
    ttl: Duration,
}

impl Store {
    pub fn new(kv: Kv, registry: Arc<Registry>) -> Store {
        Store {
            kv,
            registry,
            allocations: Default::default(),
            ttl: Duration::from_secs(3600),
        }
    }

    /// The store with `--event-ttl` set to `ttl`.
    pub fn with_event_ttl(mut self, ttl: Duration) -> Store {
        self.ttl = ttl;
        self
    }

    /// The time index write for an expiring object's write (none for the others).
    fn ttl_ops(&self, info: &Resource, key: &[u8]) -> Option<Op> {
        info.strategy
            .expires()
            .then(|| super::ttl::index_op(key, self.ttl))
    }

    pub fn kv(&self) -> &Kv {
        &self.kv
    }

    /// The served resources.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// Settles the revision a read is served at: a linearizable barrier for "most recent", a
    /// bounded wait for NotOlderThan, nothing for "any"/exact.
    async fn settle(&self, at: ReadAt) -> Result<Option<Revision>, Status> {
        match at {
            ReadAt::Latest => {
                self.kv.read_barrier().await.map_err(kv_status)?;
                Ok(None)
            }
            ReadAt::Any => Ok(None),
            ReadAt::NotOlderThan(rev) => {
                if self.kv.current_revision() < rev
                    && !self.kv.wait_for_revision(rev, FUTURE_RV_WAIT).await
                {
                    return Err(Status::too_large_resource_version(
                        rev,
                        self.kv.current_revision(),
                    ));
                }
                Ok(None)
            }
            ReadAt::Exact(rev) => {
                if self.kv.current_revision() < rev
                    && !self.kv.wait_for_revision(rev, FUTURE_RV_WAIT).await
                {
                    return Err(Status::too_large_resource_version(
                        rev,
                        self.kv.current_revision(),
                    ));
                }
                Ok(Some(rev))
            }
        }
    }

    /// GET of one object.
    pub async fn get(&self, scope: Scope<'_>, name: &str, at: ReadAt) -> Result<Value, Status> {
        let at_rev = self.settle(at).await?;
        self.get_local(scope, name, at_rev)
    }

    fn get_local(
        &self,
        scope: Scope<'_>,
        name: &str,
        at: Option<Revision>,
    ) -> Result<Value, Status> {
        let started = Instant::now();
        let got = self.kv.get(&scope.key(name), at);
        record_storage("get", scope, started);
        match got.map_err(kv_status)? {
            Some(kv) => decode(&kv),
            None => Err(Status::not_found(scope.gr(), name)),
        }
    }

    /// One write transaction on `scope`'s resource, timed as kube times its etcd calls.
    async fn write(
        &self,
        op: &'static str,
        scope: Scope<'_>,
        txn: Txn,
    ) -> Result<kv::TxnResponse, Status> {
        let started = Instant::now();
        let r = self.kv.txn(txn).await;
        record_storage(op, scope, started);
        r.map_err(kv_status)
    }

    /// Raw current state of a key (no barrier); for read-modify-write loops.
    fn current(&self, scope: Scope<'_>, name: &str) -> Result<Option<KeyValue>, Status> {
        self.kv.get(&scope.key(name), None).map_err(kv_status)
    }

    /// LIST with selectors and pagination.
    pub async fn list(&self, scope: Scope<'_>, opts: &ListOptions) -> Result<ListResult, Status> {
        let prefix = scope.prefix().into_bytes();
        let end = prefix_end(&prefix);
        let mut known_remaining = None;
        let (mut start, at) = match &opts.continue_token {
            Some(token) => {
                let (rev, start_suffix, rc) = decode_continue(token)?;
                known_remaining = rc;
                let mut start = prefix.clone();
                start.extend_from_slice(start_suffix.as_bytes());
                if rev < self.kv.compacted_revision() {
                    return Err(expired_continue(&prefix, &start, self));
                }
                // The token may come from another replica, ahead of this one: wait (bounded)
                // until this one has applied its revision.
                self.settle(ReadAt::Exact(rev)).await?;
                (start, Some(rev))
            }
            None => {
                let at = self.settle(opts.read_at.unwrap_or(ReadAt::Latest)).await?;
                (prefix.clone(), at)
            }
        };
        let filtered = opts.label_selector.as_ref().is_some_and(|s| !s.is_empty())
            || opts.field_selector.as_ref().is_some_and(|s| !s.is_empty());
        let mut items = Vec::new();
        let mut revision = None;
        let mut remaining = None;
        let mut continue_token = None;
        loop {
            let batch = if opts.limit > 0 {
                (opts.limit - items.len()).max(if filtered { 256 } else { 0 })
            } else {
                0
            };
            // An unfiltered continue page whose token says how many keys are left reads
            // only its page; otherwise the range is counted for remainingItemCount.
            let count_from_token = known_remaining.filter(|_| !filtered);
            let started = Instant::now();
            let res = match count_from_token {
                Some(_) => self.kv.range_page(&start, &end, at.or(revision), batch),
                None => self.kv.range(&start, &end, at.or(revision), batch),
            };
            record_storage("list", scope, started);
            let res = res.map_err(|e| match e {
                kv::Error::Compacted { .. } if opts.continue_token.is_some() => {
                    expired_continue(&prefix, &start, self)
                }
                kv::Error::Compacted { .. } => Status::gone(format!(
                    "too old resource version: {} ({})",
                    at.unwrap_or_default(),
                    self.kv.compacted_revision()
                )),
                other => kv_status(other),
            })?;
            let revision_now = *revision.get_or_insert(res.revision);
            let mut last_key = None;
            let n = res.kvs.len();
            for (i, kv) in res.kvs.into_iter().enumerate() {
                let obj = decode(&kv)?;
                last_key = Some(kv.key);
                if self.matches(scope, opts, &obj) {
                    items.push(obj);
                }
                if opts.limit > 0 && items.len() >= opts.limit {
                    let more = res.more || i + 1 < n;
                    if more {
                        let key = last_key.take().unwrap_or_default();
                        let suffix = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
                        if !filtered {
                            let total = count_from_token.unwrap_or(res.count);
                            remaining = Some((total - (i as i64 + 1)).max(0));
                        }
                        continue_token = Some(encode_continue(
                            revision_now,
                            &format!("{suffix}\u{0}"),
                            remaining,
                        ));
                    }
                    return Ok(ListResult {
                        items,
                        revision: revision_now,
                        continue_token,
                        remaining: remaining.filter(|r| *r > 0),
                    });
                }
            }
            if !res.more {
                break;
            }
            match last_key {
                Some(mut k) => {
                    k.push(0);
                    start = k;
                }
                None => break,
            }
        }
        Ok(ListResult {
            items,
            revision: revision.unwrap_or_else(|| self.kv.current_revision()),
            continue_token: None,
            remaining: None,
        })
    }

    /// Whether an object passes a list's selectors.
    pub fn matches(&self, scope: Scope<'_>, opts: &ListOptions, obj: &Value) -> bool {
        if let Some(sel) = &opts.label_selector {
            let empty = Map::new();
            let labels = meta(obj)
                .get("labels")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            if !sel.matches(labels) {
                return false;
            }
        }
        if let Some(sel) = &opts.field_selector {
            let fields = field_selectors::field_set(&*scope.info.strategy, obj);
            if !sel.matches(&fields) {
                return false;
            }
        }
        true
    }

    /// Checks that the namespace of a new object exists and is not terminating.
    /// Read-your-writes across replicas: before a failure that this replica's local state
    /// decided (not found, a precondition or conflict, a failed update function) is answered,
    /// catch up with the leader once (a read barrier) and decide again — kube's
    /// GuaranteedUpdate re-reads from quorum the same way. `Ok(true)`: decide again.
    async fn refresh_once(&self, fresh: &mut bool) -> Result<bool, Status> {
        if *fresh {
            return Ok(false);
        }
        self.kv.read_barrier().await.map_err(kv_status)?;
        *fresh = true;
        Ok(true)
    }

    async fn check_namespace(&self, scope: Scope<'_>, name: &str) -> Result<(), Status> {
        let mut fresh = false;
        loop {
            let r = self.check_namespace_once(scope, name);
            if r.is_err() && self.refresh_once(&mut fresh).await? {
                continue;
            }
            return r;
        }
    }

    fn check_namespace_once(&self, scope: Scope<'_>, name: &str) -> Result<(), Status> {
        let Some(ns) = scope.namespace.filter(|_| scope.info.namespaced) else {
            return Ok(());
        };
        let ns_scope = Scope {
            info: &self.registry.builtin("", "v1", "namespaces"),
            namespace: None,
        };
        match self.current(ns_scope, ns)? {
            None => Err(Status::not_found(ns_scope.gr(), ns)),
            Some(kv) => {
                let nsobj = decode(&kv)?;
                if !meta_str(&nsobj, "deletionTimestamp").is_empty() {
                    let mut s = Status::forbidden(
                        scope.gr(),
                        name,
                        &format!(
                            "unable to create new content in namespace {ns} because it is being terminated"
                        ),
                    );
                    s.details = Some(
                        json!({"kind": scope.info.resource, "group": scope.info.group, "causes": [{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}]}),
                    );
                    return Err(s);
                }
                Ok(())
            }
        }
    }

    /// Assigns ClusterIPs and NodePorts to a new Service (settled before proposing); returns
    /// the revision of the services list it allocated from.
    async fn allocate_service(&self, info: &Resource, svc: &mut Value) -> Result<Revision, Status> {
        let all = self
            .list(
                Scope {
                    info,
                    namespace: None,
                },
                &ListOptions {
                    read_at: Some(ReadAt::Any),
                    ..Default::default()
                },
            )
            .await?;
        let mut used = crate::registry::allocate::InUse::default();
        for s in &all.items {
            used.add_service(s);
        }
        crate::registry::allocate::allocate_service(svc, &used, &mut rand::thread_rng()).map_err(
            |e| {
                Status::invalid(
                    "Service",
                    "",
                    meta_str(svc, "name"),
                    std::slice::from_ref(&e),
                )
            },
        )?;
        Ok(all.revision)
    }

    /// CREATE. `obj` is the decoded body; the namespace has been reconciled with the URL.
    pub async fn create(
        &self,
        scope: Scope<'_>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let info = scope.info;
        {
            let m = meta_mut(&mut obj);
            for f in [
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "selfLink",
            ] {
                m.remove(f);
            }
            if info.generation {
                m.insert("generation".into(), json!(1));
            } else {
                m.remove("generation");
            }
            m.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
            m.insert("creationTimestamp".into(), json!(opts.now));
        }
        // kube's field manager sees the object as decoded, before the strategy and admission.
        crate::registry::managed::record_update(&mut obj, opts, info, Part::Main, None);
        prepare::prepare_for_create(info, &mut obj, opts.requester.as_ref());
        drop_empty_meta(&mut obj);
        let name_given = !meta_str(&obj, "name").is_empty();
        let generate_name = meta_str(&obj, "generateName").to_string();
        // As upstream: the name is generated first, then the object is validated.
        if !name_given && !generate_name.is_empty() {
            let name = format!("{generate_name}{}", random_suffix());
            meta_mut(&mut obj).insert("name".into(), json!(name));
        }
        if let Some(mutate) = &opts.mutate {
            obj = mutate(obj, None).await?;
            info.strategy.after_mutating_admission(&mut obj);
        }
        let mut errs = validation::validate_object_meta_with(
            &obj,
            info.namespaced,
            info.name_rule,
            info.strategy.core_object_meta(),
        );
        errs.extend(info.strategy.validate(&obj));
        if !errs.is_empty() {
            return Err(Status::invalid(
                &info.kind,
                &info.group,
                meta_str(&obj, "name"),
                &errs,
            ));
        }
        if !opts.skip_namespace_check {
            self.check_namespace(scope, meta_str(&obj, "name")).await?;
        }
        if let Some(admit) = &opts.admit {
            admit(&obj, None).await?;
        }
        let mut charged = match &opts.charge {
            Some(charge) => charge(&obj, None).await?,
            None => Vec::new(),
        };
        let mut charge_retries = 0;
        // Service IPs and ports are allocated from a list of the services at revision R; the
        // write commits only if no service changed since R, so two concurrent creates can
        // never get the same address (kube's allocators guarantee uniqueness too).
        let allocating = info.strategy.allocates();
        let unallocated = allocating.then(|| obj.clone());
        let mut allocated_at = None;
        let _allocating = match allocating {
            true => Some(self.allocations.clone().lock_owned().await),
            false => None,
        };
        if allocating {
            allocated_at = Some(self.allocate_service(info, &mut obj).await?);
        }
        let attempts = if name_given { 1 } else { GENERATE_NAME_RETRIES };
        let mut allocation_retries = 0;
        let mut attempt = 0;
        while attempt < attempts {
            if attempt > 0 {
                let name = format!("{generate_name}{}", random_suffix());
                meta_mut(&mut obj).insert("name".into(), json!(name));
            }
            crate::registry::encoding::canonicalize(info, &mut obj);
            let name = meta_str(&obj, "name").to_string();
            let key = scope.key(&name);
            if opts.dry_run {
                if self.current(scope, &name)?.is_some() {
                    if attempt + 1 < attempts {
                        attempt += 1;
                        continue;
                    }
                    return Err(Status::already_exists(scope.gr(), &name));
                }
                return Ok(obj);
            }
            let mut compares = vec![Compare::Absent(key.clone())];
            if let Some(rev) = allocated_at {
                let start = Scope {
                    info,
                    namespace: None,
                }
                .prefix()
                .into_bytes();
                compares.push(Compare::RangeUnchangedSince {
                    end: prefix_end(&start),
                    start,
                    rev,
                });
            }
            let ttl = self.ttl_ops(info, &key);
            let mut success = vec![Op::Put {
                value: encode(&key, &obj)?,
                key,
            }];
            success.extend(ttl);
            add_charges(&charged, &mut compares, &mut success)?;
            let resp = self
                .write("create", scope, Txn { compares, success })
                .await?;
            if resp.succeeded {
                set_rv(&mut obj, resp.revision);
                return Ok(obj);
            }
            let name_taken = resp.current.first().is_some_and(|c| c.is_some());
            if !name_taken && !charged.is_empty() {
                // A quota changed since it was read (another write charged it): charge again.
                charge_retries += 1;
                if charge_retries > 64 {
                    return Err(Status::conflict(
                        scope.gr(),
                        &name,
                        "the resource quotas kept changing; try again",
                    ));
                }
                tokio::time::sleep(std::time::Duration::from_millis(2 * charge_retries.min(25)))
                    .await;
                if let Some(charge) = &opts.charge {
                    charged = charge(&obj, None).await?;
                }
                continue;
            }
            if !name_taken {
                if let Some(base) = &unallocated {
                    // Another service was written since the allocation: allocate again.
                    allocation_retries += 1;
                    if allocation_retries > 32 {
                        return Err(Status::conflict(
                            scope.gr(),
                            &name,
                            "the service allocations kept changing; try again",
                        ));
                    }
                    let keep_name = meta_str(&obj, "name").to_string();
                    let managed = obj["metadata"].get("managedFields").cloned();
                    obj = base.clone();
                    meta_mut(&mut obj).insert("name".into(), json!(keep_name));
                    allocated_at = Some(self.allocate_service(info, &mut obj).await?);
                    if let Some(m) = managed {
                        meta_mut(&mut obj).insert("managedFields".into(), m);
                    }
                    continue;
                }
            }
            if attempt + 1 == attempts {
                return Err(Status::already_exists(scope.gr(), &name));
            }
            attempt += 1;
        }
        Err(Status::internal("unreachable: create loop ended"))
    }

    /// Read-modify-write of one object. `modify` receives the current object (with its
    /// resourceVersion) and returns the desired object. A resourceVersion in the desired object
    /// is a precondition (409 if stale); otherwise a lost race retries with fresh state.
    pub async fn update_with<F>(
        &self,
        scope: Scope<'_>,
        name: &str,
        part: Part,
        opts: &WriteOptions,
        mut modify: F,
    ) -> Result<Value, Status>
    where
        F: FnMut(&Value) -> Result<Value, Status>,
    {
        let info = scope.info;
        let mut fresh = false;
        for _ in 0..UPDATE_RETRIES {
            let Some(cur) = self.current(scope, name)? else {
                if self.refresh_once(&mut fresh).await? {
                    continue;
                }
                return Err(Status::not_found(scope.gr(), name));
            };
            let old = decode(&cur)?;
            let mut new = match modify(&old) {
                Ok(n) => n,
                Err(e) => {
                    if self.refresh_once(&mut fresh).await? {
                        continue;
                    }
                    return Err(e);
                }
            };
            if let Some(m) = new.get("metadata").and_then(Value::as_object) {
                if let Some(n) = m.get("name").and_then(Value::as_str) {
                    if !n.is_empty() && n != name {
                        return Err(Status::bad_request(format!(
                            "the name of the object ({n}) does not match the name on the URL ({name})"
                        )));
                    }
                }
            }
            let wanted_rv = meta_str(&new, "resourceVersion").to_string();
            if !wanted_rv.is_empty() && wanted_rv != cur.mod_revision.to_string() {
                if self.refresh_once(&mut fresh).await? {
                    continue;
                }
                return Err(Status::stale(scope.gr(), name));
            }
            // kube's field manager sees the object as sent, before the strategy and admission.
            crate::registry::managed::record_update(&mut new, opts, info, part, Some(&old));
            if part == Part::Finalize {
                prepare::prepare_for_finalize(&mut new, &old);
            } else {
                prepare::prepare_for_update(info, part, &mut new, &old, &opts.now);
            }
            drop_empty_meta(&mut new);
            if let Some(mutate) = &opts.mutate {
                new = mutate(new, Some(old.clone())).await?;
            }
            let mut errs = validation::validate_object_meta_update_with(
                &new,
                &old,
                info.strategy.core_object_meta(),
            );
            // A registry-internal write of the whole object (pods/binding) is not a client's
            // update: it is checked as an object, not against the update rules.
            if part == Part::Whole {
                errs.extend(info.strategy.validate(&new));
            } else if part == Part::Approval {
                errs.extend(info.strategy.validate_approval(&new, &old));
            } else if let Part::Sub(sub) = part {
                errs.extend(info.strategy.validate_subresource_update(sub, &new, &old));
            } else if part == Part::Status {
                errs.extend(info.strategy.validate_status_update(&new, &old));
            } else {
                errs.extend(info.strategy.validate_update(&new, &old));
            }
            if !errs.is_empty() {
                return Err(Status::invalid(&info.kind, &info.group, name, &errs));
            }
            // An object being deleted whose last finalizer went away is removed now (kube's
            // ShouldDeleteDuringUpdate). Only pods wait out a grace period (for the kubelet);
            // a grace period stored on any other kind (by an older Rafter) does not count.
            let deleting = !meta_str(&new, "deletionTimestamp").is_empty();
            let grace = match info.strategy.graceful_delete_period(&new, None) {
                None => 0,
                Some(_) => meta(&new)
                    .get("deletionGracePeriodSeconds")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
            };
            if deleting
                && finalizers(&new).is_empty()
                && grace == 0
                && !info.strategy.needs_graceful_delete(&new)
            {
                if opts.dry_run {
                    return Ok(new);
                }
                let resp = self
                    .write(
                        "delete",
                        scope,
                        Txn {
                            compares: vec![Compare::ModRevision(scope.key(name), cur.mod_revision)],
                            success: vec![Op::Delete {
                                key: scope.key(name),
                            }],
                        },
                    )
                    .await?;
                if resp.succeeded {
                    return Ok(new);
                }
                continue;
            }
            // Compared as Go would print it: unset fields filled, empty ones dropped.
            crate::registry::encoding::canonicalize(info, &mut new);
            // A value another key or provider sealed is rewritten even when unchanged (kube's
            // stale reads), so GET and PUT back re-encrypts it with the current key.
            if same_ignoring_bookkeeping(&new, &old)
                && !super::encryption::stale(&cur.key, &cur.value)
            {
                return Ok(old);
            }
            if let Some(admit) = &opts.admit {
                admit(&new, Some(&old)).await?;
            }
            let charged = match &opts.charge {
                Some(charge) => charge(&new, Some(&old)).await?,
                None => Vec::new(),
            };
            crate::registry::encoding::canonicalize(info, &mut new);
            if opts.dry_run {
                return Ok(new);
            }
            let mut compares = vec![Compare::ModRevision(scope.key(name), cur.mod_revision)];
            let mut success = vec![Op::Put {
                key: scope.key(name),
                value: encode(&scope.key(name), &new)?,
            }];
            success.extend(self.ttl_ops(info, &scope.key(name)));
            add_charges(&charged, &mut compares, &mut success)?;
            let resp = self
                .write("update", scope, Txn { compares, success })
                .await?;
            if resp.succeeded {
                set_rv(&mut new, resp.revision);
                return Ok(new);
            }
            // Lost a race: read again and decide — a deleted object is 404, a changed one
            // with a client precondition 409 (found by the chaos harness: a PUT racing a
            // DELETE answered 409 where kube answers 404).
        }
        Err(Status::stale(scope.gr(), name))
    }

    /// DELETE of one object, honouring preconditions, grace periods and finalizers as kube's
    /// generic store does (the rules are in [`super::deletion`]).
    pub async fn delete(
        &self,
        scope: Scope<'_>,
        name: &str,
        opts: &DeleteOptions,
    ) -> Result<Deleted, Status> {
        if let Some(why) = scope.info.strategy.delete_forbidden(name) {
            return Err(Status::forbidden(scope.gr(), name, why));
        }
        let req = deletion::Request {
            grace_period_seconds: opts.grace_period_seconds,
            propagation_policy: opts.propagation_policy.clone(),
            orphan_dependents: opts.orphan_dependents,
        };
        let mut fresh = false;
        for _ in 0..UPDATE_RETRIES {
            let Some(cur) = self.current(scope, name)? else {
                if self.refresh_once(&mut fresh).await? {
                    continue;
                }
                return Err(Status::not_found(scope.gr(), name));
            };
            let obj = decode(&cur)?;
            let preconditions_hold = opts
                .precondition_uid
                .as_ref()
                .is_none_or(|u| u == meta_str(&obj, "uid"))
                && opts
                    .precondition_rv
                    .as_ref()
                    .is_none_or(|rv| *rv == cur.mod_revision.to_string());
            if !preconditions_hold && self.refresh_once(&mut fresh).await? {
                continue;
            }
            if let Some(uid) = &opts.precondition_uid {
                let have = meta_str(&obj, "uid");
                if uid != have {
                    return Err(Status::conflict(
                        scope.gr(),
                        name,
                        &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {have}"),
                    ));
                }
            }
            if let Some(rv) = &opts.precondition_rv {
                let have = cur.mod_revision.to_string();
                if *rv != have {
                    return Err(Status::conflict(
                        scope.gr(),
                        name,
                        &format!("Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {have}"),
                    ));
                }
            }
            if let Some(admit) = &opts.write.admit {
                admit(&obj, None).await?;
            }
            let (mut new, then_remove) =
                match deletion::plan(scope.info, &obj, &req, &opts.write.now) {
                    deletion::Plan::Keep => return Ok(Deleted::Pending(obj)),
                    deletion::Plan::Remove => {
                        if opts.write.dry_run {
                            return Ok(Deleted::Gone(obj));
                        }
                        if self.remove(scope, name, cur.mod_revision).await? {
                            return Ok(Deleted::Gone(obj));
                        }
                        continue;
                    }
                    deletion::Plan::Write { obj, then_remove } => (obj, then_remove),
                };
            crate::registry::encoding::canonicalize(scope.info, &mut new);
            if opts.write.dry_run {
                return Ok(if then_remove {
                    Deleted::Gone(new)
                } else {
                    Deleted::Pending(new)
                });
            }
            let resp = self
                .write(
                    "update",
                    scope,
                    Txn {
                        compares: vec![Compare::ModRevision(scope.key(name), cur.mod_revision)],
                        success: vec![Op::Put {
                            key: scope.key(name),
                            value: encode(&scope.key(name), &new)?,
                        }],
                    },
                )
                .await?;
            if !resp.succeeded {
                continue;
            }
            let mut new = new;
            set_rv(&mut new, resp.revision);
            if !then_remove {
                return Ok(Deleted::Pending(new));
            }
            // A zero grace period: the object goes right after its update. Someone else may
            // have removed (or changed) it in between; then the last state we wrote answers.
            if self.remove(scope, name, resp.revision).await?
                || self.current(scope, name)?.is_none()
            {
                return Ok(Deleted::Gone(new));
            }
        }
        Err(Status::stale(scope.gr(), name))
    }

    /// Removes a key if it is still at `revision`; false when it changed in between.
    async fn remove(
        &self,
        scope: Scope<'_>,
        name: &str,
        revision: Revision,
    ) -> Result<bool, Status> {
        let resp = self
            .write(
                "delete",
                scope,
                Txn {
                    compares: vec![Compare::ModRevision(scope.key(name), revision)],
                    success: vec![Op::Delete {
                        key: scope.key(name),
                    }],
                },
            )
            .await?;
        Ok(resp.succeeded)
    }

    /// DELETECOLLECTION: deletes every object the list options select; returns the deleted
    /// (or now deleting) objects.
    pub async fn delete_collection(
        &self,
        scope: Scope<'_>,
        list: &ListOptions,
        opts: &DeleteOptions,
    ) -> Result<(Vec<Value>, Revision), Status> {
        let listed = self.list(scope, list).await?;
        let mut out = Vec::with_capacity(listed.items.len());
        for item in listed.items {
            let name = meta_str(&item, "name").to_string();
            let ns = meta_str(&item, "namespace").to_string();
            let item_scope = Scope {
                info: scope.info,
                namespace: if scope.info.namespaced {
                    Some(&ns)
                } else {
                    None
                },
            };
            match self.delete(item_scope, &name, opts).await {
                Ok(Deleted::Gone(o)) | Ok(Deleted::Pending(o)) => out.push(o),
                Err(s) if s.code == 404 => {}
                Err(s) => return Err(s),
            }
        }
        Ok((out, self.kv.current_revision()))
    }
}

/// ObjectMeta's list and map fields are `omitempty` in kube's Go types: an empty one (a GC
/// patch that removed the last owner reference, say) is not stored.
fn drop_empty_meta(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        for f in [
            "labels",
            "annotations",
            "ownerReferences",
            "finalizers",
            "managedFields",
        ] {
            let empty = match m.get(f) {
                Some(Value::Array(a)) => a.is_empty(),
                Some(Value::Object(o)) => o.is_empty(),
                Some(Value::Null) => true,
                _ => false,
            };
            if empty {
                m.remove(f);
            }
        }
    }
}

/// Sets (non-empty) or clears `metadata.resourceVersion`: a subresource write carries the
/// precondition its body named, or none (then a lost race retries with fresh state).
pub fn set_precondition_rv(obj: &mut Value, rv: &str) {
    let m = meta_mut(obj);
    if rv.is_empty() {
        m.remove("resourceVersion");
    } else {
        m.insert("resourceVersion".into(), json!(rv));
    }
}

/// True when the new object `a` differs from `b` only in resourceVersion / managedFields
/// timestamps. managedFields count only when `a` carries them (a server-side apply that only
/// changes ownership, e.g. a second applier sharing a field, is a write).
fn same_ignoring_bookkeeping(a: &Value, b: &Value) -> bool {
    // The entries were recorded before: a change of them alone (a reset) is a write.
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            m.remove("resourceVersion");
            if let Some(entries) = m.get_mut("managedFields").and_then(Value::as_array_mut) {
                for e in entries.iter_mut().filter_map(Value::as_object_mut) {
                    e.remove("time");
                }
            }
        }
        v
    };
    strip(a) == strip(b)
}

#[derive(serde::Serialize, serde::Deserialize)]
struct ContinueToken {
    v: String,
    rv: Revision,
    start: String,
    /// Rafter's addition: how many keys follow `start` at `rv` (unfiltered lists), so that
    /// a continue page need not count them again. Ignored when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    rc: Option<i64>,
}

/// kube's continue token: base64url(JSON {"v":"meta.k8s.io/v1","rv":N,"start":"<key suffix>"}),
/// plus `rc`, the number of keys left when known.
pub fn encode_continue(rev: Revision, start: &str, remaining: Option<i64>) -> String {
    use base64::Engine;
    let t = ContinueToken {
        v: "meta.k8s.io/v1".into(),
        rv: rev,
        start: start.into(),
        rc: remaining,
    };
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(serde_json::to_vec(&t).unwrap_or_default())
}

/// The revision, start key suffix and (when known) remaining count of a continue token.
pub fn decode_continue(token: &str) -> Result<(Revision, String, Option<i64>), Status> {
    use base64::Engine;
    let bad = || {
        Status::bad_request("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    };
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|_| bad())?;
    let t: ContinueToken = serde_json::from_slice(&raw).map_err(|_| bad())?;
    if t.v != "meta.k8s.io/v1" {
        return Err(Status::bad_request(
            "continue key is not valid: server does not recognize this encoded version",
        ));
    }
    if t.rv <= 0 || t.start.contains("..") || t.start.starts_with('/') {
        return Err(bad());
    }
    Ok((t.rv, t.start, t.rc.filter(|n| *n >= 0)))
}

fn expired_continue(prefix: &[u8], start: &[u8], store: &Store) -> Status {
    let suffix = String::from_utf8_lossy(&start[prefix.len().min(start.len())..]).into_owned();
    let mut s = Status::gone(
        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    );
    s.continue_token = Some(encode_continue(store.kv.current_revision(), &suffix, None));
    s
}

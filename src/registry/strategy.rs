//! The [`Strategy`] trait: what one resource adds to the generic store, like kube's
//! `registry/<group>/<resource>/strategy.go` (the generic halves of PrepareForCreate and
//! PrepareForUpdate that every resource shares are in [`super::prepare`]).
//!
//! A strategy is stateless and pure: no I/O, no clock, no randomness (the store settles uid,
//! timestamps and generated names first). Every method has the default kube's generic store
//! uses for a resource that says nothing, so a strategy implements only what its resource
//! changes. The implementations live one file per resource family under
//! [`super::builtin`], in folders named after API groups.

use serde_json::{json, Map, Value};

use super::object::Part;
use super::table::{self, Printer};
use crate::meta::field_error::FieldError;

/// A resource's default garbage-collection policy when a DELETE names none (kube's
/// `DefaultGarbageCollectionPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcPolicy {
    /// Dependents are deleted (in the background unless the request says Foreground).
    DeleteDependents,
    /// Dependents are orphaned: the `orphan` finalizer is added.
    OrphanDependents,
    /// The resource takes no part in garbage collection.
    Unsupported,
}

/// A subresource served by the server itself, beyond `status` and `scale` (which come from
/// the resource's data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extra {
    /// `PUT .../finalize` (namespaces): writes only `spec.finalizers`.
    Finalize,
    /// `POST .../binding` (pods): assigns the pod to a node.
    Binding,
    /// `POST .../eviction` (pods): a PodDisruptionBudget-checked delete.
    Eviction,
    /// `POST .../token` (service accounts): issues a TokenRequest.
    Token,
    /// `GET/PUT/PATCH .../approval` (certificate signing requests): writes only
    /// `status.conditions`, checked by [`Strategy::validate_approval`].
    Approval,
    /// `GET .../log` (pods): the kubelet's container log, streamed (`server::connect`).
    PodLog,
    /// `GET/POST .../exec` (pods): an upgrade relayed to the kubelet's `/exec`.
    PodExec,
    /// `GET/POST .../attach` (pods): an upgrade relayed to the kubelet's `/attach`.
    PodAttach,
    /// `GET/POST .../portforward` (pods): an upgrade relayed to the kubelet's `/portForward`.
    PodPortForward,
    /// `.../proxy/...` (pods): proxied to the pod's IP.
    PodProxy,
    /// `.../proxy/...` (nodes): proxied to the node's kubelet (or another port of the node).
    NodeProxy,
    /// `.../proxy/...` (services): proxied to a ready address of the service's endpoints.
    ServiceProxy,
    /// `GET/PUT/PATCH .../<name>`: a subresource writing the part of the object that
    /// [`Strategy::prepare_for_subresource_update`] takes from the request and
    /// [`Strategy::validate_subresource_update`] checks (pods/ephemeralcontainers,
    /// pods/resize).
    Writes(&'static str),
}

/// Adds one field (internal name, value as kube renders it) to an object's field set.
pub type Put<'a> = &'a mut dyn FnMut(&str, String);

/// A resource's selectable fields.
pub struct SelectableFields {
    /// Accepted external labels and the internal name each maps to.
    pub labels: &'static [(&'static str, &'static str)],
    /// The 400 text for a label the resource does not accept (label, request version).
    pub reject: fn(&str, &str) -> String,
    /// The object's fields beyond `metadata.name` / `metadata.namespace`.
    pub extract: fn(&Value, Put<'_>),
}

/// A conversion between versions failed (kube: `conversion webhook for <gvk> failed: ...`).
#[derive(Debug, Clone, PartialEq)]
pub struct ConversionError(pub String);

impl std::fmt::Display for ConversionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<ConversionError> for crate::meta::status::Status {
    fn from(e: ConversionError) -> Self {
        crate::meta::status::Status::internal(e)
    }
}

/// A deprecated kind's lifecycle: deprecated since, removed in (`None`: no removal planned, as
/// for GA kinds) and its replacement (`discovery.k8s.io/v1 EndpointSlice`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deprecation {
    pub since: (u32, u32),
    pub removed: Option<(u32, u32)>,
    pub replacement: Option<&'static str>,
}

impl Deprecation {
    /// kube's `deprecation.WarningMessage` for `api_version` and `kind`.
    pub fn warning(&self, api_version: &str, kind: &str) -> String {
        let mut s = format!(
            "{api_version} {kind} is deprecated in v{}.{}+",
            self.since.0, self.since.1
        );
        if let Some((major, minor)) = self.removed {
            s.push_str(&format!(", unavailable in v{major}.{minor}+"));
        }
        if let Some(r) = self.replacement {
            s.push_str(&format!("; use {r}"));
        }
        s
    }

    /// The `removed_release` label and audit annotation (`""` when no removal is planned).
    pub fn removed_release(&self) -> String {
        self.removed
            .map(|(major, minor)| format!("{major}.{minor}"))
            .unwrap_or_default()
    }
}

/// Per-resource behaviour. Every method has kube's generic default.
pub trait Strategy: Send + Sync {
    /// The component that creates objects of this kind also reports their status (nodes,
    /// core events, CSRs): a status sent with a create is kept instead of reset.
    fn keeps_status_on_create(&self) -> bool {
        false
    }

    /// `SetDefaults_<Kind>`: kube defaults every object it decodes, so this runs on create
    /// and on update.
    fn default(&self, _obj: &mut Value) {}

    /// PrepareForCreate beyond the generic part (status reset, apiVersion/kind), before
    /// defaulting.
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// The part of PrepareForCreate that reads the requesting user from the request context
    /// (kube's `genericapirequest.UserFrom`): `None` when the server itself writes. Runs
    /// right after [`Strategy::prepare_for_create`].
    fn record_requester(&self, _obj: &mut Value, _requester: Option<&super::object::Requester>) {}

    /// Initial values set after defaulting (e.g. a new pod's `status.phase: Pending`).
    fn initialize(&self, _obj: &mut Value) {}

    /// The parts of PrepareForCreate that kube runs after the mutating admission phase
    /// (which the store runs after [`Strategy::initialize`]): values derived from fields a
    /// plugin may have set. Create only, and only when admission ran.
    fn after_mutating_admission(&self, _obj: &mut Value) {}

    /// PrepareForUpdate beyond the generic part (system fields and the spec/status split):
    /// e.g. fields only a subresource may change are copied from `old`.
    fn prepare_for_update(&self, _new: &mut Value, _old: &Value) {}

    /// Converts an object of this version (decoded and defaulted as this version) to the
    /// resource's storage version, in place. Only called for a version that is not the
    /// storage version ([`super::resource::Resource::converts`]); the store then defaults,
    /// validates and stores the storage-version object. The error (a conversion webhook that
    /// failed) is served as a 500, as kube serves it.
    fn to_storage(&self, _obj: &mut Value) -> Result<(), ConversionError> {
        Ok(())
    }

    /// Converts a stored object (of the storage version) to this version, in place.
    fn from_storage(&self, _obj: &mut Value) -> Result<(), ConversionError> {
        Ok(())
    }

    /// [`Strategy::from_storage`] of several objects (a list), which a strategy may do at
    /// once (one conversion webhook call).
    fn from_storage_all(&self, objs: &mut [Value]) -> Result<(), ConversionError> {
        objs.iter_mut().try_for_each(|o| self.from_storage(o))
    }

    /// Decoding a request body (or a patched object) of a resource whose objects are checked
    /// against a schema of their own (custom resources): drops what that schema does not
    /// declare, as kube's schema-coercing decoder does, and returns the dropped fields' paths
    /// (`spec.foo`, `spec.items[1].bar`) for `fieldValidation`. `None` (the default): the
    /// resource has no such schema and its built-in OpenAPI definition is used instead.
    fn prune(&self, _obj: &mut Value) -> Option<Vec<String>> {
        None
    }

    /// Reading a stored object: what kube's storage decoder changes in it before it is
    /// converted and served (custom resources are pruned and defaulted with their stored
    /// version's schema), or `None` when nothing changes (the default: built-ins are
    /// defaulted when written).
    fn decode_stored(&self, _stored: &Value) -> Option<Value> {
        None
    }

    /// Whether [`Strategy::decode_stored`] may change an object (false: stored objects are
    /// served as they are, and the edge writes them from the watch cache's bytes).
    fn decodes_stored(&self) -> bool {
        false
    }

    /// How objects of this resource count against ResourceQuotas beyond `count/<resource>`
    /// (kube's quota evaluators), if they do.
    fn quota(&self) -> Option<&'static dyn crate::registry::quota::Evaluator> {
        None
    }

    /// Validate: the errors of a new object (after defaulting).
    fn validate(&self, _obj: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// ValidateUpdate: the errors of an update, immutable fields included. The default
    /// validates the new object as on create.
    fn validate_update(&self, new: &Value, _old: &Value) -> Vec<FieldError> {
        self.validate(new)
    }

    /// WarningsOnCreate: warnings for a created object (after it passed validation), sent
    /// as `Warning` headers.
    fn warnings_on_create(&self, _obj: &Value) -> Vec<String> {
        Vec::new()
    }

    /// WarningsOnUpdate: warnings for an update (after it passed validation).
    fn warnings_on_update(&self, _new: &Value, _old: &Value) -> Vec<String> {
        Vec::new()
    }

    /// PrepareForUpdate of the `status` subresource beyond the generic part (which keeps the
    /// stored spec and metadata, but [`Strategy::status_metadata`], and takes the sent
    /// status): e.g. status fields a status write may not clear are backfilled from `old`,
    /// timestamps a change needs are set to `now` (the request's time, RFC 3339). Runs before
    /// defaulting.
    fn prepare_for_status_update(&self, _new: &mut Value, _old: &Value, _now: &str) {}

    /// The metadata fields a `status` write takes from the request instead of the stored
    /// object (kube's status strategies differ: the pod one keeps only the owner references
    /// and deletion fields, so labels, annotations and finalizers follow the request; the
    /// claim one resets only the spec).
    fn status_metadata(&self) -> &'static [&'static str] {
        &[]
    }

    /// Objects of this kind expire `--event-ttl` after their last write ([`super::ttl`]),
    /// as kube stores Events under an etcd lease.
    fn expires(&self) -> bool {
        false
    }

    /// The API lifecycle of this kind when its version is deprecated (kube's generated
    /// `APILifecycleDeprecated` / `Removed` / `Replacement`).
    fn deprecation(&self) -> Option<Deprecation> {
        None
    }

    /// PrepareForUpdate of the CSR `/approval` subresource beyond keeping all but the
    /// conditions (kube fills the conditions' timestamps).
    fn prepare_for_approval(&self, _new: &mut Value, _old: &Value, _now: &str) {}

    /// ValidateUpdate of the `status` subresource (kube's `<kind>StatusStrategy`, most often a
    /// `ValidateXStatusUpdate`): the errors of a status write, after the generic part kept the
    /// stored spec. A status write is not checked by the spec rules, so an object stored
    /// under older, looser rules can still have its status reported.
    ///
    /// The default finds nothing: what kube's status strategy checks for a resource that says
    /// nothing special (a custom resource's validates its metadata update, which the store
    /// checks for every write, and its schema).
    fn validate_status_update(&self, _new: &Value, _old: &Value) -> Vec<FieldError> {
        Vec::new()
    }

    /// A PUT of an object that does not exist creates it (kube's `AllowCreateOnUpdate`).
    fn allow_create_on_update(&self) -> bool {
        false
    }

    /// Metadata is checked by kubernetes core's `ValidateObjectMeta`, whose finalizer names
    /// must be standard or fully qualified (`example.com/x`). The API extensions kinds (CRDs,
    /// custom resources) use apimachinery's generic check, which accepts any qualified name.
    fn core_object_meta(&self) -> bool {
        true
    }

    /// Strategic merge patches apply (the kind has Go patch strategies). Custom resources
    /// have none: kube answers such a patch with a 415.
    fn strategic_merge_patch(&self) -> bool {
        true
    }

    /// A PUT without `metadata.resourceVersion` replaces the current object (kube's
    /// `AllowUnconditionalUpdate`). When false such a PUT of an existing object is a 422 (the
    /// resourceVersion "must be specified for an update").
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// PrepareForUpdate of an [`Extra::Writes`] subresource `sub`: `new` starts as the stored
    /// object `old` (its resourceVersion and managed fields from the request) and takes from
    /// `sent`, the request's object, what the subresource writes. Runs before defaulting.
    fn prepare_for_subresource_update(
        &self,
        _sub: &str,
        _new: &mut Value,
        _sent: &Value,
        _old: &Value,
    ) {
    }

    /// ValidateUpdate of an [`Extra::Writes`] subresource `sub`.
    fn validate_subresource_update(&self, _sub: &str, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_update(new, old)
    }

    /// ValidateUpdate of the `approval` subresource (only `status.conditions` changed).
    fn validate_approval(&self, new: &Value, old: &Value) -> Vec<FieldError> {
        self.validate_update(new, old)
    }

    /// kube's registry-specific Delete: the first DELETE of a live object may add finalizers
    /// and conditions to it (`now` is RFC 3339) before the generic rules run (CRDs get their
    /// cleanup finalizer and `Terminating`).
    fn prepare_for_delete(&self, _obj: &mut Value, _now: &str) {}

    /// The default garbage-collection policy of a DELETE that names none.
    fn gc_policy(&self) -> GcPolicy {
        GcPolicy::DeleteDependents
    }

    /// A warning for a DELETE that names no propagation policy.
    fn delete_warning(&self, _policy_given: bool) -> Option<&'static str> {
        None
    }

    /// Graceful deletion (kube's `CheckGracefulDelete`): `None` for resources deleted at once,
    /// else the grace period the object gets.
    fn graceful_delete_period(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// Whether an object whose metadata finalizers are gone must still stay.
    fn needs_graceful_delete(&self, _obj: &Value) -> bool {
        false
    }

    /// A DELETE that removes the object answers with the object (kube's
    /// `ReturnDeletedObject`) instead of a success Status.
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// A DELETE moves the object to `status.phase: Terminating`, and it stays until its
    /// `spec.finalizers` are gone (namespaces).
    fn terminating_phase(&self) -> bool {
        false
    }

    /// Why a DELETE of the object named `name` is refused outright, if it is.
    fn delete_forbidden(&self, _name: &str) -> Option<&'static str> {
        None
    }

    /// Creates allocate addresses from the resource's other objects (Service cluster IPs and
    /// node ports): the store serializes such creates and commits them only if no object of
    /// the resource changed since the allocation.
    fn allocates(&self) -> bool {
        false
    }

    /// The fields a field selector may name, beyond `metadata.name` and
    /// `metadata.namespace` (`None`: only those two).
    fn fields(&self) -> Option<&'static SelectableFields> {
        None
    }

    /// Selectable fields given as JSONPaths at run time (a custom resource version's
    /// `selectableFields`): (label, path). When there are any, they (with `metadata.name` and
    /// `metadata.namespace`) are the accepted field labels.
    fn field_paths(&self) -> &[(String, crate::registry::jsonpath::JsonPath)] {
        &[]
    }

    /// The server-handled subresources beyond status and scale.
    fn extras(&self) -> &'static [Extra] {
        &[]
    }

    /// kube's `GetResetFields` of the endpoint `part`: the fields its writes reset (they keep
    /// the stored value whatever is sent), as paths of field names. A write's field managers
    /// never own them and never conflict over them. The default is what kube's strategies
    /// reset for a resource with a status subresource (`has_status`): the resource itself
    /// resets `status`, the status endpoint `spec`; nothing otherwise.
    fn reset_fields(&self, part: Part, has_status: bool) -> ResetFields {
        default_reset_fields(part, has_status)
    }

    /// The structural schema objects of this resource (a custom resource version) are
    /// merged, owned and compared with in server-side apply and managedFields; `None` for
    /// built-ins, whose schema comes from their OpenAPI definition.
    fn structural_schema(&self) -> Option<&super::custom::node::Node> {
        None
    }

    /// The structural schema of version `version` of this resource (a custom resource
    /// definition's versions, served or not), which field managers read the entries recorded
    /// at that version with; `None` for a version the resource does not have.
    fn version_schema(&self, _version: &str) -> Option<&super::custom::node::Node> {
        None
    }

    /// Converts an object of any version of this resource to `api_version` (`group/version`),
    /// as the field manager's versioned converter does for entries recorded at another
    /// version (custom resources: conversion `None` or the webhook, then pruned by that
    /// version's schema).
    fn convert_to(&self, _obj: &mut Value, _api_version: &str) -> Result<(), ConversionError> {
        Ok(())
    }

    /// The Table printer (kube-apiserver's `TableConvertor`).
    fn printer(&self) -> Printer {
        table::DEFAULT
    }
}

/// Paths of field names (`[["spec"], ["metadata", "labels"]]`).
pub type ResetFields = &'static [&'static [&'static str]];

/// [`Strategy::reset_fields`]'s default: `status` for the resource itself when it has a
/// status subresource, `spec` for the status endpoint.
pub fn default_reset_fields(part: Part, has_status: bool) -> ResetFields {
    match part {
        Part::Main if has_status => &[&["status"]],
        Part::Status => &[&["spec"]],
        _ => &[],
    }
}

/// A resource with kube's generic behaviour and its own printer.
pub struct Plain(pub Printer);

impl Strategy for Plain {
    fn printer(&self) -> Printer {
        self.0
    }
}

/// `obj[field]` as an object, made one if it is missing or not an object.
pub fn obj_entry<'a>(obj: &'a mut Value, field: &str) -> &'a mut Map<String, Value> {
    if !obj.get(field).is_some_and(Value::is_object) {
        obj[field] = json!({});
    }
    obj[field].as_object_mut().expect("object")
}

/// Absent or JSON null (as a protobuf body leaves an optional field).
pub fn is_unset(v: Option<&Value>) -> bool {
    v.is_none_or(Value::is_null)
}

//! `kms` providers of `apiVersion: v2`: envelope encryption with a KMS v2 plugin
//! (`proto/kmsv2.proto`, kube's `k8s.io/kms/apis/v2`) over a Unix socket, behaving as
//! kube-apiserver 1.33 does with KMSv2KDF (its default):
//!
//! - At load, and then every minute (every 10 s while it fails), the plugin's `Status` is
//!   called: `healthz` must be `ok`, `version` `v2` (and never change), `key_id` non-empty
//!   (at most 1 KiB). When the key ID is not the one of the current seed, a new 32-byte random
//!   seed is made and encrypted by the plugin's `Encrypt` (a random request uid); the plugin
//!   must answer with the same key ID. A plugin that is down at load does not stop the
//!   start: writes fail until a `Status` succeeds.
//! - Each value: 32 random bytes of info, HKDF-Expand(SHA-256, the seed as pseudorandom key,
//!   the info) gives its own 32-byte AES-GCM key, and the value is stored as
//!   `k8s:enc:kms:v2:<name>:` and a protobuf `EncryptedObject` whose `encryptedData` is the
//!   info, a random 12-byte nonce, the ciphertext and the tag (the storage key authenticated),
//!   with the seed's ciphertext, key ID and annotations and `encryptedDEKSourceType`
//!   `HKDF_SHA256_XNONCE_AES_GCM_SEED`: kube's bytes, so either reads the other's values.
//!   kube's older `AES_GCM_KEY` values (the DEK itself encrypted) read too.
//! - Reads look the encrypted seed up in a bounded cache (24 h, as kube) and call the plugin's
//!   `Decrypt` on a miss. Reads need a loaded state as in kube, but not a live plugin: with
//!   the plugin down, values of cached seeds still read.
//! - A value whose key ID is not the current one is stale ([`Kms::stale`]), so a storage
//!   migration (or GET and PUT) after the plugin's key changed rewrites it.
//! - While `Status` or the rotation fails, writes go on with the current seed for at most
//!   3 minutes after the last success, then fail with kube's `expired` text.
//!
//! Every call is bounded by the provider's `timeout` (default 3 s). The store seals and opens
//! synchronously from tokio tasks: calls run on one dedicated thread with its own runtime and
//! the caller waits (`block_in_place` on a multi-threaded runtime). Seeds and plaintext never
//! reach logs or errors; key IDs appear hashed, as kube logs them.
//!
//! Not done: kube's `/healthz/kms-providers` and `/readyz/kms-providers` checks (readiness
//! does not depend on the plugin here).

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use arc_swap::ArcSwapOption;
use prost::Message;

use super::ciphers::{random, Cipher, Kind};

/// The generated messages and client (and server, for tests and plugins) of package `v2`.
pub mod proto {
    tonic::include_proto!("v2");
}

use proto::key_management_service_client::KeyManagementServiceClient;
use proto::{
    DecryptRequest, EncryptRequest, EncryptedDekSourceType, EncryptedObject, StatusRequest,
    StatusResponse,
};

/// `k8s:enc:kms:v2:`, followed by the provider's name and `:`.
pub const PREFIX: &str = "k8s:enc:kms:v2:";

/// kube's `kmsv2PluginHealthzPositiveInterval`, `...NegativeInterval` and
/// `kmsv2PluginWriteDEKSourceMaxTTL`.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// Between `Status` calls while they succeed.
    pub positive: Duration,
    /// Between `Status` calls while they fail.
    pub negative: Duration,
    /// How long after the last successful `Status` the current seed still writes.
    pub max_ttl: Duration,
}

impl Default for Timing {
    fn default() -> Timing {
        Timing {
            positive: Duration::from_secs(60),
            negative: Duration::from_secs(10),
            max_ttl: Duration::from_secs(180),
        }
    }
}

const SEED_LEN: usize = 32;
const INFO_LEN: usize = 32;
const DERIVED_KEY_LEN: usize = 32;
const KEY_ID_MAX: usize = 1024;
const DEK_SOURCE_MAX: usize = 1024;
const ANNOTATIONS_MAX: usize = 32 * 1024;
const CACHE_TTL: Duration = Duration::from_secs(24 * 3600);
const CACHE_MAX: usize = 4096;

/// A configured `kms` v2 provider.
pub struct Kms {
    prefix: Vec<u8>,
    shared: Arc<Shared>,
}

struct Shared {
    name: String,
    timeout: Duration,
    timing: Timing,
    client: KeyManagementServiceClient<tonic::transport::Channel>,
    /// The seed that writes (none until a `Status` and `Encrypt` succeeded).
    state: ArcSwapOption<State>,
    probe: Mutex<Probe>,
    cache: Mutex<SeedCache>,
}

#[derive(Default)]
struct Probe {
    /// The plugin's API version of its first answer.
    version: Option<String>,
    /// Why the last check failed (none after a success).
    last_error: Option<String>,
}

/// The write state: the seed and what is stored with every value it seals.
#[derive(Clone)]
struct State {
    seed: Arc<Seed>,
    key_id: String,
    encrypted_seed: Vec<u8>,
    annotations: HashMap<String, Vec<u8>>,
    cache_key: Vec<u8>,
    expires: SystemTime,
}

/// Key material, zeroed when dropped.
struct Seed(Vec<u8>);

impl Drop for Seed {
    fn drop(&mut self) {
        self.0.iter_mut().for_each(|b| *b = 0);
    }
}

/// Decrypted DEK sources by [`cache_key`], oldest evicted first.
#[derive(Default)]
struct SeedCache {
    map: HashMap<Vec<u8>, (Arc<Seed>, Instant)>,
    order: VecDeque<Vec<u8>>,
}

impl SeedCache {
    fn get(&mut self, key: &[u8]) -> Option<Arc<Seed>> {
        match self.map.get(key) {
            Some((s, at)) if at.elapsed() < CACHE_TTL => Some(s.clone()),
            Some(_) => {
                self.map.remove(key);
                None
            }
            None => None,
        }
    }

    fn insert(&mut self, key: Vec<u8>, seed: Arc<Seed>) {
        if self
            .map
            .insert(key.clone(), (seed, Instant::now()))
            .is_none()
        {
            self.order.push_back(key);
        }
        while self.map.len() > CACHE_MAX {
            match self.order.pop_front() {
                Some(old) => {
                    self.map.remove(&old);
                }
                None => break,
            }
        }
        if self.order.len() > 2 * CACHE_MAX {
            let map = &self.map;
            self.order.retain(|k| map.contains_key(k));
        }
    }
}

/// The thread whose runtime runs every plugin call and poll loop of the process.
fn runtime() -> &'static tokio::runtime::Handle {
    static RT: OnceLock<tokio::runtime::Handle> = OnceLock::new();
    RT.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime for KMS plugin calls");
        let handle = rt.handle().clone();
        std::thread::Builder::new()
            .name("kms-plugins".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("a thread for KMS plugin calls");
        handle
    })
}

/// Runs `fut` on the plugin thread and waits for it, at most `limit`, from synchronous code
/// (on a tokio worker, without stalling the other tasks of that worker).
fn block_on<T: Send + 'static>(
    fut: impl Future<Output = T> + Send + 'static,
    limit: Duration,
) -> Option<T> {
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    runtime().spawn(async move {
        let _ = tx.send(fut.await);
    });
    let wait = move || rx.recv_timeout(limit).ok();
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(wait)
        }
        _ => wait(),
    }
}

/// gRPC's text of a failed call, as Go's client prints it.
fn rpc_error(s: &tonic::Status) -> String {
    format!("rpc error: code = {:?} desc = {}", s.code(), s.message())
}

/// Calls `f` bounded by `timeout` (gRPC's deadline text when it runs out).
async fn bounded<T>(
    timeout: Duration,
    f: impl Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, String> {
    match tokio::time::timeout(timeout, f).await {
        Ok(Ok(r)) => Ok(r.into_inner()),
        Ok(Err(s)) => Err(rpc_error(&s)),
        Err(_) => Err("rpc error: code = DeadlineExceeded desc = context deadline exceeded".into()),
    }
}

/// kube's `GetHashIfNotEmpty`: how key IDs appear in texts.
fn hash_if_not_empty(s: &str) -> String {
    if s.is_empty() {
        return String::new();
    }
    let d = ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
    let hex: String = d.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// RFC 3339 in UTC, as kube prints expirations.
fn rfc3339(t: SystemTime) -> String {
    match jiff::Timestamp::try_from(t) {
        Ok(ts) => ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => "0001-01-01T00:00:00Z".into(),
    }
}

/// kube's `ValidateKeyID`.
fn validate_key_id(key_id: &str) -> Result<(), String> {
    if key_id.is_empty() {
        return Err("keyID is empty".into());
    }
    if key_id.len() > KEY_ID_MAX {
        return Err(format!(
            "keyID is {} bytes, which exceeds the max size of {KEY_ID_MAX}",
            key_id.len()
        ));
    }
    Ok(())
}

/// kube's `validation.IsFullyQualifiedDomainName` of an annotation key (`annotations` path).
fn fqdn_errors(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("annotations: Required value".into());
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    let errs = crate::meta::validation::is_dns1123_subdomain(name);
    if !errs.is_empty() {
        return Some(format!(
            "annotations: Invalid value: {name:?}: {}",
            errs.join(",")
        ));
    }
    if name.split('.').count() < 2 {
        return Some(format!(
            "annotations: Invalid value: {name:?}: should be a domain with at least two segments separated by dots"
        ));
    }
    for label in name.split('.') {
        let errs = crate::meta::validation::is_dns1123_label(label);
        if !errs.is_empty() {
            return Some(format!(
                "annotations: Invalid value: {label:?}: {}",
                errs.join(",")
            ));
        }
    }
    None
}

/// kube's `ValidateEncryptedObject`, with its texts.
fn validate(o: &EncryptedObject) -> Result<(), String> {
    if EncryptedDekSourceType::try_from(o.encrypted_dek_source_type).is_err() {
        return Err(format!(
            "unknown encryptedDEKSourceType: {}",
            o.encrypted_dek_source_type
        ));
    }
    if o.encrypted_data.is_empty() {
        return Err("encrypted data is empty".into());
    }
    if o.encrypted_dek_source.is_empty() {
        return Err(
            "failed to validate encrypted DEK source: encrypted DEK source is empty".into(),
        );
    }
    if o.encrypted_dek_source.len() > DEK_SOURCE_MAX {
        return Err(format!(
            "failed to validate encrypted DEK source: encrypted DEK source is {} bytes, which exceeds the max size of {DEK_SOURCE_MAX}",
            o.encrypted_dek_source.len()
        ));
    }
    validate_key_id(&o.key_id).map_err(|e| format!("failed to validate key id: {e}"))?;
    let mut errs: Vec<String> = Vec::new();
    let mut keys: Vec<&String> = o.annotations.keys().collect();
    keys.sort();
    let mut total = 0usize;
    for k in keys {
        errs.extend(fqdn_errors(k));
        total += k.len() + o.annotations[k].len();
    }
    if total > ANNOTATIONS_MAX {
        errs.push(format!(
            "total size of annotations is {total}, which exceeds the max size of {ANNOTATIONS_MAX}"
        ));
    }
    match errs.len() {
        0 => Ok(()),
        1 => Err(format!("failed to validate annotations: {}", errs[0])),
        _ => Err(format!(
            "failed to validate annotations: [{}]",
            errs.join(", ")
        )),
    }
}

/// kube's `generateCacheKey`: the source type, the encrypted source, the key ID and the
/// annotations sorted by key, length-prefixed (big-endian, as Go's cryptobyte).
fn cache_key(
    kind: i32,
    encrypted: &[u8],
    key_id: &str,
    annotations: &HashMap<String, Vec<u8>>,
) -> Vec<u8> {
    fn prefixed(out: &mut Vec<u8>, b: &[u8]) {
        out.extend_from_slice(&(b.len().min(u16::MAX as usize) as u16).to_be_bytes());
        out.extend_from_slice(b);
    }
    let mut out = Vec::with_capacity(8 + encrypted.len() + key_id.len());
    out.extend_from_slice(&(kind as u32).to_be_bytes());
    prefixed(&mut out, encrypted);
    prefixed(&mut out, key_id.as_bytes());
    if annotations.is_empty() {
        return out;
    }
    out.extend_from_slice(&(annotations.len() as u32).to_be_bytes());
    let mut keys: Vec<&String> = annotations.keys().collect();
    keys.sort();
    for k in keys {
        prefixed(&mut out, k.as_bytes());
        prefixed(&mut out, &annotations[k]);
    }
    out
}

/// HKDF-Expand with SHA-256, `seed` as the pseudorandom key (no extract step, as kube).
fn derive(seed: &[u8], info: &[u8]) -> Option<[u8; DERIVED_KEY_LEN]> {
    struct Len;
    impl ring::hkdf::KeyType for Len {
        fn len(&self) -> usize {
            DERIVED_KEY_LEN
        }
    }
    let prk = ring::hkdf::Prk::new_less_safe(ring::hkdf::HKDF_SHA256, seed);
    let info = [info];
    let okm = prk.expand(&info, Len).ok()?;
    let mut out = [0u8; DERIVED_KEY_LEN];
    okm.fill(&mut out).ok()?;
    Some(out)
}

/// The `encryptedData` of a seed-derived value: info, then kube's AES-GCM layout.
fn seal_with_seed(seed: &[u8], storage_key: &[u8], plain: &[u8]) -> Result<Vec<u8>, String> {
    let info: [u8; INFO_LEN] =
        random().ok_or("failed to generate info for KDF: no randomness available")?;
    seal_with_info(seed, &info, storage_key, plain)
}

fn seal_with_info(
    seed: &[u8],
    info: &[u8; INFO_LEN],
    storage_key: &[u8],
    plain: &[u8],
) -> Result<Vec<u8>, String> {
    let mut key = derive(seed, info).ok_or("failed to derive write key from KDF")?;
    let cipher = Cipher::new(Kind::AesGcm, &key);
    key.iter_mut().for_each(|b| *b = 0);
    let sealed = cipher
        .and_then(|c| c.seal(storage_key, plain))
        .ok_or("failed to write nonce for AES-GCM")?;
    let mut out = Vec::with_capacity(INFO_LEN + sealed.len());
    out.extend_from_slice(info);
    out.extend_from_slice(&sealed);
    Ok(out)
}

fn open_with_seed(seed: &[u8], storage_key: &[u8], data: &[u8]) -> Result<Vec<u8>, String> {
    if seed.len() < SEED_LEN {
        return Err(format!(
            "invalid seed length {} used for key generation",
            seed.len()
        ));
    }
    if data.len() < INFO_LEN {
        return Err("the stored data was shorter than the required size".into());
    }
    let (info, rest) = data.split_at(INFO_LEN);
    let mut key = derive(seed, info).ok_or("failed to derive read key from KDF")?;
    let cipher = Cipher::new(Kind::AesGcm, &key);
    key.iter_mut().for_each(|b| *b = 0);
    let cipher = cipher.ok_or("failed to derive read key from KDF")?;
    cipher.open(storage_key, rest).map_err(str::to_string)
}

/// The parsed and validated envelope after the prefix.
fn decode(data: &[u8]) -> Result<EncryptedObject, String> {
    let o = EncryptedObject::decode(data).map_err(|e| format!("proto: {e}"))?;
    validate(&o)?;
    Ok(o)
}

impl Kms {
    /// A provider named `name` whose plugin listens on the Unix socket `socket`; loads its
    /// state now (one `Status`, and an `Encrypt` of a new seed) and polls it from then on.
    /// A plugin that does not answer is not an error (kube starts too): writes fail until
    /// it does.
    pub fn start(name: &str, socket: PathBuf, timeout: Duration, timing: Timing) -> Kms {
        let client = {
            let _guard = runtime().enter();
            let channel = tonic::transport::Endpoint::from_static("http://kms-plugin.localhost")
                .connect_with_connector_lazy(tower::service_fn(move |_: http::Uri| {
                    let path = socket.clone();
                    async move {
                        tokio::net::UnixStream::connect(path)
                            .await
                            .map(hyper_util::rt::TokioIo::new)
                    }
                }));
            KeyManagementServiceClient::new(channel)
        };
        let shared = Arc::new(Shared {
            name: name.to_string(),
            timeout,
            timing,
            client,
            state: ArcSwapOption::const_empty(),
            probe: Mutex::new(Probe::default()),
            cache: Mutex::new(SeedCache::default()),
        });
        let first = {
            let s = shared.clone();
            block_on(
                async move { s.check().await },
                3 * timeout + Duration::from_secs(1),
            )
            .unwrap_or_else(|| Err("the first status call did not finish".into()))
        };
        if let Err(e) = &first {
            tracing::warn!("kms plugin failed health check probe: {e}");
        }
        let weak = Arc::downgrade(&shared);
        let mut ok = first.is_ok();
        runtime().spawn(async move {
            loop {
                tokio::time::sleep(if ok { timing.positive } else { timing.negative }).await;
                let Some(s) = weak.upgrade() else {
                    return;
                };
                let was_ok = ok;
                ok = match s.check().await {
                    Ok(()) => {
                        if !was_ok {
                            super::note_recovered();
                        }
                        true
                    }
                    Err(e) => {
                        tracing::warn!("kms plugin failed health check probe: {e}");
                        false
                    }
                };
            }
        });
        Kms {
            prefix: format!("{PREFIX}{name}:").into_bytes(),
            shared,
        }
    }

    /// `k8s:enc:kms:v2:<name>:`.
    pub fn prefix(&self) -> &[u8] {
        &self.prefix
    }

    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The stored value of `plain` at `storage_key` (with the prefix).
    pub fn seal(&self, storage_key: &[u8], plain: &[u8]) -> Result<Vec<u8>, String> {
        let state = self.shared.current()?;
        let now = SystemTime::now();
        if now > state.expires {
            return Err(format!(
                "encryptedDEKSource with keyID hash {:?} expired at {} (current time is {})",
                hash_if_not_empty(&state.key_id),
                rfc3339(state.expires),
                rfc3339(now)
            ));
        }
        // Reads of our own values never ask the plugin.
        if let Ok(mut c) = self.shared.cache.lock() {
            c.insert(state.cache_key.clone(), state.seed.clone());
        }
        let obj = EncryptedObject {
            encrypted_data: seal_with_seed(&state.seed.0, storage_key, plain)?,
            key_id: state.key_id.clone(),
            encrypted_dek_source: state.encrypted_seed.clone(),
            annotations: state.annotations.clone(),
            encrypted_dek_source_type: EncryptedDekSourceType::HkdfSha256XnonceAesGcmSeed as i32,
        };
        validate(&obj)?;
        let mut out = self.prefix.clone();
        obj.encode(&mut out).map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// The plaintext of `stored` (with the prefix), asking the plugin for the seed when it
    /// is not cached.
    pub fn open(&self, storage_key: &[u8], stored: &[u8]) -> Result<Vec<u8>, String> {
        let obj = decode(
            stored
                .strip_prefix(self.prefix.as_slice())
                .unwrap_or(stored),
        )?;
        // As kube: a read needs a loaded state (not a live plugin).
        self.shared.current()?;
        let key = cache_key(
            obj.encrypted_dek_source_type,
            &obj.encrypted_dek_source,
            &obj.key_id,
            &obj.annotations,
        );
        let cached = self.shared.cache.lock().ok().and_then(|mut c| c.get(&key));
        let seed = match cached {
            Some(s) => s,
            None => {
                let s = Arc::new(Seed(self.shared.decrypt(&obj)?));
                if let Ok(mut c) = self.shared.cache.lock() {
                    c.insert(key, s.clone());
                }
                s
            }
        };
        if obj.encrypted_dek_source_type == EncryptedDekSourceType::AesGcmKey as i32 {
            let cipher = Cipher::new(Kind::AesGcm, &seed.0)
                .ok_or_else(|| format!("crypto/aes: invalid key size {}", seed.0.len()))?;
            return cipher
                .open(storage_key, &obj.encrypted_data)
                .map_err(str::to_string);
        }
        open_with_seed(&seed.0, storage_key, &obj.encrypted_data)
    }

    /// Whether `stored` (with the prefix) was sealed under another key ID than the
    /// plugin's current one (or in another mode), so an update must rewrite it.
    pub fn stale(&self, stored: &[u8]) -> bool {
        let Some(state) = self.shared.state.load_full() else {
            return false;
        };
        match decode(
            stored
                .strip_prefix(self.prefix.as_slice())
                .unwrap_or(stored),
        ) {
            Ok(o) => {
                o.key_id != state.key_id
                    || o.encrypted_dek_source_type
                        != EncryptedDekSourceType::HkdfSha256XnonceAesGcmSeed as i32
            }
            Err(_) => true,
        }
    }

    /// The current key ID, if the state is loaded.
    pub fn key_id(&self) -> Option<String> {
        self.shared.state.load_full().map(|s| s.key_id.clone())
    }
}

impl Shared {
    fn current(&self) -> Result<Arc<State>, String> {
        self.state.load_full().ok_or_else(|| {
            let why = self
                .probe
                .lock()
                .ok()
                .and_then(|p| p.last_error.clone())
                .unwrap_or_else(|| "no status call succeeded yet".into());
            format!(
                "the KMS v2 provider {:?} is not ready (got unexpected nil transformer): {why}",
                self.name
            )
        })
    }

    fn decrypt(&self, obj: &EncryptedObject) -> Result<Vec<u8>, String> {
        let mut client = self.client.clone();
        let timeout = self.timeout;
        let req = DecryptRequest {
            ciphertext: obj.encrypted_dek_source.clone(),
            uid: uuid::Uuid::new_v4().to_string(),
            key_id: obj.key_id.clone(),
            annotations: obj.annotations.clone(),
        };
        let resp = block_on(
            async move { bounded(timeout, client.decrypt(req)).await },
            timeout + Duration::from_secs(1),
        )
        .unwrap_or_else(|| {
            Err("rpc error: code = DeadlineExceeded desc = context deadline exceeded".into())
        });
        resp.map(|r| r.plaintext)
            .map_err(|e| format!("failed to decrypt DEK, error: {e}"))
    }

    /// kube's probe: `Status`, then the rotation when the key ID changed; records why it
    /// failed for the errors of writes.
    async fn check(&self) -> Result<(), String> {
        let result = self.check_once().await;
        if let Ok(mut p) = self.probe.lock() {
            p.last_error = result.as_ref().err().cloned();
        }
        result
    }

    async fn check_once(&self) -> Result<(), String> {
        let status: StatusResponse =
            match bounded(self.timeout, self.client.clone().status(StatusRequest {})).await {
                Ok(s) => s,
                Err(e) => {
                    return Err(format!(
                        "failed to perform status section of the healthz check for KMS Provider {}, error: {e}",
                        self.name
                    ))
                }
            };
        let mut errs = Vec::new();
        if status.healthz != "ok" {
            errs.push(format!("got unexpected healthz status: {}", status.healthz));
        }
        if status.version != "v2" && status.version != "v2beta1" {
            errs.push(format!(
                "expected KMSv2 API version v2, got {}",
                status.version
            ));
        } else if let Ok(mut p) = self.probe.lock() {
            match &p.version {
                None => p.version = Some(status.version.clone()),
                Some(v) if *v != status.version => errs.push(format!(
                    "KMSv2 API version should not change after the initial status response version {v}, got {}",
                    status.version
                )),
                Some(_) => {}
            }
        }
        match validate_key_id(&status.key_id) {
            Err(e) => errs.push(format!(
                "got invalid KMSv2 KeyID hash {:?}: {e}",
                hash_if_not_empty(&status.key_id)
            )),
            Ok(()) => {
                if let Err(e) = self
                    .rotate(&status.key_id, uuid::Uuid::new_v4().to_string())
                    .await
                {
                    errs.push(e);
                }
            }
        }
        match errs.len() {
            0 => Ok(()),
            1 => Err(format!(
                "kmsv2 Provider {} is not healthy, error: {}",
                self.name, errs[0]
            )),
            _ => Err(format!(
                "kmsv2 Provider {} is not healthy, error: [{}]",
                self.name,
                errs.join(", ")
            )),
        }
    }

    /// kube's `rotateDEKOnKeyIDChange`: the same key ID extends the current seed's write
    /// life; another makes a new seed (kept only when `Encrypt` answers with that key ID).
    async fn rotate(&self, status_key_id: &str, uid: String) -> Result<(), String> {
        let expires = SystemTime::now() + self.timing.max_ttl;
        let current = self.state.load_full();
        if let Some(c) = &current {
            if c.key_id == status_key_id {
                let mut next = State::clone(c);
                next.expires = expires;
                self.state.store(Some(Arc::new(next)));
                return Ok(());
            }
        }
        let generated = self.generate(&uid, expires).await;
        let encrypt_key_id = generated
            .as_ref()
            .map(|s| s.key_id.clone())
            .unwrap_or_default();
        let err_gen = match generated {
            Ok(state) if state.key_id == status_key_id => {
                tracing::info!(
                    "successfully rotated DEK uid={uid:?} newKeyIDHash={:?} oldKeyIDHash={:?} expirationTimestamp={}",
                    hash_if_not_empty(&state.key_id),
                    hash_if_not_empty(current.as_ref().map(|c| c.key_id.as_str()).unwrap_or("")),
                    rfc3339(expires)
                );
                self.state.store(Some(Arc::new(state)));
                return Ok(());
            }
            Ok(_) => "<nil>".to_string(),
            Err(e) => e,
        };
        let (err_state, state_key_id, state_expires) = match &current {
            Some(c) => ("<nil>", c.key_id.as_str(), rfc3339(c.expires)),
            None => (
                "got unexpected nil transformer",
                "",
                "0001-01-01T00:00:00Z".to_string(),
            ),
        };
        Err(format!(
            "failed to rotate DEK uid={uid:?}, useSeed=true, errState={err_state}, errGen={err_gen}, statusKeyIDHash={:?}, encryptKeyIDHash={:?}, stateKeyIDHash={:?}, expirationTimestamp={state_expires}",
            hash_if_not_empty(status_key_id),
            hash_if_not_empty(&encrypt_key_id),
            hash_if_not_empty(state_key_id),
        ))
    }

    /// A new random seed, encrypted by the plugin.
    async fn generate(&self, uid: &str, expires: SystemTime) -> Result<State, String> {
        let seed: [u8; SEED_LEN] = random().ok_or("no randomness available for a DEK seed")?;
        let seed = Arc::new(Seed(seed.to_vec()));
        let req = EncryptRequest {
            plaintext: seed.0.clone(),
            uid: uid.to_string(),
        };
        let resp = bounded(self.timeout, self.client.clone().encrypt(req))
            .await
            .map_err(|e| format!("failed to encrypt DEK, error: {e}"))?;
        let kind = EncryptedDekSourceType::HkdfSha256XnonceAesGcmSeed as i32;
        validate(&EncryptedObject {
            encrypted_data: vec![0],
            key_id: resp.key_id.clone(),
            encrypted_dek_source: resp.ciphertext.clone(),
            annotations: resp.annotations.clone(),
            encrypted_dek_source_type: kind,
        })?;
        Ok(State {
            cache_key: cache_key(kind, &resp.ciphertext, &resp.key_id, &resp.annotations),
            seed,
            key_id: resp.key_id,
            encrypted_seed: resp.ciphertext,
            annotations: resp.annotations,
            expires,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proto::key_management_service_server::{KeyManagementService, KeyManagementServiceServer};
    use proto::{DecryptResponse, EncryptResponse};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    /// A plugin that "encrypts" by XOR with a byte and the key ID in front; its key ID can
    /// change and it can fail.
    #[derive(Clone, Default)]
    struct Plugin {
        key_id: Arc<Mutex<String>>,
        down: Arc<AtomicBool>,
        decrypts: Arc<AtomicUsize>,
        encrypts: Arc<AtomicUsize>,
    }

    fn xor(b: &[u8]) -> Vec<u8> {
        b.iter().map(|c| c ^ 0x5a).collect()
    }

    #[tonic::async_trait]
    impl KeyManagementService for Plugin {
        async fn status(
            &self,
            _: tonic::Request<StatusRequest>,
        ) -> Result<tonic::Response<StatusResponse>, tonic::Status> {
            if self.down.load(Ordering::SeqCst) {
                return Err(tonic::Status::unavailable("plugin down"));
            }
            Ok(tonic::Response::new(StatusResponse {
                version: "v2".into(),
                healthz: "ok".into(),
                key_id: self.key_id.lock().unwrap().clone(),
            }))
        }
        async fn decrypt(
            &self,
            r: tonic::Request<DecryptRequest>,
        ) -> Result<tonic::Response<DecryptResponse>, tonic::Status> {
            if self.down.load(Ordering::SeqCst) {
                return Err(tonic::Status::unavailable("plugin down"));
            }
            self.decrypts.fetch_add(1, Ordering::SeqCst);
            let r = r.into_inner();
            let tag = format!("{}|", r.key_id);
            let Some(rest) = r.ciphertext.strip_prefix(tag.as_bytes()) else {
                return Err(tonic::Status::invalid_argument("not ours"));
            };
            assert_eq!(r.annotations.get("kms.example.com").unwrap(), b"a");
            Ok(tonic::Response::new(DecryptResponse {
                plaintext: xor(rest),
            }))
        }
        async fn encrypt(
            &self,
            r: tonic::Request<EncryptRequest>,
        ) -> Result<tonic::Response<EncryptResponse>, tonic::Status> {
            if self.down.load(Ordering::SeqCst) {
                return Err(tonic::Status::unavailable("plugin down"));
            }
            self.encrypts.fetch_add(1, Ordering::SeqCst);
            let r = r.into_inner();
            assert!(!r.uid.is_empty());
            let key_id = self.key_id.lock().unwrap().clone();
            let mut ciphertext = format!("{key_id}|").into_bytes();
            ciphertext.extend(xor(&r.plaintext));
            Ok(tonic::Response::new(EncryptResponse {
                ciphertext,
                key_id,
                annotations: [("kms.example.com".to_string(), b"a".to_vec())].into(),
            }))
        }
    }

    /// Serves `plugin` on a socket in `dir` (on the plugin-call thread's runtime).
    fn serve(dir: &std::path::Path, plugin: Plugin) -> PathBuf {
        let path = dir.join("kms.sock");
        let listener = {
            let _g = runtime().enter();
            tokio::net::UnixListener::bind(&path).unwrap()
        };
        let incoming = futures::stream::unfold(listener, |l| async move {
            let conn = l.accept().await.map(|(s, _)| s);
            Some((conn, l))
        });
        runtime().spawn(
            tonic::transport::Server::builder()
                .add_service(KeyManagementServiceServer::new(plugin))
                .serve_with_incoming(incoming),
        );
        path
    }

    fn fast() -> Timing {
        Timing {
            positive: Duration::from_millis(100),
            negative: Duration::from_millis(50),
            max_ttl: Duration::from_millis(400),
        }
    }

    const KEY: &[u8] = b"/core/secrets/ns/s";

    #[test]
    fn seals_kubes_envelope_and_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = Plugin::default();
        *plugin.key_id.lock().unwrap() = "key-1".into();
        let sock = serve(dir.path(), plugin.clone());
        let k = Kms::start("vault", sock, Duration::from_secs(3), Timing::default());
        let sealed = k.seal(KEY, b"{\"data\":\"hunter2\"}").unwrap();
        assert!(sealed.starts_with(b"k8s:enc:kms:v2:vault:"));
        assert!(!sealed.windows(7).any(|w| w == b"hunter2"));
        let obj = EncryptedObject::decode(&sealed[b"k8s:enc:kms:v2:vault:".len()..]).unwrap();
        assert_eq!(obj.key_id, "key-1");
        assert_eq!(
            obj.encrypted_dek_source_type,
            EncryptedDekSourceType::HkdfSha256XnonceAesGcmSeed as i32
        );
        // info, nonce, ciphertext, tag
        assert_eq!(obj.encrypted_data.len(), 32 + 12 + 18 + 16);
        assert!(obj.encrypted_dek_source.starts_with(b"key-1|"));
        assert_eq!(k.open(KEY, &sealed).unwrap(), b"{\"data\":\"hunter2\"}");
        assert!(!k.stale(&sealed));
        // Our own seed is cached: no Decrypt.
        assert_eq!(plugin.decrypts.load(Ordering::SeqCst), 0);
        assert_eq!(plugin.encrypts.load(Ordering::SeqCst), 1);
        // Bound to its storage key.
        let e = k.open(b"/core/secrets/ns/other", &sealed).unwrap_err();
        assert!(e.contains("authentication"), "{e}");

        // Another process (a restart) asks the plugin once, then uses its cache.
        let other = Kms::start(
            "vault",
            dir.path().join("kms.sock"),
            Duration::from_secs(3),
            Timing::default(),
        );
        assert_eq!(other.open(KEY, &sealed).unwrap(), b"{\"data\":\"hunter2\"}");
        assert_eq!(other.open(KEY, &sealed).unwrap(), b"{\"data\":\"hunter2\"}");
        assert_eq!(plugin.decrypts.load(Ordering::SeqCst), 1);
        // Its own seed is another: its values are not ours, both read.
        let mine = other.seal(KEY, b"x").unwrap();
        assert_ne!(
            EncryptedObject::decode(&mine[b"k8s:enc:kms:v2:vault:".len()..])
                .unwrap()
                .encrypted_dek_source,
            obj.encrypted_dek_source
        );
        assert_eq!(k.open(KEY, &mine).unwrap(), b"x");

        // Corrupt envelopes are kube's errors.
        let mut bad = obj.clone();
        bad.key_id.clear();
        let mut stored = b"k8s:enc:kms:v2:vault:".to_vec();
        bad.encode(&mut stored).unwrap();
        assert_eq!(
            k.open(KEY, &stored).unwrap_err(),
            "failed to validate key id: keyID is empty"
        );
        let mut bad = obj.clone();
        bad.encrypted_data.truncate(10);
        let mut stored = b"k8s:enc:kms:v2:vault:".to_vec();
        bad.encode(&mut stored).unwrap();
        assert_eq!(
            k.open(KEY, &stored).unwrap_err(),
            "the stored data was shorter than the required size"
        );
    }

    /// The layout byte for byte: HKDF-Expand(SHA-256, seed, info) as the AES-256-GCM key of
    /// the value (a vector computed independently with Python's `cryptography`).
    #[test]
    fn the_seed_derives_kubes_keys() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let seed = [7u8; 32];
        let info = [9u8; 32];
        assert_eq!(
            derive(&seed, &info).unwrap().to_vec(),
            hex(KDF_VECTOR_KEY),
            "HKDF-Expand"
        );
        let mut stored = info.to_vec();
        stored.extend(hex(KDF_VECTOR_SEALED));
        assert_eq!(
            open_with_seed(&seed, b"/registry/secrets/default/s", &stored).unwrap(),
            b"{\"kind\":\"Secret\"}"
        );
        let sealed = seal_with_info(&seed, &info, b"/k", b"abc").unwrap();
        assert_eq!(&sealed[..32], &info);
        assert_eq!(open_with_seed(&seed, b"/k", &sealed).unwrap(), b"abc");
        assert!(open_with_seed(&seed[..16], b"/k", &sealed)
            .unwrap_err()
            .contains("invalid seed length 16"));
    }

    // HKDF-Expand(SHA-256, prk=[7;32], info=[9;32], 32), and AES-GCM with it of
    // {"kind":"Secret"} under the nonce [1;12] and AAD /registry/secrets/default/s.
    const KDF_VECTOR_KEY: &str = "35b288189e0188b14b3bd7dce45c9c67960c96b894ae5bf3ae51719c52608647";
    const KDF_VECTOR_SEALED: &str = "010101010101010101010101564db4d1568a345440980fbe511f7030fdf9967e7c974587fa5bfef6bf9f97c754";

    #[test]
    fn key_id_changes_rotate_the_seed_and_outages_coast_then_fail() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = Plugin::default();
        *plugin.key_id.lock().unwrap() = "key-1".into();
        let sock = serve(dir.path(), plugin.clone());
        let k = Kms::start("p", sock, Duration::from_secs(2), fast());
        let old = k.seal(KEY, b"old").unwrap();
        *plugin.key_id.lock().unwrap() = "key-2".into();
        let deadline = Instant::now() + Duration::from_secs(10);
        while k.key_id().as_deref() != Some("key-2") {
            assert!(Instant::now() < deadline, "never rotated");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(k.stale(&old), "a value of the old key ID is stale");
        let new = k.seal(KEY, b"new").unwrap();
        assert!(!k.stale(&new));
        assert_eq!(k.open(KEY, &old).unwrap(), b"old");

        // Down: writes coast on the current seed, reads of cached seeds work, then writes
        // fail with kube's text once the seed's write life ran out.
        plugin.down.store(true, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(150));
        assert_eq!(k.open(KEY, &old).unwrap(), b"old");
        let deadline = Instant::now() + Duration::from_secs(10);
        let e = loop {
            match k.seal(KEY, b"x") {
                Ok(_) => {
                    assert!(Instant::now() < deadline, "writes never stopped");
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => break e,
            }
        };
        assert!(
            e.starts_with("encryptedDEKSource with keyID hash \"sha256:"),
            "{e}"
        );
        assert!(e.contains("expired at"), "{e}");
        assert!(!e.contains("key-2"), "{e}");
        assert_eq!(k.open(KEY, &new).unwrap(), b"new");
        // Back: writes again.
        plugin.down.store(false, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(10);
        while k.seal(KEY, b"x").is_err() {
            assert!(Instant::now() < deadline, "writes never came back");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_plugin_down_at_start_is_not_ready_then_recovers() {
        let dir = tempfile::tempdir().unwrap();
        let plugin = Plugin::default();
        *plugin.key_id.lock().unwrap() = "key-1".into();
        let k = Kms::start(
            "p",
            dir.path().join("kms.sock"),
            Duration::from_millis(500),
            fast(),
        );
        let e = k.seal(KEY, b"x").unwrap_err();
        assert!(e.contains("the KMS v2 provider \"p\" is not ready"), "{e}");
        assert!(
            e.contains("failed to perform status section of the healthz check for KMS Provider p"),
            "{e}"
        );
        serve(dir.path(), plugin);
        let deadline = Instant::now() + Duration::from_secs(10);
        while k.seal(KEY, b"x").is_err() {
            assert!(Instant::now() < deadline, "never became ready");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn status_answers_are_checked_as_kube_checks_them() {
        assert_eq!(
            validate_key_id(&"k".repeat(1025)).unwrap_err(),
            "keyID is 1025 bytes, which exceeds the max size of 1024"
        );
        let mut o = EncryptedObject {
            encrypted_data: vec![1],
            key_id: "k".into(),
            encrypted_dek_source: vec![1],
            annotations: [("nodots".to_string(), vec![])].into(),
            encrypted_dek_source_type: 1,
        };
        assert_eq!(
            validate(&o).unwrap_err(),
            "failed to validate annotations: annotations: Invalid value: \"nodots\": should be a domain with at least two segments separated by dots"
        );
        o.annotations.clear();
        o.encrypted_dek_source_type = 7;
        assert_eq!(
            validate(&o).unwrap_err(),
            "unknown encryptedDEKSourceType: 7"
        );
        assert_eq!(
            hash_if_not_empty("2"),
            "sha256:d4735e3a265e16eee03f59718b9b5d03019c07d8b6c51f90da3a666eec13ab35"
        );
    }
}

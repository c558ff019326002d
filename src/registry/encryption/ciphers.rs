//! The ciphers of the keyed providers, with kube's stored layouts (the part after
//! `k8s:enc:<provider>:v1:<key name>:`):
//!
//! - `aesgcm`: a random 12-byte nonce, then AES-GCM ciphertext and tag, the storage key as
//!   authenticated data (16-, 24- or 32-byte keys: ring for AES-128/256, RustCrypto's
//!   `aes-gcm` for AES-192, which ring lacks);
//! - `aescbc`: a random 16-byte IV, then AES-CBC ciphertext of the PKCS#7-padded value
//!   (16-, 24- or 32-byte keys);
//! - `secretbox`: a random 24-byte nonce, then NaCl's secretbox (XSalsa20-Poly1305: the
//!   16-byte tag before the ciphertext, as Go's `nacl/secretbox` writes it; 32-byte keys).
//!
//! Opening reports why a value does not open in kube's words, never the key or the data.

use aes_gcm::aead::consts::U12;
use cbc::cipher::block_padding::Pkcs7;
use cbc::cipher::{BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use crypto_secretbox::aead::{AeadInPlace, KeyInit};
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_128_GCM, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};

/// A provider kind with keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    AesGcm,
    AesCbc,
    Secretbox,
}

impl Kind {
    /// The name in the configuration and in the stored prefix.
    pub fn name(self) -> &'static str {
        match self {
            Kind::AesGcm => "aesgcm",
            Kind::AesCbc => "aescbc",
            Kind::Secretbox => "secretbox",
        }
    }

    /// The key lengths kube accepts for the kind.
    pub fn key_sizes(self) -> &'static [usize] {
        match self {
            Kind::AesGcm => &[16, 24, 32],
            Kind::AesCbc => &[16, 24, 32],
            Kind::Secretbox => &[32],
        }
    }

    /// `k8s:enc:<kind>:v1:`.
    pub fn prefix(self) -> String {
        format!("k8s:enc:{}:v1:", self.name())
    }

    /// kube's text when a value's key name is not among the provider's keys.
    pub fn no_key_error(self) -> &'static str {
        match self {
            Kind::AesGcm | Kind::AesCbc => {
                "no matching key was found for the provided AES transformer"
            }
            Kind::Secretbox => "no matching key was found for the provided Secretbox transformer",
        }
    }
}

/// One key, ready to seal and open.
pub enum Cipher {
    Gcm(Box<LessSafeKey>),
    /// AES-192-GCM (24-byte keys), the same layout.
    Gcm192(Box<Aes192Gcm>),
    /// The raw key (16, 24 or 32 bytes); the key schedule is made per value.
    Cbc(Vec<u8>),
    Secretbox(Box<crypto_secretbox::XSalsa20Poly1305>),
}

/// AES-192 in GCM mode with the standard 12-byte nonce.
pub type Aes192Gcm = aes_gcm::AesGcm<aes::Aes192, U12>;

const CBC_BLOCK: usize = 16;
const SECRETBOX_NONCE: usize = 24;
const SECRETBOX_TAG: usize = 16;

impl Cipher {
    /// A cipher of `kind` over `key`, whose length the caller checked.
    pub fn new(kind: Kind, key: &[u8]) -> Option<Cipher> {
        match kind {
            Kind::AesGcm => {
                let alg = match key.len() {
                    16 => &AES_128_GCM,
                    24 => {
                        return Aes192Gcm::new_from_slice(key)
                            .ok()
                            .map(|c| Cipher::Gcm192(Box::new(c)))
                    }
                    32 => &AES_256_GCM,
                    _ => return None,
                };
                let unbound = UnboundKey::new(alg, key).ok()?;
                Some(Cipher::Gcm(Box::new(LessSafeKey::new(unbound))))
            }
            Kind::AesCbc => matches!(key.len(), 16 | 24 | 32).then(|| Cipher::Cbc(key.to_vec())),
            Kind::Secretbox => crypto_secretbox::XSalsa20Poly1305::new_from_slice(key)
                .ok()
                .map(|c| Cipher::Secretbox(Box::new(c))),
        }
    }

    /// The sealed form of `plain` (without the prefix); `None` when no randomness or no
    /// cipher is available.
    pub fn seal(&self, storage_key: &[u8], plain: &[u8]) -> Option<Vec<u8>> {
        match self {
            Cipher::Gcm(k) => {
                let nonce: [u8; NONCE_LEN] = random()?;
                let mut data = plain.to_vec();
                k.seal_in_place_append_tag(
                    Nonce::assume_unique_for_key(nonce),
                    Aad::from(storage_key),
                    &mut data,
                )
                .ok()?;
                let mut out = nonce.to_vec();
                out.extend_from_slice(&data);
                Some(out)
            }
            Cipher::Gcm192(c) => {
                let nonce: [u8; NONCE_LEN] = random()?;
                let mut data = plain.to_vec();
                c.encrypt_in_place(&nonce.into(), storage_key, &mut data)
                    .ok()?;
                let mut out = nonce.to_vec();
                out.extend_from_slice(&data);
                Some(out)
            }
            Cipher::Cbc(key) => {
                let iv: [u8; CBC_BLOCK] = random()?;
                let sealed = match key.len() {
                    16 => cbc::Encryptor::<aes::Aes128>::new_from_slices(key, &iv)
                        .ok()?
                        .encrypt_padded_vec_mut::<Pkcs7>(plain),
                    24 => cbc::Encryptor::<aes::Aes192>::new_from_slices(key, &iv)
                        .ok()?
                        .encrypt_padded_vec_mut::<Pkcs7>(plain),
                    32 => cbc::Encryptor::<aes::Aes256>::new_from_slices(key, &iv)
                        .ok()?
                        .encrypt_padded_vec_mut::<Pkcs7>(plain),
                    _ => return None,
                };
                let mut out = iv.to_vec();
                out.extend_from_slice(&sealed);
                Some(out)
            }
            Cipher::Secretbox(c) => {
                let nonce: [u8; SECRETBOX_NONCE] = random()?;
                let mut data = plain.to_vec();
                let tag = c
                    .encrypt_in_place_detached(&nonce.into(), b"", &mut data)
                    .ok()?;
                let mut out = Vec::with_capacity(SECRETBOX_NONCE + SECRETBOX_TAG + data.len());
                out.extend_from_slice(&nonce);
                out.extend_from_slice(&tag);
                out.extend_from_slice(&data);
                Some(out)
            }
        }
    }

    /// The plaintext of `sealed` (the part after the key name), or why it does not open.
    pub fn open(&self, storage_key: &[u8], sealed: &[u8]) -> Result<Vec<u8>, &'static str> {
        const SHORT: &str = "the stored data was shorter than the required size";
        match self {
            Cipher::Gcm(k) => {
                if sealed.len() < NONCE_LEN {
                    return Err(SHORT);
                }
                let (nonce, data) = sealed.split_at(NONCE_LEN);
                let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| SHORT)?;
                let mut buf = data.to_vec();
                let plain = k
                    .open_in_place(nonce, Aad::from(storage_key), &mut buf)
                    .map_err(|_| "cipher: message authentication failed")?;
                Ok(plain.to_vec())
            }
            Cipher::Gcm192(c) => {
                if sealed.len() < NONCE_LEN {
                    return Err(SHORT);
                }
                let (nonce, data) = sealed.split_at(NONCE_LEN);
                let mut buf = data.to_vec();
                c.decrypt_in_place(nonce.into(), storage_key, &mut buf)
                    .map_err(|_| "cipher: message authentication failed")?;
                Ok(buf)
            }
            Cipher::Cbc(key) => {
                if sealed.len() < CBC_BLOCK {
                    return Err(SHORT);
                }
                let (iv, data) = sealed.split_at(CBC_BLOCK);
                if data.len() % CBC_BLOCK != 0 {
                    return Err("the stored data is not a multiple of the block size");
                }
                const PADDING: &str = "invalid padding on input";
                let plain = match key.len() {
                    16 => cbc::Decryptor::<aes::Aes128>::new_from_slices(key, iv)
                        .map_err(|_| PADDING)?
                        .decrypt_padded_vec_mut::<Pkcs7>(data),
                    24 => cbc::Decryptor::<aes::Aes192>::new_from_slices(key, iv)
                        .map_err(|_| PADDING)?
                        .decrypt_padded_vec_mut::<Pkcs7>(data),
                    32 => cbc::Decryptor::<aes::Aes256>::new_from_slices(key, iv)
                        .map_err(|_| PADDING)?
                        .decrypt_padded_vec_mut::<Pkcs7>(data),
                    _ => return Err(PADDING),
                };
                plain.map_err(|_| PADDING)
            }
            Cipher::Secretbox(c) => {
                if sealed.len() < SECRETBOX_NONCE + SECRETBOX_TAG {
                    return Err(SHORT);
                }
                let (nonce, rest) = sealed.split_at(SECRETBOX_NONCE);
                let (tag, data) = rest.split_at(SECRETBOX_TAG);
                let mut buf = data.to_vec();
                c.decrypt_in_place_detached(nonce.into(), b"", &mut buf, tag.into())
                    .map_err(|_| "secretbox: message authentication failed")?;
                Ok(buf)
            }
        }
    }
}

pub(super) fn random<const N: usize>() -> Option<[u8; N]> {
    let mut b = [0u8; N];
    SystemRandom::new().fill(&mut b).ok()?;
    Some(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(kind: Kind, key: &[u8]) {
        let c = Cipher::new(kind, key).unwrap();
        for len in [0usize, 1, 15, 16, 17, 100] {
            let plain = vec![b'x'; len];
            let sealed = c.seal(b"/k", &plain).unwrap();
            assert_ne!(&sealed[..], &plain[..]);
            assert_eq!(c.open(b"/k", &sealed).unwrap(), plain, "{kind:?} {len}");
        }
    }

    #[test]
    fn each_cipher_round_trips_and_refuses_other_keys() {
        roundtrip(Kind::AesGcm, &[1; 16]);
        roundtrip(Kind::AesGcm, &[1; 24]);
        roundtrip(Kind::AesGcm, &[1; 32]);
        roundtrip(Kind::AesCbc, &[1; 16]);
        roundtrip(Kind::AesCbc, &[1; 24]);
        roundtrip(Kind::AesCbc, &[1; 32]);
        roundtrip(Kind::Secretbox, &[1; 32]);
        assert!(Cipher::new(Kind::AesGcm, &[1; 20]).is_none());
        // AES-192-GCM is bound to its key and its authenticated data.
        let a = Cipher::new(Kind::AesGcm, &[1; 24]).unwrap();
        let b = Cipher::new(Kind::AesGcm, &[2; 24]).unwrap();
        let sealed = a.seal(b"/k", b"{\"a\":1}").unwrap();
        assert_eq!(sealed.len(), 12 + 7 + 16);
        assert!(b
            .open(b"/k", &sealed)
            .unwrap_err()
            .contains("authentication"));
        assert!(a
            .open(b"/other", &sealed)
            .unwrap_err()
            .contains("authentication"));
        assert!(a.open(b"/k", &sealed[..8]).unwrap_err().contains("shorter"));
        assert!(Cipher::new(Kind::Secretbox, &[1; 16]).is_none());

        let a = Cipher::new(Kind::Secretbox, &[1; 32]).unwrap();
        let b = Cipher::new(Kind::Secretbox, &[2; 32]).unwrap();
        let sealed = a.seal(b"/k", b"{\"a\":1}").unwrap();
        assert_eq!(sealed.len(), 24 + 16 + 7);
        assert!(b
            .open(b"/k", &sealed)
            .unwrap_err()
            .contains("authentication"));
        assert!(a
            .open(b"/k", &sealed[..30])
            .unwrap_err()
            .contains("shorter"));

        let a = Cipher::new(Kind::AesCbc, &[1; 32]).unwrap();
        let sealed = a.seal(b"/k", b"0123456789abcdef").unwrap();
        // IV, the block, a block of padding.
        assert_eq!(sealed.len(), 16 + 32);
        assert!(a
            .open(b"/k", &sealed[..40])
            .unwrap_err()
            .contains("multiple"));
        assert!(a.open(b"/k", &sealed[..8]).unwrap_err().contains("shorter"));
        assert!(a.open(b"/k", &sealed[..16]).is_err());
    }

    /// Values kube would write: AES-CBC-256 of a known IV and plaintext (NIST SP 800-38A
    /// F.2.5, first block, then a full PKCS#7 padding block), opened by our cipher.
    #[test]
    fn aescbc_reads_the_standard_layout() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let key = hex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
        let iv = hex("000102030405060708090a0b0c0d0e0f");
        let plain = hex("6bc1bee22e409f96e93d7e117393172a");
        let c = Cipher::new(Kind::AesCbc, &key).unwrap();
        let sealed = c.seal(b"", &plain).unwrap();
        // Our own IV is random; re-encrypt with the NIST IV to compare the first block.
        let ct = cbc::Encryptor::<aes::Aes256>::new_from_slices(&key, &iv)
            .unwrap()
            .encrypt_padded_vec_mut::<Pkcs7>(&plain);
        assert_eq!(&ct[..16], &hex("f58c4c04d6e5f1ba779eabfb5f7bfbd6")[..]);
        let mut stored = iv.clone();
        stored.extend_from_slice(&ct);
        assert_eq!(c.open(b"", &stored).unwrap(), plain);
        assert_eq!(c.open(b"", &sealed).unwrap(), plain);
    }

    /// The GCM specification's test case 11 (AES-192, 60-byte plaintext, 20 bytes of
    /// authenticated data), stored as kube lays it out (nonce, ciphertext, tag).
    #[test]
    fn aesgcm_192_reads_the_gcm_spec_vector() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let key = hex("feffe9928665731c6d6a8f9467308308feffe9928665731c");
        let aad = hex("feedfacedeadbeeffeedfacedeadbeefabaddad2");
        let plain = hex(concat!(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72",
            "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
        ));
        let stored = hex(concat!(
            "cafebabefacedbaddecaf888",
            "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c",
            "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
            "2519498e80f1478f37ba55bd6d27618c"
        ));
        let c = Cipher::new(Kind::AesGcm, &key).unwrap();
        assert_eq!(c.open(&aad, &stored).unwrap(), plain);
        let sealed = c.seal(&aad, &plain).unwrap();
        assert_eq!(sealed.len(), stored.len());
        assert_eq!(c.open(&aad, &sealed).unwrap(), plain);
    }

    /// NaCl's `tests/secretbox.c` vector (what Go's `nacl/secretbox`, and so kube, writes
    /// after the nonce): tag first, then the ciphertext.
    #[test]
    fn secretbox_reads_nacls_layout() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let key = hex("1b27556473e985d462cd51197a9a46c76009549eac6474f206c4ee0844f68389");
        let nonce = hex("69696ee955b62b73cd62bda875fc73d68219e0036b7a0b37");
        let plain = hex(concat!(
            "be075fc53c81f2d5cf141316ebeb0c7b5228c52a4c62cbd44b66849b64244ffce5ecbaaf33bd751a",
            "1ac728d45e6c61296cdc3c01233561f41db66cce314adb310e3be8250c46f06dceea3a7fa1348057",
            "e2f6556ad6b1318a024a838f21af1fde048977eb48f59ffd4924ca1c60902e52f0a089bc76897040",
            "e082f937763848645e0705"
        ));
        let boxed = hex(concat!(
            "f3ffc7703f9400e52a7dfb4b3d3305d98e993b9f48681273c29650ba32fc76ce48332ea7164d96a4",
            "476fb8c531a1186ac0dfc17c98dce87b4da7f011ec48c97271d2c20f9b928fe2270d6fb863d51738",
            "b48eeee314a7cc8ab932164548e526ae90224368517acfeabd6bb3732bc0e9da99832b61ca01b6de",
            "56244a9e88d5f9b37973f622a43d14a6599b1f654cb45a74e355a5"
        ));
        let c = Cipher::new(Kind::Secretbox, &key).unwrap();
        let mut stored = nonce;
        stored.extend_from_slice(&boxed);
        assert_eq!(c.open(b"", &stored).unwrap(), plain);
        let sealed = c.seal(b"", &plain).unwrap();
        assert_eq!(sealed.len(), stored.len());
        assert_eq!(c.open(b"", &sealed).unwrap(), plain);
    }
}

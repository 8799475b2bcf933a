//! LiteLLM's encryption of the secrets it stores (`litellm/proxy/common_utils/
//! encrypt_decrypt_utils.py`): every string of a stored model's `litellm_params` and every
//! value of a stored credential.
//!
//! The key is `sha256(LITELLM_SALT_KEY)`, else `sha256(master_key)`. A value is written as
//! NaCl's SecretBox (XSalsa20-Poly1305: a random 24-byte nonce, then the sealed bytes) in
//! URL-safe base64 with padding — LiteLLM's default. Reading also takes what LiteLLM reads:
//! `v2:gcm:` + URL-safe base64 of AES-256-GCM (`nonce(12) || ciphertext || tag(16)`, written
//! with `general_settings.encryption_algorithm: aes-256-gcm`), and standard base64 (older rows).

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::{alphabet, Engine};
use crypto_secretbox::aead::{Aead, KeyInit};
use crypto_secretbox::XSalsa20Poly1305;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM};
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

/// LiteLLM's marker of AES-256-GCM values (`V2_GCM_PREFIX`).
pub const V2_GCM_PREFIX: &str = "v2:gcm:";

const NACL_NONCE: usize = 24;
const GCM_NONCE: usize = 12;

/// Python's `base64.urlsafe_b64encode` (padded); reading takes padding or none.
const URL_SAFE: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_encode_padding(true).with_decode_padding_mode(DecodePaddingMode::Indifferent),
);
const STANDARD: GeneralPurpose = GeneralPurpose::new(
    &alphabet::STANDARD,
    GeneralPurposeConfig::new().with_encode_padding(true).with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// How new values are written (`general_settings.encryption_algorithm`): LiteLLM's default
/// SecretBox, or `aes-256-gcm`. Reading takes both, whichever this is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Algorithm {
    #[default]
    SecretBox,
    AesGcm,
}

/// Why a stored value could not be read as a secret (LiteLLM then keeps the value as stored).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecryptError {
    /// Not base64 at all: a value stored in plain text.
    NotBase64,
    /// Base64, but not sealed with this key (or not sealed at all).
    WrongKeyOrNotSealed,
    /// Sealed with this key, but not UTF-8 inside.
    NotText,
}

/// The key LiteLLM derives from the salt key (or master key).
#[derive(Clone)]
pub struct SecretKey([u8; 32]);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(****)")
    }
}

impl SecretKey {
    /// `sha256(signing_key.encode())`, LiteLLM's `_derive_key`.
    pub fn from_signing_key(signing_key: &str) -> SecretKey {
        SecretKey(Sha256::digest(signing_key.as_bytes()).into())
    }

    /// LiteLLM's choice of signing key: `LITELLM_SALT_KEY`, else the master key.
    pub fn choose(salt_key: Option<&str>, master_key: Option<&str>) -> Option<SecretKey> {
        salt_key.or(master_key).map(SecretKey::from_signing_key)
    }

    /// `encrypt_value_helper` with LiteLLM's default algorithm: SecretBox, URL-safe base64.
    pub fn encrypt(&self, plain: &str) -> Result<String, String> {
        let mut nonce = [0u8; NACL_NONCE];
        random(&mut nonce)?;
        Ok(self.encrypt_with_nonce(plain, &nonce))
    }

    /// `encrypt_value_helper`: the value sealed with `algorithm`.
    pub fn seal(&self, plain: &str, algorithm: Algorithm) -> Result<String, String> {
        match algorithm {
            Algorithm::SecretBox => self.encrypt(plain),
            Algorithm::AesGcm => self.encrypt_gcm(plain),
        }
    }

    /// SecretBox with a given nonce (tests compare it with PyNaCl's output byte for byte).
    pub fn encrypt_with_nonce(&self, plain: &str, nonce: &[u8; NACL_NONCE]) -> String {
        let cipher = XSalsa20Poly1305::new(&self.0.into());
        // Sealing cannot fail for a message in memory (the length limit is 2^38 bytes).
        let sealed = cipher.encrypt(nonce.into(), plain.as_bytes()).unwrap_or_default();
        let mut out = Vec::with_capacity(NACL_NONCE + sealed.len());
        out.extend_from_slice(nonce);
        out.extend_from_slice(&sealed);
        URL_SAFE.encode(out)
    }

    /// `_encrypt_aes_gcm`: `v2:gcm:` + URL-safe base64 of `nonce || ciphertext || tag`.
    pub fn encrypt_gcm(&self, plain: &str) -> Result<String, String> {
        let mut nonce = [0u8; GCM_NONCE];
        random(&mut nonce)?;
        let key = self.gcm_key();
        let mut sealed = plain.as_bytes().to_vec();
        key.seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut sealed)
            .map_err(|_| "AES-256-GCM sealing failed".to_string())?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(format!("{V2_GCM_PREFIX}{}", URL_SAFE.encode(out)))
    }

    /// `_decrypt_with_signing_key`: `v2:gcm:` values as AES-256-GCM, others as SecretBox in
    /// URL-safe (else standard) base64. An empty sealed value reads as `""`, as in LiteLLM.
    pub fn decrypt(&self, stored: &str) -> Result<String, DecryptError> {
        if let Some(encoded) = stored.strip_prefix(V2_GCM_PREFIX) {
            let mut sealed = URL_SAFE.decode(encoded).map_err(|_| DecryptError::NotBase64)?;
            if sealed.len() < GCM_NONCE {
                return Err(DecryptError::WrongKeyOrNotSealed);
            }
            let mut nonce = [0u8; GCM_NONCE];
            nonce.copy_from_slice(&sealed[..GCM_NONCE]);
            let plain = self
                .gcm_key()
                .open_in_place(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut sealed[GCM_NONCE..])
                .map_err(|_| DecryptError::WrongKeyOrNotSealed)?;
            return String::from_utf8(plain.to_vec()).map_err(|_| DecryptError::NotText);
        }
        let sealed =
            URL_SAFE.decode(stored).or_else(|_| STANDARD.decode(stored)).map_err(|_| DecryptError::NotBase64)?;
        if sealed.is_empty() {
            return Ok(String::new());
        }
        if sealed.len() < NACL_NONCE {
            return Err(DecryptError::WrongKeyOrNotSealed);
        }
        let (nonce, body) = sealed.split_at(NACL_NONCE);
        let cipher = XSalsa20Poly1305::new(&self.0.into());
        let plain = cipher.decrypt(nonce.into(), body).map_err(|_| DecryptError::WrongKeyOrNotSealed)?;
        String::from_utf8(plain).map_err(|_| DecryptError::NotText)
    }

    /// LiteLLM's reading of a stored model's params (`_resolve_db_litellm_param` with
    /// `return_original_value=True`): the value decrypted, or as stored when it does not decrypt.
    pub fn decrypt_or_keep(&self, stored: &str) -> String {
        self.decrypt(stored).unwrap_or_else(|_| stored.to_string())
    }

    fn gcm_key(&self) -> LessSafeKey {
        // A 32-byte key is what AES-256 takes: `new` cannot fail.
        LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &self.0).expect("a 32-byte key"))
    }
}

fn random(out: &mut [u8]) -> Result<(), String> {
    SystemRandom::new().fill(out).map_err(|_| "no randomness available to seal a secret".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_both_ways_and_fail_on_another_key() {
        let key = SecretKey::from_signing_key("sk-salt-1234");
        let other = SecretKey::from_signing_key("sk-other");
        for plain in ["sk-upstream-key", "", "ünïcode ✓", "https://api.example.com/v1"] {
            let sealed = key.encrypt(plain).unwrap();
            assert_eq!(key.decrypt(&sealed).as_deref(), Ok(plain));
            let gcm = key.encrypt_gcm(plain).unwrap();
            assert!(gcm.starts_with(V2_GCM_PREFIX));
            assert_eq!(key.decrypt(&gcm).as_deref(), Ok(plain));
            if !plain.is_empty() {
                assert_eq!(other.decrypt(&sealed), Err(DecryptError::WrongKeyOrNotSealed));
                assert_eq!(other.decrypt(&gcm), Err(DecryptError::WrongKeyOrNotSealed));
            }
        }
    }

    #[test]
    fn plain_values_are_kept_as_stored() {
        let key = SecretKey::from_signing_key("k");
        for plain in ["gpt-4o", "openai/gpt-4o-mini", "http://127.0.0.1:9/v1", "os.environ/KEY"] {
            assert_eq!(key.decrypt_or_keep(plain), plain);
        }
    }

    #[test]
    fn the_salt_key_wins_over_the_master_key() {
        let chosen = SecretKey::choose(Some("salt"), Some("master")).unwrap();
        assert_eq!(chosen.0, SecretKey::from_signing_key("salt").0);
        assert!(SecretKey::choose(None, None).is_none());
    }
}

//! LiteLLM's secrets, read and written as LiteLLM does: values sealed by LiteLLM's own
//! `encrypt_decrypt_utils.py` (PyNaCl's SecretBox and AES-256-GCM) decrypt here, Pointwork's
//! SecretBox is PyNaCl's byte for byte under the same nonce, and values Pointwork sealed
//! decrypt in LiteLLM. The vectors come from `scripts/litellm_secret_vectors.py` (checked in:
//! no Python at test time); `sealed_by_pointwork` was checked with its `--check`.

use pointwork_db::crypto::SecretKey;
use serde_json::Value;

fn vectors() -> Value {
    let text = include_str!("fixtures/litellm_secrets.json");
    serde_json::from_str(text).expect("the vectors file is JSON")
}

fn pairs(v: &Value) -> Vec<(String, String)> {
    let list = v.as_array().expect("a list of vectors");
    list.iter().map(|p| (p["plain"].as_str().unwrap().to_string(), p["sealed"].as_str().unwrap().to_string())).collect()
}

#[test]
fn values_litellm_sealed_decrypt() {
    let doc = vectors();
    let key = SecretKey::from_signing_key(doc["signing_key"].as_str().unwrap());
    let mut all = pairs(&doc["nacl"]);
    all.extend(pairs(&doc["gcm"]));
    all.push((
        doc["standard_base64"]["plain"].as_str().unwrap().to_string(),
        doc["standard_base64"]["sealed"].as_str().unwrap().to_string(),
    ));
    assert!(all.len() >= 11);
    for (plain, sealed) in all {
        assert_eq!(key.decrypt(&sealed).as_deref(), Ok(plain.as_str()), "{sealed}");
    }
    let wrong = SecretKey::from_signing_key("sk-another-master-key");
    let (_, sealed) = &pairs(&doc["nacl"])[0];
    assert!(wrong.decrypt(sealed).is_err(), "another key reads nothing");
    assert_eq!(wrong.decrypt_or_keep(sealed), *sealed, "and keeps the value as stored, as LiteLLM does");
}

#[test]
fn pointwork_seals_as_pynacl_does() {
    let doc = vectors();
    let key = SecretKey::from_signing_key(doc["signing_key"].as_str().unwrap());
    let fixed = &doc["fixed_nonce"];
    let hex = fixed["nonce_hex"].as_str().unwrap();
    let mut nonce = [0u8; 24];
    for (i, b) in nonce.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
    }
    let sealed = key.encrypt_with_nonce(fixed["plain"].as_str().unwrap(), &nonce);
    assert_eq!(sealed, fixed["sealed"].as_str().unwrap(), "the same bytes as PyNaCl's SecretBox");
}

#[test]
fn values_pointwork_sealed_decrypt_in_litellm() {
    let doc = vectors();
    let key = SecretKey::from_signing_key(doc["signing_key"].as_str().unwrap());
    if std::env::var_os("POINTWORK_PRINT_SEALED").is_some() {
        // Fresh values for scripts/litellm_secret_vectors.py --check.
        let plains = ["sk-upstream-secret-42", "", "ünïcode ✓"];
        let mut fresh: Vec<Value> =
            plains.iter().map(|p| serde_json::json!({"plain": p, "sealed": key.encrypt(p).unwrap()})).collect();
        fresh.extend(plains.iter().map(|p| serde_json::json!({"plain": p, "sealed": key.encrypt_gcm(p).unwrap()})));
        println!("{}", serde_json::to_string_pretty(&fresh).unwrap());
    }
    let checked = pairs(&doc["sealed_by_pointwork"]);
    assert!(checked.len() >= 6);
    for (plain, sealed) in checked {
        assert_eq!(key.decrypt(&sealed).as_deref(), Ok(plain.as_str()));
    }
}

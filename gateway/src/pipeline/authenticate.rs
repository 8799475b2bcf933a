//! The authenticate phase, once the request is understood: the caller's virtual key must allow
//! the model and admit the request under its rpm / tpm / budget; its tags, the
//! `x-litellm-tags` header's and the caller's credentials (for deployment affinity) join the
//! request's facts.

use pointwork_core::{affinity_hash, AffinitySettings, Snapshot};

use crate::clock::unix_now;
use crate::database::admit::InFlight;
use crate::facts::Extracted;
use crate::keys::{Caller, VirtualKey};
use crate::request::Request;
use crate::respond::Reply;
use crate::routes::Routes;

/// Admits the request, or the answer that refuses it. A database key with a cap on its
/// parallel requests holds its place until the returned guard is dropped.
pub(super) fn admit(
    routes: &Routes,
    caller: &Caller,
    request: &Request<'_>,
    extracted: &mut Extracted,
) -> Result<Option<InFlight>, Reply> {
    let mut in_flight = None;
    if let Some(key) = caller.virtual_key() {
        match &key.db {
            None => admit_key(key, &routes.snapshot, &extracted.facts.model)?,
            Some(entry) => {
                let facts = &mut extracted.facts;
                in_flight =
                    crate::database::admit::admit(key, entry, &routes.snapshot, &mut facts.model, unix_now_f64())?;
            }
        }
        extracted.facts.tags.extend(key.tags.iter().cloned());
    }
    if keeps_api_key_affinity(&routes.snapshot.settings.affinity) {
        // Deployment affinity keys on a hash of the caller's credentials, never on the key.
        extracted.facts.affinity.api_key = request.authorization.map(affinity_hash);
    }
    if let Some(tags) = request.tags {
        extracted.facts.tags.extend(header_tags(tags));
    }
    Ok(in_flight)
}

fn unix_now_f64() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64())
}

/// A virtual key's rpm / tpm / budget and model list admit the request, or the answer to send.
fn admit_key(key: &VirtualKey, snap: &Snapshot, model: &str) -> Result<(), Reply> {
    if !key.may_use(model, snap) {
        return Err(key.model_refused(model));
    }
    key.meter.admit(&key.limits, unix_now()).map_err(|refusal| key.refused(&refusal))
}

/// `x-litellm-tags: paid, !beta` → `paid`, `!beta` (empty items and invalid UTF-8 skipped).
fn header_tags(value: &[u8]) -> impl Iterator<Item = String> + '_ {
    value
        .split(|&b| b == b',')
        .filter_map(|t| std::str::from_utf8(t.trim_ascii()).ok())
        .filter(|t| !t.is_empty())
        .map(str::to_string)
}

fn keeps_api_key_affinity(a: &AffinitySettings) -> bool {
    a.all_groups.deployment || a.per_group.iter().any(|(_, k)| k.deployment)
}

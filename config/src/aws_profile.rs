//! AWS's shared files, read as the AWS SDKs read them: the credentials file
//! (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`, sections `[name]`) and the config
//! file (`AWS_CONFIG_FILE`, else `~/.aws/config`, sections `[profile name]` and `[default]`),
//! the credentials file's keys winning. A profile gives fixed keys, or a role to assume with
//! `role_arn` and `source_profile`, `credential_source` (`Ec2InstanceMetadata`, `EcsContainer`,
//! `Environment`) or `web_identity_token_file`.

use std::collections::HashMap;

use crate::azure::lookup;
use crate::check::Checker;

/// One profile's settings, both files merged.
pub(crate) type Profile = HashMap<String, String>;

/// The two files' profiles, by name.
pub(crate) struct SharedFiles {
    profiles: HashMap<String, Profile>,
    /// The files read, for messages.
    pub(crate) described: String,
}

impl SharedFiles {
    /// Reads both files (a missing file is empty; an unreadable one is reported in `described`).
    pub(crate) fn read(c: &Checker) -> SharedFiles {
        let home = lookup(c, "HOME").unwrap_or_default();
        let credentials =
            lookup(c, "AWS_SHARED_CREDENTIALS_FILE").unwrap_or_else(|| format!("{home}/.aws/credentials"));
        let config = lookup(c, "AWS_CONFIG_FILE").unwrap_or_else(|| format!("{home}/.aws/config"));
        let mut profiles: HashMap<String, Profile> = HashMap::new();
        for (name, settings) in sections(&std::fs::read_to_string(&config).unwrap_or_default()) {
            let name = match name.strip_prefix("profile ") {
                Some(named) => named.trim().to_string(),
                None => name,
            };
            profiles.entry(name).or_default().extend(settings);
        }
        for (name, settings) in sections(&std::fs::read_to_string(&credentials).unwrap_or_default()) {
            profiles.entry(name).or_default().extend(settings);
        }
        SharedFiles { profiles, described: format!("{credentials} and {config}") }
    }

    pub(crate) fn profile(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }
}

/// An INI file's sections (`[name]`) and their `key = value` lines; `#` and `;` start comments,
/// indented lines (nested settings such as `s3 =` blocks) are skipped.
fn sections(text: &str) -> Vec<(String, Profile)> {
    let mut out: Vec<(String, Profile)> = Vec::new();
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            out.push((name.trim().to_string(), Profile::new()));
        } else if let (Some((key, value)), Some((_, settings))) = (line.split_once('='), out.last_mut()) {
            settings.insert(key.trim().to_ascii_lowercase(), value.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_keep_their_keys_and_skip_comments_and_nested_blocks() {
        let text = "# comment\n[default]\naws_access_key_id = AKID\nAWS_Secret_Access_Key=s=1\n; c\n[profile dev]\nrole_arn = arn:aws:iam::1:role/r\ns3 =\n  max_concurrent_requests = 4\nsource_profile = default\n";
        let found = sections(text);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].0, "default");
        assert_eq!(found[0].1["aws_access_key_id"], "AKID");
        assert_eq!(found[0].1["aws_secret_access_key"], "s=1");
        assert_eq!(found[1].0, "profile dev");
        assert_eq!(found[1].1.get("max_concurrent_requests"), None);
        assert_eq!(found[1].1["source_profile"], "default");
    }
}

//! `pointwork.tls`: the certificate the gateway serves HTTPS with on its own port, and the CA
//! its callers' certificates must chain to (mTLS). Without the section, LiteLLM's
//! `SSL_CERTFILE_PATH` / `SSL_KEYFILE_PATH` variables turn TLS on, as they do for its proxy.
//!
//! Only the paths are read here; the gateway reads the files (at start and at every reload, so a
//! rotated certificate is picked up without a restart).

use std::path::{Path, PathBuf};

use crate::check::{Checker, Fields, KeyPath};
use crate::kinds::Kind;
use crate::node::Node;

/// The variable LiteLLM's proxy (`--ssl_certfile_path`) reads the certificate chain's path from.
pub const CERT_ENV: &str = "SSL_CERTFILE_PATH";
/// The variable LiteLLM's proxy (`--ssl_keyfile_path`) reads the private key's path from.
pub const KEY_ENV: &str = "SSL_KEYFILE_PATH";

/// The key of the section under `pointwork:`.
pub(crate) const TLS: &str = "tls";
const KEYS: [&str; 3] = ["cert", "key", "client_ca"];

/// HTTPS on the listening side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsSettings {
    /// PEM: the server's certificate first, then the intermediates that chain it to a root.
    pub cert: PathBuf,
    /// PEM: the certificate's private key (PKCS#8, PKCS#1 or SEC1; RSA, ECDSA or Ed25519).
    pub key: PathBuf,
    /// PEM: the CAs a caller's certificate must chain to. Set = every connection must present one.
    pub client_ca: Option<PathBuf>,
    /// Where `cert` and `key` were named (messages about their files say it).
    pub origin: TlsOrigin,
}

/// Who named the certificate and key files. `client_ca` only ever comes from the config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsOrigin {
    /// `pointwork.tls` (paths relative to the folder of the file that sets it).
    Config,
    /// `SSL_CERTFILE_PATH` / `SSL_KEYFILE_PATH` (paths relative to the working directory).
    Environment,
    /// `--tls-cert` / `--tls-key` (paths relative to the working directory).
    CommandLine,
}

impl TlsOrigin {
    /// How the certificate's path was named, e.g. `pointwork.tls.cert`.
    pub fn cert_name(self) -> &'static str {
        match self {
            TlsOrigin::Config => "pointwork.tls.cert",
            TlsOrigin::Environment => CERT_ENV,
            TlsOrigin::CommandLine => "--tls-cert",
        }
    }

    /// How the private key's path was named, e.g. `pointwork.tls.key`.
    pub fn key_name(self) -> &'static str {
        match self {
            TlsOrigin::Config => "pointwork.tls.key",
            TlsOrigin::Environment => KEY_ENV,
            TlsOrigin::CommandLine => "--tls-key",
        }
    }
}

/// How `client_ca` is named in messages (it only comes from the config).
pub const CLIENT_CA_NAME: &str = "pointwork.tls.client_ca";

/// What the `pointwork:` section said about TLS.
#[derive(Debug, Default)]
pub(crate) enum TlsSaid {
    /// No `pointwork.tls` (or `null`): the variables may turn TLS on.
    #[default]
    Nothing,
    /// `pointwork.tls` is set; `None` when it was refused (the errors say why).
    Section(Option<TlsSettings>),
}

const FILE: Kind<String> = Kind {
    expected: "a file path",
    parse: |n| match n {
        Node::Str(s) if !s.trim().is_empty() => Some(s.trim().to_string()),
        _ => None,
    },
    secret: false,
};

/// Reads `pointwork.tls`; relative paths are relative to `dir`, the folder of the file that sets
/// the section.
pub(crate) fn read_tls(c: &mut Checker, mut fields: Fields, dir: &Path) -> TlsSaid {
    let path = fields.path.clone();
    let (cert_set, key_set) = (fields.is_set("cert"), fields.is_set("key"));
    let cert = c.optional(&mut fields, "cert", &FILE);
    let key = c.optional(&mut fields, "key", &FILE);
    let client_ca = c.optional(&mut fields, "client_ca", &FILE);
    c.refuse_unknown(&fields, &KEYS);
    match (cert_set, key_set) {
        (true, true) => {}
        (true, false) => c.error(path.key("key"), "required with cert: the certificate's private key (a PEM file)"),
        (false, true) => c.error(path.key("cert"), "required with key: the certificate chain (a PEM file)"),
        (false, false) => {
            c.error(&path, "cert and key are required: the certificate chain and its private key (PEM files)")
        }
    }
    let settings = match (cert, key) {
        (Some(cert), Some(key)) => Some(TlsSettings {
            cert: dir.join(cert),
            key: dir.join(key),
            client_ca: client_ca.map(|ca| dir.join(ca)),
            origin: TlsOrigin::Config,
        }),
        _ => None,
    };
    TlsSaid::Section(settings)
}

/// The TLS settings: the section's when it is set (the variables are then not read, and a
/// warning says so), else the variables' (both or neither).
pub(crate) fn resolve_tls(c: &mut Checker, said: TlsSaid) -> Option<TlsSettings> {
    let (cert, key) = (env(c, CERT_ENV), env(c, KEY_ENV));
    if let TlsSaid::Section(settings) = said {
        for name in [CERT_ENV, KEY_ENV] {
            if env(c, name).is_some() {
                c.warn(env_path(name), "not read: pointwork.tls is set, and it wins");
            }
        }
        return settings;
    }
    match (cert, key) {
        (Some(cert), Some(key)) => Some(TlsSettings {
            cert: PathBuf::from(cert),
            key: PathBuf::from(key),
            client_ca: None,
            origin: TlsOrigin::Environment,
        }),
        (Some(_), None) => {
            c.error(env_path(KEY_ENV), format!("required with {CERT_ENV}: set both, or neither"));
            None
        }
        (None, Some(_)) => {
            c.error(env_path(CERT_ENV), format!("required with {KEY_ENV}: set both, or neither"));
            None
        }
        (None, None) => None,
    }
}

/// A variable set to something (an empty value counts as unset), trimmed.
fn env(c: &Checker, name: &str) -> Option<String> {
    c.env.lookup(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

fn env_path(name: &str) -> KeyPath {
    KeyPath::root(None).key(&format!("{name} (env)"))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::{load_str, Loaded};

    const MODELS: &str =
        "model_list:\n  - model_name: g\n    litellm_params: {model: openai/gpt-4o, api_key: sk-test-0000}\n";

    fn load(sections: &str, vars: &[(&str, &str)]) -> Result<Loaded, Vec<String>> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let env = move |name: &str| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
        load_str(&format!("{MODELS}{sections}"), Path::new("/etc/pointwork"), &env)
            .map_err(|e| e.0.iter().map(ToString::to_string).collect())
    }

    fn tls(sections: &str, vars: &[(&str, &str)]) -> Option<TlsSettings> {
        load(sections, vars).unwrap_or_else(|e| panic!("{e:?}")).config.gateway.tls
    }

    fn errors(sections: &str, vars: &[(&str, &str)]) -> Vec<String> {
        match load(sections, vars) {
            Ok(loaded) => panic!("expected errors, got {:?}", loaded.config.gateway.tls),
            Err(errors) => errors,
        }
    }

    fn warnings(sections: &str, vars: &[(&str, &str)]) -> Vec<String> {
        load(sections, vars).unwrap_or_else(|e| panic!("{e:?}")).warnings.iter().map(ToString::to_string).collect()
    }

    const BOTH_VARS: [(&str, &str); 2] = [(CERT_ENV, "env/cert.pem"), (KEY_ENV, "env/key.pem")];

    #[test]
    fn no_tls_by_default() {
        assert_eq!(tls("", &[]), None);
        assert_eq!(tls("pointwork: {listen: '127.0.0.1:4000'}\n", &[]), None);
        assert_eq!(tls("pointwork: {tls: null}\n", &[]), None);
    }

    #[test]
    fn section_paths_are_relative_to_the_config_folder() {
        let t = tls("pointwork:\n  tls: {cert: certs/chain.pem, key: /keys/server.key, client_ca: ca.pem}\n", &[]);
        assert_eq!(
            t,
            Some(TlsSettings {
                cert: "/etc/pointwork/certs/chain.pem".into(),
                key: "/keys/server.key".into(),
                client_ca: Some("/etc/pointwork/ca.pem".into()),
                origin: TlsOrigin::Config,
            })
        );
        let t = tls("pointwork:\n  tls: {cert: c.pem, key: k.pem}\n", &[]).unwrap();
        assert_eq!(t.client_ca, None);
    }

    #[test]
    fn section_paths_may_come_from_variables() {
        let t = tls("pointwork:\n  tls: {cert: os.environ/CERT, key: k.pem}\n", &[("CERT", "/run/c.pem")]).unwrap();
        assert_eq!(t.cert, Path::new("/run/c.pem"));
    }

    #[test]
    fn the_variables_turn_tls_on_without_the_section() {
        let expected = TlsSettings {
            cert: "env/cert.pem".into(),
            key: "env/key.pem".into(),
            client_ca: None,
            origin: TlsOrigin::Environment,
        };
        assert_eq!(tls("", &BOTH_VARS), Some(expected.clone()));
        assert_eq!(tls("pointwork: {shards: 2}\n", &BOTH_VARS), Some(expected));
        // Empty values count as unset.
        assert_eq!(tls("", &[(CERT_ENV, ""), (KEY_ENV, " ")]), None);
    }

    #[test]
    fn the_section_wins_over_the_variables_and_says_so() {
        let sections = "pointwork:\n  tls: {cert: c.pem, key: k.pem}\n";
        let t = tls(sections, &BOTH_VARS).unwrap();
        assert_eq!((t.cert.as_path(), t.origin), (Path::new("/etc/pointwork/c.pem"), TlsOrigin::Config));
        assert_eq!(
            warnings(sections, &BOTH_VARS),
            [
                "SSL_CERTFILE_PATH (env): not read: pointwork.tls is set, and it wins",
                "SSL_KEYFILE_PATH (env): not read: pointwork.tls is set, and it wins",
            ]
        );
        assert!(warnings(sections, &[]).is_empty());
    }

    #[test]
    fn one_variable_without_the_other_is_an_error() {
        assert_eq!(
            errors("", &[(CERT_ENV, "c.pem")]),
            ["SSL_KEYFILE_PATH (env): required with SSL_CERTFILE_PATH: set both, or neither"]
        );
        assert_eq!(
            errors("", &[(KEY_ENV, "k.pem")]),
            ["SSL_CERTFILE_PATH (env): required with SSL_KEYFILE_PATH: set both, or neither"]
        );
        // A broken section does not fall back to the variables (nor complain about them).
        assert_eq!(
            errors("pointwork:\n  tls: {cert: c.pem}\n", &[(KEY_ENV, "k.pem")]),
            ["pointwork.tls.key: required with cert: the certificate's private key (a PEM file)"]
        );
    }

    #[test]
    fn cert_and_key_come_together() {
        assert_eq!(
            errors("pointwork:\n  tls: {cert: c.pem}\n", &[]),
            ["pointwork.tls.key: required with cert: the certificate's private key (a PEM file)"]
        );
        assert_eq!(
            errors("pointwork:\n  tls: {key: k.pem, client_ca: ca.pem}\n", &[]),
            ["pointwork.tls.cert: required with key: the certificate chain (a PEM file)"]
        );
        let neither =
            ["pointwork.tls: cert and key are required: the certificate chain and its private key (PEM files)"];
        assert_eq!(errors("pointwork:\n  tls: {client_ca: ca.pem}\n", &[]), neither);
        assert_eq!(errors("pointwork:\n  tls: {}\n", &[]), neither);
    }

    #[test]
    fn bad_values_name_their_key() {
        assert_eq!(
            errors("pointwork:\n  tls: {cert: '', key: 3}\n", &[]),
            [r#"pointwork.tls.cert: expected a file path, got """#, "pointwork.tls.key: expected a file path, got 3"]
        );
        assert_eq!(
            errors("pointwork:\n  tls: {cert: c.pem, key: k.pem, client_ca: [a]}\n", &[]),
            [r#"pointwork.tls.client_ca: expected a file path, got a list"#]
        );
        // Nor does a section that is not a map.
        assert_eq!(
            errors("pointwork:\n  tls: on.pem\n", &[(CERT_ENV, "c.pem")]),
            [r#"pointwork.tls: expected a map, got "on.pem""#]
        );
    }

    #[test]
    fn unknown_keys_name_the_valid_ones() {
        assert_eq!(
            errors("pointwork:\n  tls: {cert: c.pem, key: k.pem, client_cas: x.pem, ciphers: ALL}\n", &[]),
            [
                r#"pointwork.tls.client_cas: unknown key; did you mean "client_ca"? valid keys: cert, key, client_ca"#,
                "pointwork.tls.ciphers: unknown key; valid keys: cert, key, client_ca",
            ]
        );
    }

    #[test]
    fn origins_name_their_keys() {
        let names = |o: TlsOrigin| (o.cert_name(), o.key_name());
        assert_eq!(names(TlsOrigin::Config), ("pointwork.tls.cert", "pointwork.tls.key"));
        assert_eq!(names(TlsOrigin::Environment), ("SSL_CERTFILE_PATH", "SSL_KEYFILE_PATH"));
        assert_eq!(names(TlsOrigin::CommandLine), ("--tls-cert", "--tls-key"));
    }
}

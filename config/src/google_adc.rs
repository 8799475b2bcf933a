//! Vertex AI's credential, found as LiteLLM and Google's Application Default Credentials find
//! it: `vertex_credentials` (a JSON file's path or the JSON itself), else `VERTEXAI_CREDENTIALS`,
//! else the file `GOOGLE_APPLICATION_CREDENTIALS` names, else gcloud's well-known file
//! (`$CLOUDSDK_CONFIG/application_default_credentials.json`, else
//! `~/.config/gcloud/application_default_credentials.json`), else the GCE/GKE metadata server
//! (`GCE_METADATA_HOST`, else `metadata.google.internal`) — the last resort, with a warning: its
//! deployments fail their requests, with the reason, until it gives a token.
//!
//! A file is a service account's key (`"type": "service_account"`, its `token_uri` honoured)
//! or a user's credentials (`"type": "authorized_user"`: `client_id`, `client_secret`,
//! `refresh_token`, as `gcloud auth application-default login` writes them). gcloud's file
//! takes its project, when it has none, from gcloud's active configuration (`core/project`).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use pointwork_core::upstream_auth::{GoogleAuthorizedUser, GoogleMetadata, GoogleServiceAccount, GOOGLE_CLOUD_SCOPE};
use pointwork_core::UpstreamAuth;
use serde::Deserialize;

use crate::azure::lookup;
use crate::check::{Checker, KeyPath};

const GOOGLE_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
const METADATA_HOST: &str = "metadata.google.internal";
const WELL_KNOWN_FILE: &str = "application_default_credentials.json";
/// How long the project's id is waited for from the metadata server at load.
const METADATA_TIMEOUT: Duration = Duration::from_secs(1);

/// The credential found and the project it names, if any.
pub(crate) struct Found {
    pub(crate) auth: UpstreamAuth,
    pub(crate) project: Option<String>,
}

/// A credentials file's members.
#[derive(Deserialize)]
struct CredentialsFile {
    #[serde(rename = "type")]
    kind: Option<String>,
    project_id: Option<String>,
    private_key_id: Option<String>,
    private_key: Option<String>,
    client_email: Option<String>,
    client_id: Option<String>,
    client_secret: Option<String>,
    refresh_token: Option<String>,
    token_uri: Option<String>,
}

/// The credential of a Vertex deployment; `Err` is the key path (or environment variable) and
/// what is wrong there.
pub(crate) fn find(
    c: &mut Checker,
    written: Option<&(String, KeyPath)>,
    entry: &KeyPath,
) -> Result<Found, (String, String)> {
    let (text, path) = match written {
        Some((value, path)) => (credentials_text(value).map_err(|e| (path.to_string(), e))?, path.to_string()),
        None => match (lookup(c, "VERTEXAI_CREDENTIALS"), lookup(c, "GOOGLE_APPLICATION_CREDENTIALS")) {
            (Some(value), _) => {
                let path = "VERTEXAI_CREDENTIALS (environment)".to_string();
                (credentials_text(&value).map_err(|e| (path.clone(), e))?, path)
            }
            (None, Some(file)) => {
                let path = "GOOGLE_APPLICATION_CREDENTIALS (environment)".to_string();
                (read_file(&file).map_err(|e| (path.clone(), e))?, path)
            }
            (None, None) => {
                match gcloud_dir(c).filter(|dir| Path::new(&format!("{dir}/{WELL_KNOWN_FILE}")).is_file()) {
                    Some(dir) => {
                        let file = format!("{dir}/{WELL_KNOWN_FILE}");
                        let mut found =
                            parse(&read_file(&file).map_err(|e| (file.clone(), e))?).map_err(|why| (file, why))?;
                        found.project = found.project.or_else(|| gcloud_project(&dir));
                        return Ok(found);
                    }
                    None => return Ok(metadata_server(c, entry)),
                }
            }
        },
    };
    parse(&text).map_err(|why| (path, why))
}

/// The metadata server's credential, with the warning that nothing else was found.
fn metadata_server(c: &mut Checker, entry: &KeyPath) -> Found {
    let host = metadata_host(c);
    c.warn(
        entry.key("vertex_credentials"),
        format!("no credentials given (vertex_credentials, VERTEXAI_CREDENTIALS, GOOGLE_APPLICATION_CREDENTIALS, gcloud's {WELL_KNOWN_FILE}): the token is asked of the metadata server at {host}, and this deployment's requests fail until it gives one"),
    );
    Found { auth: UpstreamAuth::GoogleMetadata(GoogleMetadata { host }), project: None }
}

/// `GCE_METADATA_HOST` (or the older `GCE_METADATA_ROOT`), else `metadata.google.internal`.
fn metadata_host(c: &Checker) -> String {
    lookup(c, "GCE_METADATA_HOST").or_else(|| lookup(c, "GCE_METADATA_ROOT")).unwrap_or_else(|| METADATA_HOST.into())
}

/// gcloud's configuration directory: `CLOUDSDK_CONFIG`, else `~/.config/gcloud`.
fn gcloud_dir(c: &Checker) -> Option<String> {
    let dir = match lookup(c, "CLOUDSDK_CONFIG") {
        Some(dir) => dir,
        None => format!("{}/.config/gcloud", lookup(c, "HOME")?),
    };
    Some(dir.trim_end_matches('/').to_string())
}

/// The project of gcloud's active configuration (`gcloud config set project`): `project` in the
/// `[core]` section of `configurations/config_{active_config, else default}`.
fn gcloud_project(dir: &str) -> Option<String> {
    let active = std::fs::read_to_string(format!("{dir}/active_config")).unwrap_or_default();
    let active = if active.trim().is_empty() { "default" } else { active.trim() };
    let text = std::fs::read_to_string(format!("{dir}/configurations/config_{active}")).ok()?;
    let mut in_core = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_core = line == "[core]";
        } else if let Some((key, value)) = line.split_once('=').filter(|_| in_core) {
            if key.trim() == "project" && !value.trim().is_empty() {
                return Some(value.trim().to_string());
            }
        }
    }
    None
}

/// A service account's key or a user's credentials, from the file's JSON.
fn parse(text: &str) -> Result<Found, String> {
    let file: CredentialsFile =
        serde_json::from_str(text).map_err(|e| format!("not a Google credentials JSON: {e}"))?;
    let token_uri = file.token_uri.clone().unwrap_or_else(|| GOOGLE_TOKEN_URI.to_string());
    let auth = match file.kind.as_deref() {
        Some("service_account") => {
            let (Some(client_email), Some(private_key)) = (file.client_email, file.private_key) else {
                return Err("the service-account JSON lacks client_email or private_key".into());
            };
            if !private_key.contains("-----BEGIN PRIVATE KEY-----") {
                return Err("private_key is not a PEM PKCS#8 key (-----BEGIN PRIVATE KEY-----)".into());
            }
            UpstreamAuth::GoogleServiceAccount(GoogleServiceAccount {
                client_email,
                private_key_pem: private_key,
                private_key_id: file.private_key_id,
                token_uri,
                scope: GOOGLE_CLOUD_SCOPE.to_string(),
            })
        }
        Some("authorized_user") => {
            let (Some(client_id), Some(client_secret), Some(refresh_token)) =
                (file.client_id, file.client_secret, file.refresh_token)
            else {
                return Err("the authorized_user JSON lacks client_id, client_secret or refresh_token".into());
            };
            UpstreamAuth::GoogleAuthorizedUser(GoogleAuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
            })
        }
        other => {
            let kind = other.unwrap_or("none");
            return Err(format!("credentials of type {kind:?} are not supported: give a service account's key file (\"service_account\") or a user's (\"authorized_user\")"));
        }
    };
    Ok(Found { auth, project: file.project_id })
}

/// `vertex_credentials` is the JSON itself when it starts with `{`, else a file's path.
fn credentials_text(value: &str) -> Result<String, String> {
    match value.trim_start().starts_with('{') {
        true => Ok(value.to_string()),
        false => read_file(value.trim()),
    }
}

fn read_file(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read the credentials file {path:?}: {e}"))
}

/// The project the metadata server says this machine is in, or why there is none.
pub(crate) fn metadata_project(c: &Checker) -> Result<String, String> {
    let host = metadata_host(c);
    let authority = if host.contains(':') { host.clone() } else { format!("{host}:80") };
    let failed = |why: String| format!("the metadata server at {host} gave no project id: {why}");
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| failed(e.to_string()))?
        .next()
        .ok_or_else(|| failed("no address".into()))?;
    let mut stream = TcpStream::connect_timeout(&addr, METADATA_TIMEOUT).map_err(|e| failed(e.to_string()))?;
    let _ = stream.set_read_timeout(Some(METADATA_TIMEOUT));
    let _ = stream.set_write_timeout(Some(METADATA_TIMEOUT));
    let request = format!(
        "GET /computeMetadata/v1/project/project-id HTTP/1.0\r\nhost: {host}\r\nmetadata-flavor: Google\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).map_err(|e| failed(e.to_string()))?;
    let mut answer = Vec::new();
    stream.take(64 << 10).read_to_end(&mut answer).map_err(|e| failed(e.to_string()))?;
    let answer = String::from_utf8_lossy(&answer);
    let (head, body) = answer.split_once("\r\n\r\n").ok_or_else(|| failed("no complete answer".into()))?;
    let status = head.split(' ').nth(1).unwrap_or("");
    match (status, body.trim()) {
        ("200", project) if !project.is_empty() => Ok(project.to_string()),
        (status, _) => Err(failed(format!("HTTP {status}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authorized_user_file_gives_its_refresh_token_and_the_default_token_uri() {
        let found = parse(r#"{"type":"authorized_user","client_id":"c","client_secret":"s","refresh_token":"r","quota_project_id":"q"}"#).unwrap();
        let UpstreamAuth::GoogleAuthorizedUser(user) = found.auth else { panic!("not a user") };
        assert_eq!((user.client_id.as_str(), user.refresh_token.as_str()), ("c", "r"));
        assert_eq!(user.token_uri, GOOGLE_TOKEN_URI);
        assert_eq!(found.project, None);
        let missing = parse(r#"{"type":"authorized_user","client_id":"c"}"#).err().unwrap();
        assert!(missing.contains("lacks client_id, client_secret or refresh_token"), "{missing}");
        let other = parse(r#"{"type":"external_account"}"#).err().unwrap();
        assert!(other.contains("\"external_account\" are not supported"), "{other}");
    }
}

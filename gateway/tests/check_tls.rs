//! `pointwork check` on a config that serves HTTPS: it reads the certificate, the key and the
//! client CA as `serve` would, prints when the certificate expires (warning under 14 days), and
//! fails, naming the setting and the file, on a key that is missing or not the certificate's.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::https::Ca;
use common::{pointwork_bin, TempDir};

const MODELS: &str =
    "model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/gpt-4o-mini, api_key: sk-x}\n";

/// A CA, and in `dir` its certificate (`root-ca.pem`) and server certificates with their keys.
struct Files {
    dir: TempDir,
    ca: Ca,
}

impl Files {
    fn new(label: &str) -> Files {
        let dir = TempDir::new(label);
        Files { ca: Ca::new(&dir, "root"), dir }
    }

    /// `NAME.pem` and `NAME.key`: a certificate for localhost that expires an hour short of
    /// `days` days from now.
    fn server(&self, name: &str, days: u64) -> (PathBuf, PathBuf) {
        let issued = self.ca.server(&self.dir, name, Some(days));
        (issued.cert_pem, issued.key_pem)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `config.yaml` with `pointwork:` `section` after the models.
    fn config(&self, section: &str) -> PathBuf {
        self.dir.write("config.yaml", &format!("{MODELS}{section}"))
    }
}

/// `pointwork check --config PATH` from another folder (the config's paths are relative to its
/// own), with `vars` set and LiteLLM's variables otherwise unset.
fn check(path: &Path, vars: &[(&str, &Path)]) -> (Option<i32>, String, String) {
    let mut command = Command::new(pointwork_bin());
    command.args(["check", "--config"]).arg(path).current_dir(std::env::temp_dir());
    command.env_remove("SSL_CERTFILE_PATH").env_remove("SSL_KEYFILE_PATH");
    for (name, value) in vars {
        command.env(name, value);
    }
    let Output { status, stdout, stderr } = command.output().expect("run pointwork check");
    (status.code(), String::from_utf8_lossy(&stdout).into_owned(), String::from_utf8_lossy(&stderr).into_owned())
}

#[test]
fn a_good_certificate_is_summarised_with_its_expiry_and_client_ca() {
    let files = Files::new("check-tls-good");
    let (cert, key) = files.server("server", 90);
    let path = files.config("pointwork:\n  tls: {cert: server.pem, key: server.key, client_ca: root-ca.pem}\n");
    let (code, stdout, stderr) = check(&path, &[]);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {stderr}");
    let expected = format!(
        "  tls: certificate {} (expires in 89 days), key {}, client certificates required (client_ca {})\n",
        cert.display(),
        key.display(),
        files.path("root-ca.pem").display()
    );
    assert!(stdout.contains(&expected), "{expected:?} missing from:\n{stdout}");
    assert!(stdout.contains("warnings: 0"), "{stdout}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

#[test]
fn litellms_variables_name_the_files_and_a_short_lived_certificate_warns() {
    let files = Files::new("check-tls-env");
    let (cert, key) = files.server("soon", 10);
    let path = files.config("");
    let (code, stdout, stderr) = check(&path, &[("SSL_CERTFILE_PATH", &cert), ("SSL_KEYFILE_PATH", &key)]);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {stderr}");
    let expected = format!(
        "  tls: certificate {} (expires in 9 days; from SSL_CERTFILE_PATH and SSL_KEYFILE_PATH), key {}, \
         no client certificates asked for\n",
        cert.display(),
        key.display()
    );
    assert!(stdout.contains(&expected), "{expected:?} missing from:\n{stdout}");
    let warning = format!("pointwork: warning: the TLS certificate {} expires in 9 days: renew it", cert.display());
    assert!(stderr.contains(&warning), "{warning:?} missing from:\n{stderr}");
    assert!(stdout.contains("warnings: 1"), "{stdout}");
}

#[test]
fn a_missing_key_file_fails_the_check_naming_it() {
    let files = Files::new("check-tls-missing");
    files.server("server", 90);
    let path = files.config("pointwork:\n  tls: {cert: server.pem, key: nope.key}\n");
    let (code, stdout, stderr) = check(&path, &[]);
    assert_eq!(code, Some(1), "stdout: {stdout}\nstderr: {stderr}");
    let expected = format!("pointwork.tls.key: {}: cannot read the file", files.path("nope.key").display());
    assert!(stderr.contains(&expected), "{expected:?} missing from:\n{stderr}");
    assert!(stderr.contains(&format!("{}: invalid config", path.display())), "{stderr}");
    assert!(stdout.is_empty(), "no summary for a config that cannot serve: {stdout}");
}

#[test]
fn a_key_that_is_not_the_certificates_fails_the_check() {
    let files = Files::new("check-tls-mismatch");
    let (cert, _) = files.server("server", 90);
    let (_, other_key) = files.server("other", 90);
    let path = files.config("pointwork:\n  tls: {cert: server.pem, key: other.key}\n");
    let (code, stdout, stderr) = check(&path, &[]);
    assert_eq!(code, Some(1), "stdout: {stdout}\nstderr: {stderr}");
    let expected = format!(
        "pointwork.tls.key: {}: the private key does not match the certificate in {}",
        other_key.display(),
        cert.display()
    );
    assert!(stderr.contains(&expected), "{expected:?} missing from:\n{stderr}");
}

#[test]
fn a_broken_certificate_fails_the_check_naming_it() {
    let files = Files::new("check-tls-broken");
    files.server("server", 90);
    files.dir.write("broken.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n");
    let path = files.config("pointwork:\n  tls: {cert: broken.pem, key: server.key}\n");
    let (code, stdout, stderr) = check(&path, &[]);
    assert_eq!(code, Some(1), "stdout: {stdout}\nstderr: {stderr}");
    let expected = format!("pointwork.tls.cert: {}: not a valid PEM file", files.path("broken.pem").display());
    assert!(stderr.contains(&expected), "{expected:?} missing from:\n{stderr}");
}

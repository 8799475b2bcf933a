//! OpenRouter's telemetry, served from files re-read on every request (so a test changes the
//! telemetry by writing files): `DIR/{author}/{slug}/` holds `endpoints.json` (the body of
//! `GET /api/v1/models/{author}/{slug}/endpoints`), `stats.json` (the body of `GET
//! /api/frontend/v1/stats/endpoint?permaslug={canonical slug}`) and optionally
//! `canonical_slug.txt` (the canonical slug, else the id). A missing file answers 503 (an
//! outage), an unknown model 404.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::openrouter::errors::error_body;

pub(crate) const MODELS_PATH: &str = "/api/v1/models";
pub(crate) const STATS_PATH: &str = "/api/frontend/v1/stats/endpoint";

/// A telemetry answer: status and JSON body, and the path it counts under.
#[derive(Debug, PartialEq)]
pub(crate) struct TelemetryAnswer {
    pub status: u16,
    pub body: Vec<u8>,
    /// The request path, decoded, with `?permaslug=` the only query kept.
    pub counted_as: String,
}

/// One provider endpoint of a model's `stats.json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StatsRow {
    /// `provider_slug`, e.g. `novita/fp8`.
    pub slug: String,
    /// `provider_name`, e.g. `Novita` (the slug when absent).
    pub name: String,
}

/// The telemetry directory, `None` without `--openrouter-telemetry`.
#[derive(Debug, Clone)]
pub(crate) struct TelemetryDir {
    pub root: Option<PathBuf>,
}

impl TelemetryDir {
    /// Answers a GET of `target` (path and query as received).
    pub(crate) fn answer(&self, target: &str) -> TelemetryAnswer {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let path = percent_decode(path, false).unwrap_or_else(|| path.to_owned());
        let permaslug = query_value(query, "permaslug");
        let counted_as = match (&permaslug, path == STATS_PATH) {
            (Some(permaslug), true) => format!("{path}?permaslug={permaslug}"),
            _ => path.clone(),
        };
        let (status, body) = match &self.root {
            None => outage("no telemetry directory (start the mock with --openrouter-telemetry DIR)"),
            Some(root) => answer_from(root, &path, permaslug.as_deref()),
        };
        TelemetryAnswer { status, body, counted_as }
    }

    /// The provider endpoints of `model`'s `stats.json`, in file order; `None` without
    /// telemetry for it (no directory, no file, no `data` list).
    pub(crate) fn stats_rows(&self, model: &str) -> Option<Vec<StatsRow>> {
        let dir = model_dir(self.root.as_deref()?, model)?;
        let stats: Value = serde_json::from_slice(&fs::read(dir.join("stats.json")).ok()?).ok()?;
        let rows = stats.get("data")?.as_array()?;
        Some(
            rows.iter()
                .filter_map(|row| {
                    let slug = row.get("provider_slug")?.as_str()?.to_owned();
                    let name = row.get("provider_name").and_then(Value::as_str).unwrap_or(&slug).to_owned();
                    Some(StatsRow { slug, name })
                })
                .collect(),
        )
    }
}

fn answer_from(root: &Path, path: &str, permaslug: Option<&str>) -> (u16, Vec<u8>) {
    if path == MODELS_PATH {
        return list_models(root);
    }
    if path == STATS_PATH {
        let Some(permaslug) = permaslug else {
            return (400, error_body("permaslug is required", 400));
        };
        let models = match models(root) {
            Ok(models) => models,
            Err(message) => return outage(&message),
        };
        return match models.iter().find(|model| model.canonical_slug == permaslug) {
            Some(model) => read_file(&model.dir.join("stats.json")),
            None => not_found(),
        };
    }
    let model = path.strip_prefix("/api/v1/models/").and_then(|rest| rest.strip_suffix("/endpoints"));
    match model.and_then(|model| model_dir(root, model)) {
        Some(dir) if dir.is_dir() => read_file(&dir.join("endpoints.json")),
        Some(_) if !root.is_dir() => outage(&format!("telemetry directory {} is missing", root.display())),
        _ => not_found(),
    }
}

/// A model directory found under the telemetry root.
#[derive(Debug)]
struct ModelDir {
    id: String,
    canonical_slug: String,
    dir: PathBuf,
}

/// Every `root/{author}/{slug}/` directory, sorted by id.
fn models(root: &Path) -> Result<Vec<ModelDir>, String> {
    let unreadable = |error: std::io::Error| format!("telemetry directory {}: {error}", root.display());
    let mut models = Vec::new();
    for author in subdirectories(root).map_err(unreadable)? {
        for slug in subdirectories(&root.join(&author)).map_err(unreadable)? {
            let id = format!("{author}/{slug}");
            let dir = root.join(&author).join(&slug);
            let canonical_slug = fs::read_to_string(dir.join("canonical_slug.txt"))
                .ok()
                .map(|text| text.trim().to_owned())
                .filter(|text| !text.is_empty())
                .unwrap_or_else(|| id.clone());
            models.push(ModelDir { id, canonical_slug, dir });
        }
    }
    Ok(models)
}

/// Names of the directories in `dir` (not hidden), sorted.
fn subdirectories(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| !name.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

fn list_models(root: &Path) -> (u16, Vec<u8>) {
    let models = match models(root) {
        Ok(models) => models,
        Err(message) => return outage(&message),
    };
    let data: Vec<Value> = models
        .iter()
        .map(|model| {
            let name = fs::read(model.dir.join("endpoints.json"))
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
                .and_then(|endpoints| endpoints["data"]["name"].as_str().map(str::to_owned))
                .unwrap_or_else(|| model.id.clone());
            serde_json::json!({"id": model.id, "canonical_slug": model.canonical_slug, "name": name})
        })
        .collect();
    (200, serde_json::json!({ "data": data }).to_string().into_bytes())
}

/// `root/{author}/{slug}` for a model id `author/slug`, refusing anything that is not two plain
/// path segments.
fn model_dir(root: &Path, model: &str) -> Option<PathBuf> {
    let (author, slug) = model.split_once('/')?;
    let plain = |segment: &str| {
        !segment.is_empty() && segment != "." && segment != ".." && !segment.contains(['/', '\\', '\0'])
    };
    (plain(author) && plain(slug)).then(|| root.join(author).join(slug))
}

fn read_file(file: &Path) -> (u16, Vec<u8>) {
    match fs::read(file) {
        Ok(bytes) => (200, bytes),
        Err(error) => outage(&format!("telemetry file {}: {error}", file.display())),
    }
}

fn outage(message: &str) -> (u16, Vec<u8>) {
    (503, error_body(&format!("mock telemetry unavailable: {message}"), 503))
}

fn not_found() -> (u16, Vec<u8>) {
    (404, error_body("Model not found", 404))
}

/// The first value of `name` in a query string, percent-decoded (`+` as a space).
pub(crate) fn query_value(query: &str, name: &str) -> Option<String> {
    query.split('&').find_map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key == name).then(|| percent_decode(value, true)).flatten()
    })
}

/// `%XX` decoded (and `+` as a space when `plus_is_space`); `None` for a bad escape or bytes
/// that are not UTF-8.
pub(crate) fn percent_decode(text: &str, plus_is_space: bool) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(index + 1..index + 3)?).ok()?;
                decoded.push(u8::from_str_radix(hex, 16).ok()?);
                index += 3;
                continue;
            }
            b'+' if plus_is_space => decoded.push(b' '),
            byte => decoded.push(byte),
        }
        index += 1;
    }
    String::from_utf8(decoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_query_values() {
        assert_eq!(
            query_value("permaslug=z-ai%2Fglm-5.2&variant=standard", "permaslug").as_deref(),
            Some("z-ai/glm-5.2")
        );
        assert_eq!(query_value("a=1&permaslug=x+y", "permaslug").as_deref(), Some("x y"));
        assert_eq!(query_value("variant=standard", "permaslug"), None);
        assert_eq!(percent_decode("%zz", false), None);
        assert_eq!(percent_decode("a%3Ab+c", false).as_deref(), Some("a:b+c"));
    }

    #[test]
    fn model_dirs_are_two_plain_segments() {
        let root = Path::new("/t");
        assert_eq!(model_dir(root, "z-ai/glm-5.2"), Some(PathBuf::from("/t/z-ai/glm-5.2")));
        for bad in ["glm", "../etc", "a/..", "a/b/c", "/b", "a/"] {
            assert_eq!(model_dir(root, bad), None, "{bad}");
        }
    }

    #[test]
    fn without_a_directory_everything_is_an_outage() {
        let telemetry = TelemetryDir { root: None };
        let answer = telemetry.answer("/api/frontend/v1/stats/endpoint?permaslug=z-ai%2Fglm-5.2&variant=standard");
        assert_eq!(answer.status, 503);
        assert_eq!(answer.counted_as, "/api/frontend/v1/stats/endpoint?permaslug=z-ai/glm-5.2");
        assert_eq!(telemetry.stats_rows("z-ai/glm-5.2"), None);
    }
}

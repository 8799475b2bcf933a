//! The HTTP side of the credential fetches: the clients (token endpoints and STS, and the
//! metadata servers, which answer at once or are not there) and one whole HTTP/1.1 exchange on a
//! fresh connection.

use std::time::Duration;

use crate::http::write;
use crate::upstream::fetch::{self, Client};
use crate::upstream::target::Target;

const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// The metadata servers (GCE's, EC2's, a container's) answer at once or are not there: a short
/// timeout keeps a gateway that is not in such a place from waiting on them.
const METADATA_TIMEOUT: Duration = Duration::from_secs(2);
/// The HTTP clients of the fetches: token endpoints and STS, and the metadata servers.
pub struct Clients {
    pub remote: Client,
    pub metadata: Client,
}

impl Default for Clients {
    fn default() -> Clients {
        let client = |timeout| Client { tls: crate::upstream::conn::tls_connector(), timeout, max_body: 1 << 20 };
        Clients { remote: client(FETCH_TIMEOUT), metadata: client(METADATA_TIMEOUT) }
    }
}

/// One request to `url` (`http(s)://authority/path?query`) on a fresh connection: the body of a
/// 2xx answer, or an error naming the URL.
pub async fn exchange(
    client: &Client,
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Result<Vec<u8>, String> {
    let (target, path) = target_and_path(url)?;
    let request = request(method, &target, path, headers, body);
    fetch::send(client, &target, request).await.map_err(|e| format!("{url}: {e}"))
}

/// A URL's target (its scheme and authority) and its path with the query (`/` when empty).
pub fn target_and_path(url: &str) -> Result<(Target, &str), String> {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let path_at = url[after_scheme..].find('/').map_or(url.len(), |i| after_scheme + i);
    let target = Target::parse(&url[..path_at]).map_err(|e| format!("{url}: {e}"))?;
    let path = if path_at == url.len() { "/" } else { &url[path_at..] };
    Ok((target, path))
}

/// A whole HTTP/1.1 request (`connection: close`).
pub fn request(method: &str, target: &Target, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + body.len());
    out.extend_from_slice(method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    write::header(&mut out, "host", target.authority.as_bytes());
    for (name, value) in headers {
        write::header(&mut out, name, value.as_bytes());
    }
    if !body.is_empty() || method != "GET" {
        write::header_decimal(&mut out, "content-length", body.len() as u64);
    }
    write::header(&mut out, "connection", b"close");
    write::end_head(&mut out);
    out.extend_from_slice(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_splits_into_its_target_and_path() {
        let (target, path) = target_and_path("http://127.0.0.1:9/v2/credentials?id=1").unwrap();
        assert_eq!((target.authority.as_str(), path), ("127.0.0.1:9", "/v2/credentials?id=1"));
        let (target, path) = target_and_path("http://127.0.0.1:9").unwrap();
        assert_eq!((target.authority.as_str(), target.path_prefix.as_str(), path), ("127.0.0.1:9", "", "/"));
    }
}

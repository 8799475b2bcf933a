//! `litellm_params.api_base`: an `http://` or `https://` URL with a host, kept without its
//! trailing slash so request paths can be appended.

/// The URL without trailing slashes, or why it is not one Pointwork can forward to.
pub(crate) fn parse_api_base(url: &str) -> Result<String, String> {
    let refused = || format!("expected an http:// or https:// URL with a host, got {url:?}");
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    let rest = if lower.starts_with("http://") {
        &url["http://".len()..]
    } else if lower.starts_with("https://") {
        &url["https://".len()..]
    } else {
        return Err(refused());
    };
    // Whitespace, or the angle brackets of a documentation placeholder (`https://<your-resource>…`).
    if url.chars().any(|c| c.is_whitespace() || c == '<' || c == '>') {
        return Err(refused());
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = match host_port.strip_prefix('[') {
        // An IPv6 literal: `[::1]:8000`.
        Some(v6) => match v6.split_once(']') {
            Some((host, after)) => (host, after.strip_prefix(':')),
            None => return Err(refused()),
        },
        None => match host_port.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        },
    };
    let host_chars = |h: &str| h.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b':'));
    if host.is_empty() || !host_chars(host) || port.is_some_and(|p| p.parse::<u16>().is_err()) {
        return Err(refused());
    }
    Ok(url.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_http_urls_and_trims_the_trailing_slash() {
        assert_eq!(parse_api_base("https://api.openai.com/v1/").as_deref(), Ok("https://api.openai.com/v1"));
        assert_eq!(parse_api_base("http://127.0.0.1:8000/v1").as_deref(), Ok("http://127.0.0.1:8000/v1"));
        assert_eq!(parse_api_base("http://[::1]:8000").as_deref(), Ok("http://[::1]:8000"));
        assert_eq!(parse_api_base("HTTP://vllm:80").as_deref(), Ok("HTTP://vllm:80"));
    }

    #[test]
    fn refuses_other_schemes_and_missing_hosts() {
        for bad in [
            "api.openai.com/v1",
            "ftp://x",
            "http://",
            "http:///v1",
            "http://host:port/v1",
            "http://host:99999",
            "http://a b",
            "https://<your-resource>.openai.azure.com",
            "https://your-resource.openai.azure.com/<deployment>",
            "http://host$name/v1",
        ] {
            assert!(parse_api_base(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse_api_base("localhost:8000").unwrap_err(),
            r#"expected an http:// or https:// URL with a host, got "localhost:8000""#
        );
    }
}

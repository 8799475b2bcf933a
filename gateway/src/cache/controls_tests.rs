use super::*;

const HEAD: &[u8] = b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n\r\n";

fn body(text: &str) -> Map<String, Value> {
    serde_json::from_str(text).unwrap()
}

fn head(headers: &str) -> Vec<u8> {
    format!("POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\n{headers}\r\n").into_bytes()
}

fn of_body(text: &str) -> Result<Controls, Refused> {
    read(&body(text), HEAD, None)
}

fn secs(s: u64) -> Option<Duration> {
    Some(Duration::from_secs(s))
}

#[test]
fn no_cache_object_means_no_controls() {
    assert_eq!(of_body(r#"{"model":"m"}"#), Ok(Controls::default()));
    assert_eq!(of_body(r#"{"cache":null}"#), Ok(Controls::default()));
    assert_eq!(of_body(r#"{"cache":{}}"#), Ok(Controls::default()));
}

#[test]
fn the_body_cache_object_is_read() {
    let c = of_body(
        r#"{"cache":{"no-cache":true,"no-store":true,"ttl":90,"s-maxage":30,"namespace":"team-a","use-cache":true}}"#,
    )
    .unwrap();
    let expected = Controls {
        no_cache: true,
        no_store: true,
        ttl: secs(90),
        max_age: secs(30),
        namespace: Some("team-a".into()),
        use_cache: true,
    };
    assert_eq!(c, expected);
    assert_eq!(of_body(r#"{"cache":{"ttl":0.5}}"#).unwrap().ttl, Some(Duration::from_millis(500)));
    assert_eq!(of_body(r#"{"cache":{"s-max-age":0}}"#).unwrap().max_age, secs(0));
    assert_eq!(of_body(r#"{"cache":{"s-max-age":5,"s-maxage":7}}"#).unwrap().max_age, secs(5), "s-max-age first");
    assert_eq!(of_body(r#"{"cache":{"no-cache":false,"ttl":null}}"#), Ok(Controls::default()));
}

#[test]
fn unknown_members_of_cache_are_ignored() {
    assert_eq!(of_body(r#"{"cache":{"frobnicate":1}}"#), Ok(Controls::default()));
}

#[test]
fn top_level_caching_false_skips_the_lookup() {
    assert!(of_body(r#"{"caching":false}"#).unwrap().no_cache);
    assert!(of_body(r#"{"caching":false,"cache":{"no-cache":false}}"#).unwrap().no_cache);
    assert!(!of_body(r#"{"caching":true}"#).unwrap().no_cache);
}

#[test]
fn wrong_values_are_refused_with_400_naming_the_control() {
    let cases = [
        (r#"{"cache":"no-cache"}"#, "cache: expected an object of cache controls"),
        (r#"{"cache":[]}"#, "cache: expected an object of cache controls"),
        (r#"{"cache":{"no-cache":"true"}}"#, "cache.no-cache: expected true or false"),
        (r#"{"cache":{"no-store":1}}"#, "cache.no-store: expected true or false"),
        (r#"{"cache":{"use-cache":"yes"}}"#, "cache.use-cache: expected true or false"),
        (r#"{"cache":{"ttl":0}}"#, "cache.ttl: expected a number of seconds greater than 0"),
        (r#"{"cache":{"ttl":-5}}"#, "cache.ttl: expected a number of seconds greater than 0"),
        (r#"{"cache":{"ttl":"60"}}"#, "cache.ttl: expected a number of seconds greater than 0"),
        (r#"{"cache":{"s-maxage":-1}}"#, "cache.s-maxage: expected a number of seconds, 0 or more"),
        (r#"{"cache":{"s-max-age":"1"}}"#, "cache.s-max-age: expected a number of seconds, 0 or more"),
        (r#"{"cache":{"ttl":1e300}}"#, "cache.ttl: expected a number of seconds greater than 0"),
    ];
    for (text, message) in cases {
        assert_eq!(of_body(text), Err(Refused { status: 400, message: message.into() }), "{text}");
    }
    let ns = "cache.namespace: expected a non-empty string of at most 128 bytes without control characters";
    for bad in [r#""""#, "7", r#""a\nb""#, &format!("\"{}\"", "n".repeat(129))] {
        let text = format!(r#"{{"cache":{{"namespace":{bad}}}}}"#);
        assert_eq!(of_body(&text), Err(Refused { status: 400, message: ns.into() }), "{text}");
    }
    let longest = "n".repeat(128);
    assert_eq!(of_body(&format!(r#"{{"cache":{{"namespace":"{longest}"}}}}"#)).unwrap().namespace, Some(longest));
}

#[test]
fn cache_control_headers_are_read() {
    let c = read(&Map::new(), &head("Cache-Control: no-cache,no-store , max-age=10, s-maxage=\"60\"\r\n"), None);
    let expected = Controls { no_cache: true, no_store: true, ttl: secs(60), max_age: secs(10), ..Controls::default() };
    assert_eq!(c, Ok(expected));
    // Any case, split over several lines, unknown directives ignored.
    let c = read(&Map::new(), &head("cache-control: NO-STORE\r\nCACHE-CONTROL: private, max-age=0\r\n"), None);
    assert_eq!(c, Ok(Controls { no_store: true, max_age: secs(0), ..Controls::default() }));
    let c = read(&Map::new(), &head("X-Pointwork-Cache-Namespace:  team-b \r\n"), None);
    assert_eq!(c.unwrap().namespace.as_deref(), Some("team-b"));
    // Another header carrying the words is not Cache-Control.
    assert_eq!(read(&Map::new(), &head("x-cache-control: no-cache\r\n"), None), Ok(Controls::default()));
}

#[test]
fn bad_header_values_are_refused_with_400() {
    let refused = |h: &str| read(&Map::new(), &head(h), None).unwrap_err();
    assert_eq!(
        refused("Cache-Control: max-age=soon\r\n"),
        Refused { status: 400, message: "Cache-Control: max-age: expected whole seconds, 0 or more".into() }
    );
    assert_eq!(
        refused("Cache-Control: s-maxage=0\r\n").message,
        "Cache-Control: s-maxage: expected whole seconds greater than 0"
    );
    assert_eq!(refused("Cache-Control: max-age\r\n").status, 400);
    assert_eq!(refused("x-pointwork-cache-namespace: \r\n").message.split(':').next(), Some(HEADER_NAMESPACE));
}

#[test]
fn the_body_wins_over_the_headers() {
    let h = head("Cache-Control: no-cache, s-maxage=60, max-age=5\r\nx-pointwork-cache-namespace: from-header\r\n");
    let b = body(r#"{"cache":{"no-cache":false,"ttl":10,"s-maxage":20,"namespace":"from-body"}}"#);
    let c = read(&b, &h, None).unwrap();
    assert_eq!(
        c,
        Controls { ttl: secs(10), max_age: secs(20), namespace: Some("from-body".into()), ..Controls::default() }
    );
    // A control only the header sets stays.
    let c = read(&body(r#"{"cache":{"ttl":10}}"#), &h, None).unwrap();
    assert!(c.no_cache);
    assert_eq!((c.max_age, c.namespace.as_deref()), (secs(5), Some("from-header")));
}

#[test]
fn a_key_may_set_only_its_allowed_controls() {
    let allowed: Vec<String> = vec!["no-cache".into(), "ttl".into()];
    let refused = |b: &str, h: &str| read(&body(b), &head(h), Some(&allowed));
    let message = |k: &str| format!("Not allowed to set {k} as a cache control. Contact admin to change permissions.");
    assert_eq!(refused(r#"{"cache":{"no-cache":true,"ttl":5}}"#, "").unwrap().ttl, secs(5));
    assert_eq!(
        refused(r#"{"cache":{"no-store":true}}"#, ""),
        Err(Refused { status: 403, message: message("no-store") })
    );
    // Unknown members too, and before any value is looked at.
    assert_eq!(refused(r#"{"cache":{"whatever":"x"}}"#, "").unwrap_err().message, message("whatever"));
    assert_eq!(refused(r#"{"cache":{"namespace":7}}"#, "").unwrap_err().status, 403);
    // Headers, named as the body names the control they set.
    assert_eq!(refused("{}", "Cache-Control: no-cache, s-maxage=9\r\n").unwrap().ttl, secs(9));
    assert_eq!(refused("{}", "Cache-Control: no-store\r\n").unwrap_err().message, message("no-store"));
    assert_eq!(refused("{}", "Cache-Control: max-age=3\r\n").unwrap_err().message, message("s-maxage"));
    assert_eq!(refused("{}", "x-pointwork-cache-namespace: a\r\n").unwrap_err().message, message("namespace"));
    // Directives that set nothing are not controls.
    assert!(refused("{}", "Cache-Control: private\r\n").is_ok());
    let spelled: Vec<String> = vec!["s-max-age".into()];
    assert_eq!(read(&Map::new(), &head("Cache-Control: max-age=3\r\n"), Some(&spelled)).unwrap().max_age, secs(3));
}

#[test]
fn none_or_an_empty_list_allows_anything() {
    let b = body(r#"{"cache":{"no-store":true,"namespace":"x","other":1}}"#);
    let h = head("Cache-Control: no-cache\r\n");
    assert!(read(&b, &h, None).is_ok());
    assert!(read(&b, &h, Some(&[])).is_ok());
}

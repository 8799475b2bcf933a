//! AWS's own SigV4 test suite (the `aws-signing-test-suite` cases the `aws-sigv4` crate ships):
//! the exact `Authorization` header for each request.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::*;

const ACCESS_KEY_ID: &str = "AKIDEXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
/// 2015-08-30T12:36:00Z, the suite's timestamp.
fn suite_time() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_440_938_160)
}

fn signer(session_token: Option<&str>) -> Signer {
    Signer::new(&AwsCredentials {
        access_key_id: ACCESS_KEY_ID.into(),
        secret_access_key: SECRET.into(),
        session_token: session_token.map(str::to_string),
        region: "us-east-1".into(),
        service: "service".into(),
    })
}

fn signed(signer: &Signer, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<(String, String)> {
    signer.headers(&Signable { method, path, headers, body }, suite_time()).unwrap()
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map_or("", |(_, v)| v.as_str())
}

#[test]
fn post_vanilla() {
    let headers = signed(&signer(None), "POST", "/", &[("host", "example.amazonaws.com")], b"");
    assert_eq!(header(&headers, "x-amz-date"), "20150830T123600Z");
    assert_eq!(
        header(&headers, "authorization"),
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"
    );
}

#[test]
fn post_vanilla_query() {
    let headers = signed(&signer(None), "POST", "/?Param1=value1", &[("host", "example.amazonaws.com")], b"");
    assert_eq!(
        header(&headers, "authorization"),
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"
    );
}

#[test]
fn get_vanilla_with_session_token() {
    let token = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267";
    let headers = signed(&signer(Some(token)), "GET", "/", &[("host", "example.amazonaws.com")], b"");
    assert_eq!(header(&headers, "x-amz-security-token"), token);
    assert_eq!(
        header(&headers, "authorization"),
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature=07ec1639c89043aa0e3e2de82b96708f198cceab042d4a97044c66dd9f74e7f8"
    );
}

#[test]
fn the_body_and_every_signed_header_change_the_signature() {
    let s = signer(None);
    let host = ("host", "bedrock-runtime.us-east-1.amazonaws.com");
    let json = ("content-type", "application/json");
    let path = "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse";
    let base = signed(&s, "POST", path, &[host, json], br#"{"messages":[]}"#);
    assert!(header(&base, "authorization").contains("SignedHeaders=content-type;host;x-amz-date,"));
    for other in [
        signed(&s, "POST", path, &[host, json], br#"{"messages":[{}]}"#),
        signed(&s, "POST", path, &[host, ("content-type", "text/plain")], br#"{"messages":[]}"#),
        signed(&s, "POST", "/model/other/converse", &[host, json], br#"{"messages":[]}"#),
    ] {
        assert_ne!(header(&other, "authorization"), header(&base, "authorization"));
    }
}

#[test]
fn the_direct_signer_gives_the_crates_headers_exactly() {
    let bodies: [&[u8]; 3] = [b"", br#"{"messages":[{"role":"user","content":[{"text":"h\u00e9"}]}]}"#, &[0xff; 3000]];
    let paths = [
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A0%3Aapplication-inference-profile%2Fa0/converse-stream",
        "/model/amazon.titan-embed-text-v2%3A0/invoke",
        "/",
    ];
    let times =
        [suite_time(), UNIX_EPOCH + Duration::from_secs(1_798_761_599), UNIX_EPOCH + Duration::from_secs(951_782_400)];
    for token in [None, Some("FwoGZXIvYXdzEXAMPLE//token+with/slashes==")] {
        let s = signer(token);
        for path in paths {
            for body in bodies {
                for time in times {
                    let headers =
                        [("host", "bedrock-runtime.us-east-1.amazonaws.com"), ("content-type", "application/json")];
                    let request = Signable { method: "POST", path, headers: &headers, body };
                    assert_eq!(s.direct(&request, time), s.general(&request, time).unwrap(), "{path} {time:?}");
                }
            }
        }
    }
}

#[test]
fn dates_are_utc_civil_dates() {
    assert_eq!(amz_date(suite_time()), "20150830T123600Z");
    assert_eq!(amz_date(UNIX_EPOCH + Duration::from_secs(951_782_400)), "20000229T000000Z");
    assert_eq!(amz_date(UNIX_EPOCH + Duration::from_secs(1_798_761_599)), "20261231T235959Z");
    assert_eq!(amz_date(UNIX_EPOCH), "19700101T000000Z");
}

#[test]
fn a_query_or_a_dot_segment_takes_the_general_signer() {
    assert!(is_plain_path("/model/m%3A0/converse"));
    assert!(!is_plain_path("/?Param1=value1"));
    assert!(!is_plain_path("/a/../b"));
}

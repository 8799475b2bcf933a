//! Bearer tokens obtained from token endpoints and refreshed before they expire, off the hot
//! path: one thread (`credential-refresher`) fetches for every distinct credential in use and
//! publishes each token in its [`TokenCell`]; a request reads the cell with one atomic load.
//!
//! A token is refreshed when three quarters of its usable life have passed; a failed fetch is
//! retried after 1 s, 2 s, 4 s, … up to a minute, the last token serving until it expires. A
//! new credential is fetched at once, and registering it waits (up to
//! [`FIRST_TOKEN_WAIT`]) for that first answer, so that a starting gateway or a reload does not
//! serve before its tokens exist. Cells are held weakly: a credential no deployment uses any
//! more (after a reload) stops being refreshed.

use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwapOption;
use crossbeam_channel::{Receiver, Sender};
use pointwork_core::upstream_auth::{EntraClient, GoogleServiceAccount};
use pointwork_core::UpstreamAuth;
use serde::Deserialize;

use super::google_jwt::{form_encode, token_request_body, ServiceAccountKey};
use crate::http::write;
use crate::upstream::fetch::{self, Client};
use crate::upstream::target::Target;

/// How long registering a new credential waits for its first token.
pub const FIRST_TOKEN_WAIT: Duration = Duration::from_secs(10);
/// A token is not sent in its last 30 seconds (clock skew, the request's own time), or its last
/// tenth when it lives less than five minutes.
const EXPIRY_MARGIN: Duration = Duration::from_secs(30);
const MAX_RETRY: Duration = Duration::from_secs(60);
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// One credential's current token, and why there is none when there is none.
pub struct TokenCell {
    token: ArcSwapOption<Token>,
    last_error: ArcSwapOption<String>,
    /// Counts finished fetches, so that registration can wait for the first.
    fetches: Mutex<u64>,
    fetched: Condvar,
}

struct Token {
    /// `Bearer …`
    value: String,
    /// When it stops being sent: its expiry less the margin.
    usable_until: Instant,
}

impl Token {
    fn new(value: String, fetched: Instant, lifetime: Duration) -> Token {
        let margin = EXPIRY_MARGIN.min(lifetime / 10);
        Token { value, usable_until: fetched + lifetime - margin }
    }
}

impl TokenCell {
    fn new() -> TokenCell {
        TokenCell {
            token: ArcSwapOption::empty(),
            last_error: ArcSwapOption::empty(),
            fetches: Mutex::new(0),
            fetched: Condvar::new(),
        }
    }

    /// The `authorization` value to send now, or why there is none.
    pub fn header(&self) -> Result<String, String> {
        match self.token.load().as_deref() {
            Some(token) if Instant::now() < token.usable_until => Ok(token.value.clone()),
            current => {
                let why = self.last_error.load().as_deref().cloned();
                Err(match (current, why) {
                    (_, Some(why)) => format!("the token endpoint failed: {why}"),
                    (Some(_), None) => "the access token expired".to_string(),
                    (None, None) => "no access token yet".to_string(),
                })
            }
        }
    }

    fn finished(&self, result: Result<Token, String>) {
        match result {
            Ok(token) => {
                self.token.store(Some(Arc::new(token)));
                self.last_error.store(None);
            }
            Err(why) => self.last_error.store(Some(Arc::new(why))),
        }
        *self.fetches.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.fetched.notify_all();
    }

    fn wait_first(&self, timeout: Duration) {
        let count = self.fetches.lock().unwrap_or_else(|e| e.into_inner());
        let _ = self.fetched.wait_timeout_while(count, timeout, |n| *n == 0);
    }
}

/// How a credential's token is fetched.
enum Source {
    Entra(EntraClient),
    Google(GoogleServiceAccount, Box<ServiceAccountKey>),
}

impl Source {
    fn new(auth: &UpstreamAuth) -> Result<Source, String> {
        match auth {
            UpstreamAuth::EntraClientCredentials(e) => Ok(Source::Entra(e.clone())),
            UpstreamAuth::GoogleServiceAccount(g) => {
                Ok(Source::Google(g.clone(), Box::new(ServiceAccountKey::parse(g)?)))
            }
            UpstreamAuth::AwsSigV4(_) => Err("SigV4 signs each request: it has no token".into()),
        }
    }

    /// The token endpoint's URL and the form body to post there.
    fn request(&self) -> Result<(String, String), String> {
        match self {
            Source::Entra(e) => Ok((
                format!("{}/{}/oauth2/v2.0/token", e.authority_host, e.tenant_id),
                format!(
                    "grant_type=client_credentials&client_id={}&client_secret={}&scope={}",
                    form_encode(&e.client_id),
                    form_encode(&e.client_secret),
                    form_encode(&e.scope)
                ),
            )),
            Source::Google(account, key) => {
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
                Ok((account.token_uri.clone(), token_request_body(&key.assertion(account, now)?)))
            }
        }
    }
}

struct Entry {
    auth: UpstreamAuth,
    cell: Weak<TokenCell>,
    source: Arc<Source>,
    /// When to fetch next, and the retry delay after a failure.
    due: Instant,
    retry: Duration,
}

/// Every credential in use, and the way to wake the refresher.
pub struct Registry {
    entries: Mutex<Vec<Entry>>,
    wake: Sender<()>,
}

/// The process's one registry; its thread starts with it.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let (wake, woken) = crossbeam_channel::unbounded();
        if let Err(e) = std::thread::Builder::new().name("credential-refresher".into()).spawn(move || refresh(&woken)) {
            eprintln!("pointwork: credentials: cannot spawn the token refresher: {e}");
        }
        Registry { entries: Mutex::new(Vec::new()), wake }
    })
}

impl Registry {
    /// The cell of `auth`'s token: the one in use when the same credential is already
    /// registered, else a new one, fetched at once (waiting up to [`FIRST_TOKEN_WAIT`]).
    pub fn cell(&self, auth: &UpstreamAuth) -> Result<Arc<TokenCell>, String> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(cell) = entries.iter().filter(|e| &e.auth == auth).find_map(|e| e.cell.upgrade()) {
            return Ok(cell);
        }
        let source = Arc::new(Source::new(auth)?);
        let cell = Arc::new(TokenCell::new());
        entries.retain(|e| e.cell.strong_count() > 0);
        let entry = Entry {
            auth: auth.clone(),
            cell: Arc::downgrade(&cell),
            source,
            due: Instant::now(),
            retry: Duration::ZERO,
        };
        entries.push(entry);
        drop(entries);
        let _ = self.wake.send(());
        cell.wait_first(FIRST_TOKEN_WAIT);
        Ok(cell)
    }
}

/// A cell for `auth` that is never filled: the credential checked (a service account's key
/// parsed), no token endpoint called.
pub fn checked_cell(auth: &UpstreamAuth) -> Result<Arc<TokenCell>, String> {
    Source::new(auth)?;
    Ok(Arc::new(TokenCell::new()))
}

/// The refresher's thread: fetch what is due, sleep until the next is due or a credential is added.
fn refresh(woken: &Receiver<()>) {
    let rt = match monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build() {
        Ok(rt) => rt,
        Err(e) => return eprintln!("pointwork: credentials: token refresher off: cannot start its runtime: {e}"),
    };
    let mut rt = rt;
    let client = Client { tls: crate::upstream::conn::tls_connector(), timeout: FETCH_TIMEOUT, max_body: 1 << 20 };
    loop {
        let due: Vec<(usize, Arc<Source>, Arc<TokenCell>)> = {
            let entries = registry().entries.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let live = entries.iter().enumerate().filter(|(_, e)| e.due <= now);
            live.filter_map(|(i, e)| e.cell.upgrade().map(|c| (i, e.source.clone(), c))).collect()
        };
        for (i, source, cell) in due {
            let result = rt.block_on(fetch_token(&client, &source));
            let next = schedule(&result);
            if let Err(why) = &result {
                eprintln!("pointwork: credentials: {why}");
            }
            cell.finished(result);
            let mut entries = registry().entries.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(entry) = entries.get_mut(i).filter(|e| Arc::ptr_eq(&e.source, &source)) {
                (entry.due, entry.retry) = match next {
                    Ok(after) => (Instant::now() + after, Duration::ZERO),
                    Err(()) => {
                        let retry = (entry.retry * 2).clamp(Duration::from_secs(1), MAX_RETRY);
                        (Instant::now() + retry, retry)
                    }
                };
            }
        }
        let next_due = {
            let mut entries = registry().entries.lock().unwrap_or_else(|e| e.into_inner());
            entries.retain(|e| e.cell.strong_count() > 0);
            entries.iter().map(|e| e.due).min()
        };
        let wait = next_due.map_or(Duration::from_secs(3600), |due| due.saturating_duration_since(Instant::now()));
        if woken.recv_timeout(wait).is_err_and(|e| e.is_disconnected()) {
            return;
        }
    }
}

/// When a fetched token is refreshed: after three quarters of its life.
fn schedule(result: &Result<Token, String>) -> Result<Duration, ()> {
    match result {
        Ok(token) => Ok(token.usable_until.saturating_duration_since(Instant::now()) * 3 / 4),
        Err(_) => Err(()),
    }
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    expires_in: Option<serde_json::Value>,
}

async fn fetch_token(client: &Client, source: &Source) -> Result<Token, String> {
    let (url, form) = source.request()?;
    let target = Target::parse(&url).map_err(|e| format!("token endpoint {url}: {e}"))?;
    let mut request = Vec::with_capacity(256 + form.len());
    request.extend_from_slice(b"POST ");
    request.extend_from_slice(if target.path_prefix.is_empty() { b"/" } else { target.path_prefix.as_bytes() });
    request.extend_from_slice(b" HTTP/1.1\r\n");
    write::header(&mut request, "host", target.authority.as_bytes());
    write::header(&mut request, "content-type", b"application/x-www-form-urlencoded");
    write::header(&mut request, "accept", b"application/json");
    write::header_decimal(&mut request, "content-length", form.len() as u64);
    write::header(&mut request, "connection", b"close");
    write::end_head(&mut request);
    request.extend_from_slice(form.as_bytes());
    let started = Instant::now();
    let body = fetch::send(client, &target, request).await.map_err(|e| format!("token endpoint {url}: {e}"))?;
    let answer: TokenAnswer =
        serde_json::from_slice(&body).map_err(|e| format!("token endpoint {url}: not a token answer: {e}"))?;
    let lifetime = match answer.expires_in {
        Some(serde_json::Value::Number(n)) => n.as_u64(),
        Some(serde_json::Value::String(s)) => s.parse().ok(),
        _ => None,
    };
    let lifetime = Duration::from_secs(lifetime.unwrap_or(3600));
    Ok(Token::new(format!("Bearer {}", answer.access_token), started, lifetime))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_says_why_it_has_no_token() {
        let cell = TokenCell::new();
        assert_eq!(cell.header().unwrap_err(), "no access token yet");
        cell.finished(Err("token endpoint https://t/token: HTTP 401".into()));
        assert_eq!(cell.header().unwrap_err(), "the token endpoint failed: token endpoint https://t/token: HTTP 401");
        cell.finished(Ok(Token::new("Bearer t1".into(), Instant::now(), Duration::from_secs(3600))));
        assert_eq!(cell.header().unwrap(), "Bearer t1");
        // Within the margin of its expiry a token is not sent.
        let fetched_long_ago = Instant::now() - Duration::from_secs(3590);
        cell.finished(Ok(Token::new("Bearer t2".into(), fetched_long_ago, Duration::from_secs(3600))));
        assert_eq!(cell.header().unwrap_err(), "the access token expired");
    }

    #[test]
    fn a_token_is_refreshed_after_three_quarters_of_its_life() {
        let token = Token::new(String::new(), Instant::now(), Duration::from_secs(430));
        let after = schedule(&Ok(token)).unwrap();
        assert!(after <= Duration::from_secs(300) && after > Duration::from_secs(295), "{after:?}");
        // A short-lived token keeps a tenth of its life as the margin, not 30 s.
        let short = Token::new(String::new(), Instant::now(), Duration::from_secs(2));
        assert!(short.usable_until > Instant::now() + Duration::from_millis(1700));
        assert!(schedule(&Err("x".into())).is_err());
    }

    #[test]
    fn the_entra_request_is_the_client_credentials_grant() {
        let source = Source::Entra(EntraClient {
            authority_host: "https://login.microsoftonline.com".into(),
            tenant_id: "tenant-1".into(),
            client_id: "app id".into(),
            client_secret: "s&cret".into(),
            scope: "https://cognitiveservices.azure.com/.default".into(),
        });
        let (url, form) = source.request().unwrap();
        assert_eq!(url, "https://login.microsoftonline.com/tenant-1/oauth2/v2.0/token");
        assert_eq!(
            form,
            "grant_type=client_credentials&client_id=app+id&client_secret=s%26cret&scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default"
        );
    }
}

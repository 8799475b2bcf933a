//! Credentials obtained from endpoints and refreshed before they expire, off the hot path:
//! bearer tokens (token endpoints, the GCE metadata server) and temporary AWS keys (STS, the
//! container and instance metadata endpoints; [`super::sources`] fetches each kind). One thread
//! (`credential-refresher`) fetches for every distinct credential in use and publishes what it
//! got in its [`TokenCell`]; a request reads the cell with one atomic load.
//!
//! A token is refreshed when three quarters of its usable life have passed; a failed fetch is
//! retried after 1 s, 2 s, 4 s, … up to a minute, the last token serving until it expires. A
//! new credential is fetched at once, and registering it waits (up to
//! [`FIRST_TOKEN_WAIT`]) for that first answer, so that a starting gateway or a reload does not
//! serve before its tokens exist. Cells are held weakly: a credential no deployment uses any
//! more (after a reload) stops being refreshed.

use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;
use crossbeam_channel::{Receiver, Sender};
use pointwork_core::UpstreamAuth;

use super::http::Clients;
use super::sources::Source;
use super::token::{Obtained, Token};

/// How long registering a new credential waits for its first token.
pub const FIRST_TOKEN_WAIT: Duration = Duration::from_secs(10);
const MAX_RETRY: Duration = Duration::from_secs(60);

/// One credential's current token, and why there is none when there is none.
pub struct TokenCell {
    token: ArcSwapOption<Token>,
    last_error: ArcSwapOption<String>,
    /// Counts finished fetches, so that registration can wait for the first.
    fetches: Mutex<u64>,
    fetched: Condvar,
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

    /// `use_it` applied to what a request is authorized with now (read with one atomic load,
    /// nothing cloned), or why there is none.
    pub fn with_current<R>(&self, use_it: impl FnOnce(&Obtained) -> R) -> Result<R, String> {
        let current = self.token.load();
        match current.as_deref() {
            Some(token) if Instant::now() < token.usable_until => Ok(use_it(&token.value)),
            current => {
                let why = self.last_error.load().as_deref().cloned();
                Err(match (current, why) {
                    (_, Some(why)) => format!("fetching it failed: {why}"),
                    (Some(_), None) => "the obtained credential expired".to_string(),
                    (None, None) => "none obtained yet".to_string(),
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
    let clients = Clients::default();
    loop {
        let due: Vec<(usize, Arc<Source>, Arc<TokenCell>)> = {
            let entries = registry().entries.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            let live = entries.iter().enumerate().filter(|(_, e)| e.due <= now);
            live.filter_map(|(i, e)| e.cell.upgrade().map(|c| (i, e.source.clone(), c))).collect()
        };
        for (i, source, cell) in due {
            let result = rt.block_on(source.fetch(&clients));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn bearer(value: &str) -> Obtained {
        Obtained::Bearer(value.into())
    }

    fn current_bearer(cell: &TokenCell) -> Result<String, String> {
        cell.with_current(|value| match value {
            Obtained::Bearer(value) => value.clone(),
            Obtained::SigV4(_) => panic!("not a bearer token"),
        })
    }

    #[test]
    fn a_cell_says_why_it_has_no_token() {
        let cell = TokenCell::new();
        assert_eq!(current_bearer(&cell).unwrap_err(), "none obtained yet");
        cell.finished(Err("token endpoint https://t/token: HTTP 401".into()));
        assert_eq!(current_bearer(&cell).unwrap_err(), "fetching it failed: token endpoint https://t/token: HTTP 401");
        cell.finished(Ok(Token::new(bearer("Bearer t1"), Instant::now(), Duration::from_secs(3600))));
        assert_eq!(current_bearer(&cell).unwrap(), "Bearer t1");
        // Within the margin of its expiry a token is not sent.
        let fetched_long_ago = Instant::now() - Duration::from_secs(3590);
        cell.finished(Ok(Token::new(bearer("Bearer t2"), fetched_long_ago, Duration::from_secs(3600))));
        assert_eq!(current_bearer(&cell).unwrap_err(), "the obtained credential expired");
    }

    #[test]
    fn a_token_is_refreshed_after_three_quarters_of_its_life() {
        let token = Token::new(bearer(""), Instant::now(), Duration::from_secs(430));
        let after = schedule(&Ok(token)).unwrap();
        assert!(after <= Duration::from_secs(300) && after > Duration::from_secs(295), "{after:?}");
        // A short-lived token keeps a tenth of its life as the margin, not 30 s.
        let short = Token::new(bearer(""), Instant::now(), Duration::from_secs(2));
        assert!(short.usable_until > Instant::now() + Duration::from_millis(1700));
        assert!(schedule(&Err("x".into())).is_err());
    }
}

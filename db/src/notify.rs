//! Changes made on any instance reach every other within a second, through PostgreSQL's
//! LISTEN/NOTIFY on the database they share: every instance that shares keys shares the
//! database, while Redis is optional, and a notification is delivered when the change commits
//! — never before the row is there to read. Payloads: `key:<token>`, `team:<team_id>`,
//! `user:<user_id>`, `models`, and `mark:<instance>-<n>`, which an instance sends itself to learn
//! that its listener has seen every change it made before (see [`Marks`]).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures_channel::oneshot;
use futures_util::future::poll_fn;
use tokio_postgres::{AsyncMessage, Client};

use crate::connect::{connect, TlsConnection};

pub(crate) const CHANNEL: &str = "pointwork_changes";

/// What a notification says changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Key(String),
    Team(String),
    User(String),
    Models,
    /// One instance's mark, meaningless to every other.
    Mark(String),
}

impl Change {
    pub(crate) fn parse(payload: &str) -> Option<Change> {
        match payload.split_once(':') {
            Some(("key", token)) => Some(Change::Key(token.to_string())),
            Some(("team", id)) => Some(Change::Team(id.to_string())),
            Some(("user", id)) => Some(Change::User(id.to_string())),
            Some(("mark", mark)) => Some(Change::Mark(mark.to_string())),
            _ if payload == "models" => Some(Change::Models),
            _ => None,
        }
    }

    pub(crate) fn payload(&self) -> String {
        match self {
            Change::Key(token) => format!("key:{token}"),
            Change::Team(id) => format!("team:{id}"),
            Change::User(id) => format!("user:{id}"),
            Change::Models => "models".to_string(),
            Change::Mark(mark) => format!("mark:{mark}"),
        }
    }
}

/// Listens until the connection ends, handing each change to `on_change`. Returns once
/// listening stopped (the caller reconnects). `on_listening` runs once LISTEN took effect:
/// whatever changed before may have been missed, so the caller forgets what it cached.
pub(crate) async fn listen(
    config: &tokio_postgres::Config,
    on_listening: &mut dyn FnMut(),
    on_change: &mut dyn FnMut(Change),
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection): (_, TlsConnection) = connect(config).await?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let driver = tokio::task::spawn_local(async move {
        loop {
            match poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(n))) => {
                    let _ = tx.send(n.payload().to_string());
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(e),
                None => return Ok(()),
            }
        }
    });
    client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
    on_listening();
    while let Some(payload) = rx.recv().await {
        if let Some(change) = Change::parse(&payload) {
            on_change(change);
        }
    }
    drop(client);
    match driver.await {
        Ok(result) => result,
        Err(_) => Ok(()),
    }
}

/// Read-your-writes for the management API: a change answered on this instance has reached
/// this instance's caches. The call's statement sent its notifications when it committed; a
/// mark sent after it on the same connection arrives after them (PostgreSQL delivers in commit
/// order), so once the listener sees the mark, it has acted on the change.
pub(crate) struct Marks {
    instance: u64,
    next: Cell<u64>,
    waiting: RefCell<HashMap<String, oneshot::Sender<()>>>,
}

/// How long a management call waits for its mark (the listener may be away: then the change
/// reaches this instance when it listens again, which forgets every cached key).
const MARK_WAIT: Duration = Duration::from_secs(1);

impl Marks {
    pub(crate) fn new() -> Marks {
        let clock = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_nanos() as u64;
        Marks {
            instance: clock ^ (u64::from(std::process::id()) << 32),
            next: Cell::new(0),
            waiting: RefCell::default(),
        }
    }

    /// Returns once this instance's listener saw what `client` committed before (or after
    /// [`MARK_WAIT`]).
    pub(crate) async fn caught_up(&self, client: &Client) {
        let mark = format!("{:x}-{}", self.instance, self.next.get());
        self.next.set(self.next.get() + 1);
        let (seen, on_seen) = oneshot::channel();
        self.waiting.borrow_mut().insert(mark.clone(), seen);
        let payload = Change::Mark(mark.clone()).payload();
        if client.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &payload]).await.is_ok() {
            let _ = tokio::time::timeout(MARK_WAIT, on_seen).await;
        }
        self.waiting.borrow_mut().remove(&mark);
    }

    /// The listener saw `mark` (another instance's marks wake no one).
    pub(crate) fn seen(&self, mark: &str) {
        if let Some(seen) = self.waiting.borrow_mut().remove(mark) {
            let _ = seen.send(());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Change;

    #[test]
    fn payloads_round_trip() {
        let changes = [Change::Key("ab".into()), Change::Team("t:1".into()), Change::User("u".into()), Change::Models];
        for c in changes.into_iter().chain([Change::Mark("5f-1".into())]) {
            assert_eq!(Change::parse(&c.payload()), Some(c));
        }
        assert_eq!(Change::parse("nonsense"), None);
    }
}

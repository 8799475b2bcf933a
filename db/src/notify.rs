//! Changes made on any instance reach every other within a second, through PostgreSQL's
//! LISTEN/NOTIFY on the database they share: every instance that shares keys shares the
//! database, while Redis is optional, and a notification is delivered when the change commits
//! — never before the row is there to read. Payloads: `key:<token>`, `team:<team_id>`,
//! `user:<user_id>`, `models`.

use futures_util::future::poll_fn;
use tokio_postgres::AsyncMessage;

use crate::connect::{connect, TlsConnection};

pub(crate) const CHANNEL: &str = "pointwork_changes";

/// What a notification says changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Change {
    Key(String),
    Team(String),
    User(String),
    Models,
}

impl Change {
    pub(crate) fn parse(payload: &str) -> Option<Change> {
        match payload.split_once(':') {
            Some(("key", token)) => Some(Change::Key(token.to_string())),
            Some(("team", id)) => Some(Change::Team(id.to_string())),
            Some(("user", id)) => Some(Change::User(id.to_string())),
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

#[cfg(test)]
mod tests {
    use super::Change;

    #[test]
    fn payloads_round_trip() {
        for c in [Change::Key("ab".into()), Change::Team("t:1".into()), Change::User("u".into()), Change::Models] {
            assert_eq!(Change::parse(&c.payload()), Some(c));
        }
        assert_eq!(Change::parse("nonsense"), None);
    }
}

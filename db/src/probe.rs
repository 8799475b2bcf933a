//! One visit to the database from the command line, on a runtime of its own that ends with it:
//! `pointwork check` asks whether the database is there and its schema complete, `pointwork db
//! init` creates LiteLLM's tables on an empty one.

use tokio_postgres::Client;

use crate::connect::{connect, parse};
use crate::schema;
use crate::settings::DbSettings;

/// What the database holds of what Pointwork reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contents {
    pub keys: i64,
    pub teams: i64,
    pub users: i64,
    pub models: i64,
}

impl std::fmt::Display for Contents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} keys, {} teams, {} users, {} models", self.keys, self.teams, self.users, self.models)
    }
}

/// What `pointwork check` finds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Probe {
    /// Connected, and the schema has every column Pointwork needs.
    Ready(Contents),
    /// Out of reach (the gateway would start and keep trying).
    Away(String),
    /// Connected, but the schema lacks what Pointwork needs (the gateway would not start).
    Incomplete(String),
}

/// Connects (within `settings.connect_timeout`) and checks the schema.
pub fn probe(settings: &DbSettings) -> Probe {
    let visit = async {
        let client = match visit_client(settings).await {
            Ok(client) => client,
            Err(e) => return Probe::Away(e),
        };
        if let Err(e) = schema::check(&client).await {
            return Probe::Incomplete(e);
        }
        match contents(&client).await {
            Ok(found) => Probe::Ready(found),
            Err(e) => Probe::Incomplete(e),
        }
    };
    match runtime() {
        Ok(runtime) => runtime.block_on(visit),
        Err(e) => Probe::Away(e),
    }
}

/// Creates the tables Pointwork uses, as LiteLLM's migrations make them (what exists stays as
/// it is), then checks the schema as start-up does.
pub fn init(settings: &DbSettings) -> Result<Contents, String> {
    runtime()?.block_on(async {
        let client = visit_client(settings).await?;
        schema::init(&client).await?;
        schema::check(&client).await?;
        contents(&client).await
    })
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("database: cannot start a runtime: {e}"))
}

/// A connection whose driver runs on the visit's runtime.
async fn visit_client(settings: &DbSettings) -> Result<Client, String> {
    let url = settings.redacted_url();
    let config = parse(&settings.url)?;
    let (client, connection) = match tokio::time::timeout(settings.connect_timeout, connect(&config)).await {
        Ok(Ok(pair)) => pair,
        Ok(Err(e)) => return Err(format!("cannot connect to {url}: {e}")),
        Err(_) => return Err(format!("{url} did not answer within {:?}", settings.connect_timeout)),
    };
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(client)
}

async fn contents(client: &Client) -> Result<Contents, String> {
    let row = client
        .query_one(
            "SELECT (SELECT count(*) FROM \"LiteLLM_VerificationToken\"), \
                    (SELECT count(*) FROM \"LiteLLM_TeamTable\"), \
                    (SELECT count(*) FROM \"LiteLLM_UserTable\"), \
                    (SELECT count(*) FROM \"LiteLLM_ProxyModelTable\")",
            &[],
        )
        .await
        .map_err(|e| format!("database: cannot count the keys: {e}"))?;
    Ok(Contents { keys: row.get(0), teams: row.get(1), users: row.get(2), models: row.get(3) })
}

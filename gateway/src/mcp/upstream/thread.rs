//! The `mcp` thread: its own monoio runtime holding every server's session. Shards and the
//! control thread reach it by channel only.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use futures_channel::mpsc::{UnboundedReceiver, UnboundedSender};
use futures_channel::oneshot;
use monoio_rustls::TlsConnector;
use pointwork_config::{McpServer, McpSettings, McpTransport};
use serde_json::Value;

use super::http::HttpLink;
use super::link::Link;
use super::session::Session;
use super::sse::SseLink;
use super::stdio::StdioLink;
use super::supervisor::supervise;
use super::wire::Url;
use super::{Answer, Call, ServerStatus};

/// How long a server left out by a reload may take to stop, once its calls have ended.
const RETIRE_WITHIN: Duration = Duration::from_secs(5);

/// What the thread is asked to do.
pub enum Command {
    Call(Call, UnboundedSender<Answer>),
    Notify {
        server: String,
        method: String,
        params: Option<Value>,
    },
    Reconfigure(McpSettings),
    /// Stop every session within the time, then say so and end.
    Stop(Duration, mpsc::Sender<()>),
}

/// The statuses of the servers, in the config's order; the `mcp` thread replaces the list on a
/// reload, each session updates its own.
pub type Statuses = Arc<Mutex<Vec<Arc<Mutex<ServerStatus>>>>>;

/// The thread's body: runs until told to stop (or every sender is gone).
pub fn run(settings: McpSettings, mut commands: UnboundedReceiver<Command>, statuses: Statuses) {
    let mut runtime = match monoio::RuntimeBuilder::<monoio::LegacyDriver>::new().enable_timer().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("mcp: the runtime could not be built: {e}");
            return;
        }
    };
    runtime.block_on(async move {
        let tls = Rc::new(crate::upstream::conn::tls_connector());
        let mut sessions: HashMap<String, Rc<Session>> = HashMap::new();
        let retiring = Retiring::default();
        apply(&settings, &mut sessions, &retiring, &tls, &statuses);
        let done = loop {
            match commands.recv().await {
                Ok(Command::Call(call, tx)) => match sessions.get(&call.server) {
                    Some(session) => {
                        monoio::spawn(session.clone().call(call.method, call.params, call.forwarded, tx));
                    }
                    None => {
                        let _ = tx.unbounded_send(Answer::Failed(format!("no MCP server is named {}", call.server)));
                    }
                },
                Ok(Command::Notify { server, method, params }) => {
                    if let Some(session) = sessions.get(&server) {
                        session.clone().spawn_notify(&method, params);
                    }
                }
                Ok(Command::Reconfigure(settings)) => apply(&settings, &mut sessions, &retiring, &tls, &statuses),
                Ok(Command::Stop(within, done)) => break Some((within, done)),
                Err(_) => break None,
            }
        };
        let within = done.as_ref().map_or(RETIRE_WITHIN, |(within, _)| *within);
        let old: Vec<_> = retiring.borrow_mut().drain(..).collect();
        let closing: Vec<_> = sessions.into_values().chain(old).map(|session| spawn_close(session, within)).collect();
        for closed in closing {
            let _ = closed.await;
        }
        if let Some((_, done)) = done {
            let _ = done.send(());
        }
    });
}

/// Makes the sessions match `settings`: a server new or changed gets a new session; one
/// changed or gone stops once its calls (which finish on it) have ended.
fn apply(
    settings: &McpSettings,
    sessions: &mut HashMap<String, Rc<Session>>,
    retiring: &Retiring,
    tls: &Rc<Result<TlsConnector, String>>,
    statuses: &Statuses,
) {
    let mut next = HashMap::new();
    let mut list = Vec::new();
    for server in &settings.servers {
        let session = match sessions.remove(&server.name) {
            Some(session) if session.server == *server => session,
            before => {
                if let Some(old) = before {
                    retire(old, retiring);
                }
                match start_session(server, tls) {
                    Ok(session) => session,
                    Err(why) => {
                        eprintln!("mcp: {why}");
                        continue;
                    }
                }
            }
        };
        list.push(session.status.clone());
        next.insert(server.name.clone(), session);
    }
    for (_, gone) in sessions.drain() {
        retire(gone, retiring);
    }
    *sessions = next;
    *statuses.lock().unwrap_or_else(|e| e.into_inner()) = list;
}

/// The link a server's transport needs; an invalid URL named with its key.
pub fn link_for(server: &McpServer, tls: &Rc<Result<TlsConnector, String>>) -> Result<Link, String> {
    let url = |url: &str| Url::parse(url).map_err(|why| format!("{}.url: {why}", server.path));
    Ok(match &server.transport {
        McpTransport::Http { url: u } => Link::Http(HttpLink::new(url(u)?, tls.clone())),
        McpTransport::Sse { url: u } => Link::Sse(SseLink::new(url(u)?, tls.clone())),
        McpTransport::Stdio { command, args, env } => {
            Link::Stdio(StdioLink::new(command.clone(), args.clone(), env.clone()))
        }
    })
}

fn start_session(server: &McpServer, tls: &Rc<Result<TlsConnector, String>>) -> Result<Rc<Session>, String> {
    let link = link_for(server, tls)?;
    let status = Arc::new(Mutex::new(ServerStatus {
        name: server.name.clone(),
        transport: link.transport(),
        up: false,
        restarts: 0,
        last_error: None,
    }));
    let session = Session::new(server.clone(), status, link);
    if session.link.is_supervised() {
        monoio::spawn(supervise(session.clone()));
    }
    Ok(session)
}

/// Sessions a reload left out, still finishing their calls: a stop stops them too.
type Retiring = Rc<RefCell<Vec<Rc<Session>>>>;

/// Stops a session once its open calls have ended.
fn retire(session: Rc<Session>, retiring: &Retiring) {
    session.closing.set(true);
    retiring.borrow_mut().push(session.clone());
    let retiring = retiring.clone();
    monoio::spawn(async move {
        session.idle().await;
        session.close(RETIRE_WITHIN).await;
        retiring.borrow_mut().retain(|s| !Rc::ptr_eq(s, &session));
    });
}

fn spawn_close(session: Rc<Session>, within: Duration) -> oneshot::Receiver<()> {
    let (tx, rx) = oneshot::channel();
    monoio::spawn(async move {
        session.close(within).await;
        let _ = tx.send(());
    });
    rx
}

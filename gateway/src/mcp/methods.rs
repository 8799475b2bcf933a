//! What each MCP method does at the gateway: the lists gather every reachable server's items
//! under their namespaced names; a call, a prompt or a resource is sent to the one server its
//! name says, the name as that server knows it.

use futures_channel::mpsc::UnboundedReceiver;
use pointwork_config::{McpServer, McpSettings};
use serde_json::{json, Map, Value};

use crate::keys::Caller;
use crate::mcp::rpc::{self, RpcError};
use crate::mcp::upstream::{Answer, Call, Upstreams};
use crate::mcp::{access, event_stream, names};

/// The most pages of one server's list read for one request.
const MAX_PAGES: usize = 20;

/// What a request is served with.
pub struct Reach<'a> {
    pub settings: &'a McpSettings,
    pub upstreams: Option<&'a Upstreams>,
    /// Who is calling: its key's tool lists narrow the servers' tools.
    pub caller: &'a Caller,
    /// The servers this request may reach (its key's, in its scope).
    pub servers: Vec<&'a McpServer>,
    /// The caller's headers, name (lowercase) and value, for the servers' `extra_headers`.
    pub headers: Vec<(String, String)>,
}

/// A request sent on to one server: its answers to come.
pub struct Forwarded<'a> {
    pub server: &'a McpServer,
    /// The tool, prompt or resource as that server knows it.
    pub target: String,
    pub answers: UnboundedReceiver<Answer>,
    /// How its final answer becomes the client's result.
    pub shape: Shape,
}

/// How a forwarded request's result is rewritten for the client.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Shape {
    /// `tools/call`: a server that fails gives a tool error (`isError`), not a protocol error.
    ToolCall,
    /// `resources/read`: the contents' URIs namespaced again.
    ResourceRead,
    /// As the server answered.
    AsIs,
}

/// A method's outcome: answered here, or forwarded to one server.
pub enum Served<'a> {
    Now(Result<Value, RpcError>),
    Forwarded(Forwarded<'a>),
}

/// The methods a session serves (everything but `initialize`).
pub async fn serve<'a>(reach: &Reach<'a>, method: &str, params: Option<&Value>) -> Served<'a> {
    match method {
        "ping" | "logging/setLevel" => Served::Now(Ok(json!({}))),
        "tools/list" => Served::Now(Ok(gather(reach, List::TOOLS).await)),
        "prompts/list" => Served::Now(Ok(gather(reach, List::PROMPTS).await)),
        "resources/list" => Served::Now(Ok(gather(reach, List::RESOURCES).await)),
        "resources/templates/list" => Served::Now(Ok(gather(reach, List::TEMPLATES).await)),
        "tools/call" => forward(reach, method, params, "name", Shape::ToolCall),
        "prompts/get" => forward(reach, method, params, "name", Shape::AsIs),
        "resources/read" => forward(reach, method, params, "uri", Shape::ResourceRead),
        "completion/complete" => complete(reach, params),
        _ => Served::Now(Err(RpcError::method_not_found(method))),
    }
}

/// One kind of list: its method, the key of its items and the fields namespaced in each.
struct List {
    method: &'static str,
    items: &'static str,
    names: &'static [&'static str],
}

impl List {
    const TOOLS: List = List { method: "tools/list", items: "tools", names: &["name"] };
    const PROMPTS: List = List { method: "prompts/list", items: "prompts", names: &["name"] };
    const RESOURCES: List = List { method: "resources/list", items: "resources", names: &["name", "uri"] };
    const TEMPLATES: List =
        List { method: "resources/templates/list", items: "resourceTemplates", names: &["name", "uriTemplate"] };
}

/// Every reachable server's items, asked of all at once; a server that fails or does not
/// offer the list adds nothing (and is logged), the others are unaffected.
async fn gather(reach: &Reach<'_>, list: List) -> Value {
    let Some(upstreams) = reach.upstreams else {
        return json!({ list.items: [] });
    };
    let pending: Vec<(&McpServer, UnboundedReceiver<Answer>)> =
        reach.servers.iter().map(|s| (*s, upstreams.request(call(reach, s, list.method, None)))).collect();
    let mut items = Vec::new();
    for (server, mut answers) in pending {
        for _page in 0..MAX_PAGES {
            let result = match last(&mut answers).await {
                Answer::Result(result) => result,
                Answer::Error(e) if e["code"] == rpc::METHOD_NOT_FOUND => break,
                Answer::Error(e) => {
                    eprintln!("pointwork: mcp: {}: {} failed: {}", server.name, list.method, e["message"]);
                    break;
                }
                Answer::Failed(why) => {
                    eprintln!("pointwork: mcp: {}: {} failed: {why}", server.name, list.method);
                    break;
                }
                Answer::Notification(_) => break,
            };
            for mut item in result[list.items].as_array().cloned().unwrap_or_default() {
                let keep = list.items != "tools"
                    || item["name"].as_str().is_some_and(|t| access::may_call(reach.settings, reach.caller, server, t));
                if keep {
                    namespace(reach.settings, server, &mut item, list.names);
                    items.push(item);
                }
            }
            match result["nextCursor"].as_str() {
                Some(cursor) => {
                    answers = upstreams.request(call(reach, server, list.method, Some(json!({"cursor": cursor}))))
                }
                None => break,
            }
        }
    }
    json!({ list.items: items })
}

fn namespace(settings: &McpSettings, server: &McpServer, item: &mut Value, fields: &[&str]) {
    for field in fields {
        if let Some(name) = item[*field].as_str() {
            item[*field] = Value::String(names::join(settings, server, name));
        }
    }
}

/// Sends a request naming one tool, prompt or resource (`params[field]`) to its server.
fn forward<'a>(reach: &Reach<'a>, method: &str, params: Option<&Value>, field: &str, shape: Shape) -> Served<'a> {
    let Some(namespaced) = params.and_then(|p| p[field].as_str()) else {
        return Served::Now(Err(RpcError::invalid_params(format!("{method} needs params.{field}, a string"))));
    };
    let what = if field == "uri" { "resource" } else { method.split('/').next().unwrap_or("tool") };
    let what = what.trim_end_matches('s');
    let Some((server, target)) = resolve(reach, namespaced) else {
        return Served::Now(Err(unknown(reach, what, namespaced)));
    };
    if shape == Shape::ToolCall && !access::may_call(reach.settings, reach.caller, server, target) {
        return Served::Now(Err(RpcError::invalid_params(format!(
            "unknown tool: {namespaced} (the MCP server {} does not offer {target} here)",
            server.name
        ))));
    }
    let Some(upstreams) = reach.upstreams else {
        return Served::Now(Err(unknown(reach, what, namespaced)));
    };
    let mut params = params.cloned().unwrap_or_else(|| Value::Object(Map::new()));
    params[field] = Value::String(target.to_string());
    let answers = upstreams.request(call(reach, server, method, Some(params)));
    Served::Forwarded(Forwarded { server, target: target.to_string(), answers, shape })
}

/// `completion/complete`: sent to the server of the prompt or resource it completes.
fn complete<'a>(reach: &Reach<'a>, params: Option<&Value>) -> Served<'a> {
    let reference = params.map(|p| &p["ref"]);
    let field = match reference.and_then(|r| r["type"].as_str()) {
        Some("ref/prompt") => "name",
        Some("ref/resource") => "uri",
        _ => return Served::Now(Err(RpcError::invalid_params("completion/complete needs params.ref".into()))),
    };
    let Some(namespaced) = reference.and_then(|r| r[field].as_str()) else {
        return Served::Now(Err(RpcError::invalid_params(format!("completion/complete needs params.ref.{field}"))));
    };
    let (Some((server, target)), Some(upstreams)) = (resolve(reach, namespaced), reach.upstreams) else {
        return Served::Now(Err(unknown(reach, "prompt or resource", namespaced)));
    };
    let mut params = params.cloned().unwrap_or_default();
    params["ref"][field] = Value::String(target.to_string());
    let answers = upstreams.request(call(reach, server, "completion/complete", Some(params)));
    Served::Forwarded(Forwarded { server, target: target.to_string(), answers, shape: Shape::AsIs })
}

/// The reachable server a namespaced name belongs to, and the name as it knows it.
fn resolve<'a, 'n>(reach: &Reach<'a>, namespaced: &'n str) -> Option<(&'a McpServer, &'n str)> {
    let (server, name) = names::split(reach.settings, namespaced)?;
    let server = reach.servers.iter().find(|s| s.name == server.name)?;
    Some((*server, name))
}

fn unknown(reach: &Reach<'_>, what: &str, namespaced: &str) -> RpcError {
    let prefixes: Vec<&str> = reach.servers.iter().map(|s| s.prefix.as_str()).collect();
    let names = if prefixes.is_empty() { "none".to_string() } else { prefixes.join(", ") };
    RpcError::invalid_params(format!(
        "unknown {what}: {namespaced} (names are SERVER{}NAME; the servers this key reaches here: {names})",
        reach.settings.separator
    ))
}

fn call(reach: &Reach<'_>, server: &McpServer, method: &str, params: Option<Value>) -> Call {
    let forwarded = reach
        .headers
        .iter()
        .filter(|(name, _)| server.forwarded_headers.iter().any(|f| f.eq_ignore_ascii_case(name)))
        .cloned()
        .collect();
    Call { server: server.name.clone(), method: method.to_string(), params, forwarded }
}

/// The final answer, notifications skipped.
pub async fn last(answers: &mut UnboundedReceiver<Answer>) -> Answer {
    loop {
        match event_stream::next(answers).await {
            Some(Answer::Notification(_)) => continue,
            Some(answer) => return answer,
            None => return Answer::Failed("the MCP server's session ended without an answer".into()),
        }
    }
}

/// The client's result for a forwarded request's final answer.
pub fn finish(settings: &McpSettings, forwarded: &Forwarded<'_>, answer: Answer) -> Result<Value, RpcError> {
    match (answer, forwarded.shape) {
        (Answer::Result(mut result), Shape::ResourceRead) => {
            if let Some(contents) = result["contents"].as_array_mut() {
                for c in contents {
                    namespace(settings, forwarded.server, c, &["uri"]);
                }
            }
            Ok(result)
        }
        (Answer::Result(result), _) => Ok(result),
        (Answer::Error(error), _) => Err(RpcError::from_upstream(error)),
        (Answer::Failed(why), Shape::ToolCall) => Ok(json!({
            "content": [{"type": "text", "text": format!("MCP server {}: {why}", forwarded.server.name)}],
            "isError": true,
        })),
        (Answer::Failed(why), _) => Err(RpcError::internal(format!("MCP server {}: {why}", forwarded.server.name))),
        (Answer::Notification(_), _) => Err(RpcError::internal("no answer".into())),
    }
}

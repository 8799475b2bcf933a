//! The MCP gateway: LiteLLM's `mcp_servers` behind one Streamable HTTP endpoint (`/mcp`), each
//! server's tools, prompts and resources under its own name, its credential kept here.
//! A second pipeline beside the model routes: authenticate, resolve the namespaced name,
//! forward to the server's session, record.

pub mod upstream;

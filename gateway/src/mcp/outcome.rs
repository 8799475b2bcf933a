//! How a request sent on to an MCP server ended, as the log, the metrics and the traces name
//! it. A leaf: the record phase and the exporters share it.

use crate::mcp::upstream::Answer;

/// How a forwarded request ended, as the log and the metrics name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Ok,
    /// The tool ran and reported an error (`isError`).
    ToolError,
    /// The server answered with a JSON-RPC error.
    Error,
    /// No answer: unreachable, dead, or too slow.
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::ToolError => "tool_error",
            Outcome::Error => "error",
            Outcome::Failed => "failed",
            Outcome::Cancelled => "cancelled",
        }
    }

    pub fn of(answer: &Answer) -> Outcome {
        match answer {
            Answer::Result(r) if r["isError"] == true => Outcome::ToolError,
            Answer::Result(_) => Outcome::Ok,
            Answer::Error(_) => Outcome::Error,
            Answer::Failed(_) | Answer::Notification(_) => Outcome::Failed,
        }
    }
}

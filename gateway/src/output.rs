//! What a command prints: its answer on standard output, its errors and warnings on standard
//! error, neither of them panicking when the reader has gone.

use std::fmt::Display;
use std::io::{ErrorKind, Write};
use std::process::ExitCode;

use pointwork_config::Loaded;

pub fn fail(message: &str) -> ExitCode {
    print_err(format_args!("pointwork: {message}"));
    ExitCode::FAILURE
}

pub fn print_warnings(loaded: &Loaded) {
    for w in &loaded.warnings {
        print_err(format_args!("pointwork: warning: {w}"));
    }
}

/// Prints a command's answer: exit 0, or 1 when standard output cannot take it.
pub fn answer(text: impl Display) -> ExitCode {
    print_line(text).err().unwrap_or(ExitCode::SUCCESS)
}

/// Writes `text` and a newline to standard output. `println!` panics when the reader has gone
/// (`pointwork route … | head -1` closes the pipe after one line); the reader chose to stop, so
/// a closed pipe is no error and the command keeps its exit status. Any other write error
/// (a full disk) fails the command.
pub fn print_line(text: impl Display) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(fail(&format!("cannot write to standard output: {e}"))),
        _ => Ok(()),
    }
}

/// Writes `text` and a newline to standard error, where a failure has nowhere left to be told
/// (`eprintln!` would panic on it).
pub fn print_err(text: impl Display) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

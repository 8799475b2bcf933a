//! `pointwork-mock`: runs the mock OpenAI-compatible provider until killed.

mod cli;

use std::io::Write;
use std::process::ExitCode;

use cli::{parse_args, usage, Command};
use pointwork_mock::spawn;

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Serve(options)) => *options,
        Ok(Command::Help) => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("pointwork-mock: {message}\n(see pointwork-mock --help)");
            return ExitCode::from(2);
        }
    };
    let server = match spawn(options) {
        Ok(server) => server,
        Err(error) if error.kind() == std::io::ErrorKind::InvalidInput => {
            eprintln!("pointwork-mock: {error}\n(see pointwork-mock --help)");
            return ExitCode::from(2);
        }
        Err(error) => {
            eprintln!("pointwork-mock: cannot start: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut stdout = std::io::stdout().lock();
    let announced = writeln!(stdout, "pointwork-mock {} listening on {}", server.name(), server.url())
        .and_then(|()| stdout.flush());
    drop(stdout);
    if let Err(error) = announced {
        eprintln!("pointwork-mock: cannot write to stdout: {error}");
    }
    server.wait();
    ExitCode::SUCCESS
}

//! `pointwork-load`: runs one load test and prints its report (and writes it as JSON).

use std::process::ExitCode;

use pointwork_loadtest::load::{parse_args, run, usage, Command};

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            print!("{}", usage());
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("pointwork-load: {message}\n(see pointwork-load --help)");
            return ExitCode::from(2);
        }
    };
    let report = match run(&options) {
        Ok(report) => report,
        Err(message) => {
            eprintln!("pointwork-load: {message}");
            return ExitCode::from(2);
        }
    };
    print!("{}", report.to_text());
    if let Some(path) = &options.json {
        if let Err(error) = std::fs::write(path, report.to_json() + "\n") {
            eprintln!("pointwork-load: cannot write {}: {error}", path.display());
            return ExitCode::FAILURE;
        }
    }
    let failed = report.requests.errors > 0 || report.requests.not_sent > 0 || report.requests.unfinished > 0;
    let idle_failed = report.idle.as_ref().is_some_and(|idle| idle.still_open < idle.requested);
    if failed || idle_failed || report.requests.ok == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

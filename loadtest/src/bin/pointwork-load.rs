//! `pointwork-load`: runs one load test and prints its report (and writes it as JSON).

use std::process::ExitCode;

use pointwork_loadtest::load::{parse_args, run, Command};

const USAGE: &str = "\
usage: pointwork-load --url http[s]://HOST:PORT/PATH [--url …] [OPTIONS]

Sends POST requests over HTTP/1.1 keep-alive connections (plain or TLS) and reports throughput,
latency percentiles and errors. Closed loop by default; --rate makes it an open loop.

options:
  --url URL              where to send (http:// or https://); the path is sent as it is. Repeat
                         it to spread the connections round-robin over several servers
                         (connection i to URL i mod n); the report gives the total, then each
                         URL's share
  -c, --concurrency C    connections (default 64)
  --duration D           how long to send (default 10s; 500ms, 30s, 2m)
  --requests N           send N requests instead of running for a duration
  --rate R               open loop: R requests per second over all connections, each on a fixed
                         schedule; latency counts from the intended start (waits for a free
                         connection included)
  --stream               add \"stream\": true and read the answer as server-sent events
                         (time to first byte, time between events, total)
  --body FILE            send this file as the body instead of a generated chat request
  --model NAME           the generated chat request's model (default mock-chat)
  --prompt-bytes B       the generated user message's size in bytes (default 1024)
  --header K:V           an extra request header (repeatable)
  --json OUT             also write the report as JSON to OUT
  --threads T            generator threads (default: available cores, at most C)
  --timeout D            a request not complete this long after its start fails (default 30s)
  --spin-us U            open loop: busy-poll the last U µs before each start (default 50)
  --idle-connections N   open N connections, one request each, then hold them idle for
                         --duration and report how many stayed open
  --new-connection       every request on a fresh connection (with \"connection: close\"),
                         closed after its answer; the connect and TLS handshake count in the
                         request's latency. With https: handshakes per second
  --cacert FILE          https: trust the CAs in this PEM bundle (there are no built-in roots:
                         https needs --cacert or --insecure)
  --insecure             https: accept any server certificate (the handshake signature is still
                         checked). For benchmarks only
  --no-resume            https: no session resumption, every handshake a full one (by default
                         new connections resume the thread's sessions: tickets or session ids)
  --no-progress          no live progress line (it shows only on a terminal anyway)
  -h, --help             print this help

https runs report their handshakes: how many, how many resumed, and their time from the TCP
connection's establishment to the handshake's end (\"tls\" in the JSON); TLS failures count as
\"certificate\" (the server's certificate was refused) or \"tls\" (anything else), with the first
one's message.

Exit status: 0 when every request succeeded, 1 when any failed (or was not sent), 2 on bad usage.
";

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            print!("{USAGE}");
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

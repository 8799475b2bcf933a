//! The `pointwork` command line as a user meets it: `serve` refusing a busy port, `serve`
//! refusing a bad config, `check` with its summary or its list of errors, and every command
//! whose output is piped into a reader that stops early (`| head -1`).

mod common;

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    chat_body, config, deployment, pointwork_bin, serve_command, Gateway, GatewayOptions, Mock, Process, TempDir,
    EXIT_DEADLINE, READY_DEADLINE,
};

/// Runs `pointwork serve` on `config_path` at `listen` and waits for it to exit.
fn serve_expecting_exit(config_path: &std::path::Path, listen: std::net::SocketAddr) -> Process {
    let command = serve_command(config_path, &GatewayOptions { listen: Some(listen), ..GatewayOptions::default() });
    let mut process = Process::spawn("second pointwork serve", command);
    process.wait_exit(EXIT_DEADLINE);
    process
}

fn assert_refused(process: &mut Process, addr: std::net::SocketAddr) {
    let status = process.wait_exit(EXIT_DEADLINE);
    assert_eq!(status.code(), Some(1), "stderr: {}", process.stderr());
    let stderr = process.stderr();
    assert!(
        stderr.contains(&addr.to_string()) && stderr.contains("already in use"),
        "the message names the address and the cause: {stderr}"
    );
}

#[test]
fn serve_refuses_a_port_another_gateway_serves() {
    let mock = Mock::start("a", &[]);
    let first = Gateway::start(&config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &mock, "")], ""));
    let mut second = serve_expecting_exit(&first.config_path, first.addr);
    assert_refused(&mut second, first.addr);

    // The first one still serves, and alone: every request reaches it.
    for _ in 0..5 {
        assert_eq!(first.chat("gpt").status, 200);
    }
}

#[test]
fn serve_refuses_a_port_another_process_listens_on() {
    let holder = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = holder.local_addr().unwrap();
    let dir = TempDir::new("busy");
    let path = dir.write(
        "config.yaml",
        "model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/gpt-4o-mini, api_base: \"http://127.0.0.1:9/v1\"}\n",
    );
    let mut process = serve_expecting_exit(&path, addr);
    assert_refused(&mut process, addr);
}

#[test]
fn serve_refuses_an_invalid_config_with_the_key_path() {
    let dir = TempDir::new("bad-serve");
    let path = dir.write(
        "config.yaml",
        "model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/gpt-4o-mini, weight: high}\n",
    );
    let mut process = Process::spawn("pointwork serve", serve_command(&path, &GatewayOptions::default()));
    let status = process.wait_exit(EXIT_DEADLINE);
    assert_eq!(status.code(), Some(1));
    let stderr = process.stderr();
    assert!(stderr.contains("model_list[0].litellm_params.weight"), "{stderr}");
    assert!(!process.stdout().contains("listening"));
}

fn check(path: &std::path::Path) -> std::process::Output {
    Command::new(pointwork_bin()).arg("check").arg("--config").arg(path).output().expect("run pointwork check")
}

#[test]
fn check_lists_the_entries_left_out_and_strict_fails_on_them() {
    let dir = TempDir::new("check-left-out");
    let path = dir.write(
        "config.yaml",
        "model_list:
  - {model_name: gpt, litellm_params: {model: openai/gpt-4o, api_key: sk-x}}
  - {model_name: gpt, litellm_params: {model: sagemaker/gpt-4o-eu, aws_region_name: eu-west-1}}
  - {model_name: granite, litellm_params: {model: watsonx/ibm/granite-13b-chat-v2}}
",
    );
    let out = check(&path);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("model groups: 1, deployments: 1"), "{stdout}");
    assert!(stdout.contains("left out: 2"), "{stdout}");
    assert!(
        stdout.contains("model_list[1] (gpt → sagemaker/gpt-4o-eu): Pointwork does not serve provider sagemaker yet"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "model_list[2] (granite → watsonx/ibm/granite-13b-chat-v2): Pointwork does not serve provider watsonx yet"
        ),
        "{stdout}"
    );
    assert!(stderr.contains("pointwork: warning: model_list[1].litellm_params.model: left out"), "{stderr}");

    let strict = Command::new(pointwork_bin()).args(["check", "--strict", "--config"]).arg(&path).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&strict.stdout), String::from_utf8_lossy(&strict.stderr));
    assert_eq!(strict.status.code(), Some(1), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("left out: 2"), "the summary still shows them: {stdout}");
    assert!(stderr.contains("--strict: 2 entries left out"), "{stderr}");
    // A config with nothing left out passes --strict.
    let clean = dir.write(
        "clean.yaml",
        "model_list: [{model_name: gpt, litellm_params: {model: openai/gpt-4o, api_key: sk-x}}]\n",
    );
    let out = Command::new(pointwork_bin()).args(["check", "--strict", "--config"]).arg(&clean).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn check_leaves_placeholders_and_unplaced_providers_out_and_strict_refuses_them() {
    let dir = TempDir::new("check-placeholders");
    let path = dir.write(
        "config.yaml",
        "model_list:
  - {model_name: gpt, litellm_params: {model: openai/gpt-4o, api_key: sk-x}}
  - {model_name: gpt, litellm_params: {model: azure/gpt-4o, api_base: <your-azure-endpoint>}}
  - {model_name: glm, litellm_params: {model: zhipu/glm-4}}
router_settings: {redis_host: <your redis host>, redis_port: 6379}
",
    );
    let out = check(&path);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("left out: 2"), "{stdout}");
    assert!(
        stdout.contains(
            r#"model_list[1] (gpt → azure/gpt-4o): api_base "<your-azure-endpoint>" is a placeholder, not an http:// or https:// URL with a host"#
        ),
        "{stdout}"
    );
    assert!(stdout.contains(r#"model_list[2] (glm → zhipu/glm-4): unknown provider "zhipu""#), "{stdout}");
    assert!(
        stdout.contains(r#"cluster: off (router_settings.redis_host "<your redis host>" is a placeholder"#),
        "{stdout}"
    );
    assert!(stderr.contains("warning: model_list[1].litellm_params.api_base: left out"), "{stderr}");
    assert!(stderr.contains("warning: router_settings.redis_host: \"<your redis host>\" is a placeholder"), "{stderr}");

    let strict = Command::new(pointwork_bin()).args(["check", "--strict", "--config"]).arg(&path).output().unwrap();
    assert_eq!(strict.status.code(), Some(1));
    // Only Redis's address a placeholder: --strict refuses that too.
    let redis_only = dir.write(
        "redis.yaml",
        "model_list: [{model_name: gpt, litellm_params: {model: openai/gpt-4o, api_key: sk-x}}]
router_settings: {redis_host: <your redis host>}
",
    );
    let out = Command::new(pointwork_bin()).args(["check", "--strict", "--config"]).arg(&redis_only).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(r#"--strict: router_settings.redis_host "<your redis host>" is a placeholder"#),
        "{stderr}"
    );
    assert_eq!(check(&redis_only).status.code(), Some(0), "without --strict it loads");
}

#[test]
fn check_prints_a_summary_and_exits_0_on_a_good_config() {
    let dir = TempDir::new("check-good");
    let path = dir.write(
        "config.yaml",
        r#"model_list:
  - model_name: gpt-4o-mini
    litellm_params:
      model: openai/gpt-4o-mini
      api_base: http://127.0.0.1:9/v1
      api_key: sk-abcdef123456
      weight: 3
    model_info:
      id: mini-1
  - model_name: gpt-4o-mini
    litellm_params:
      model: groq/llama-3.1-8b-instant
      api_key: os.environ/POINTWORK_TEST_UNSET_KEY_FOR_CHECK
    model_info:
      id: mini-2
  - model_name: text-embedding-3-small
    litellm_params:
      model: openai/text-embedding-3-small
      api_base: http://127.0.0.1:9/v1
router_settings:
  routing_strategy: simple-shuffle
  num_retries: 3
  cooldown_time: 30
"#,
    );
    let out = Command::new(pointwork_bin())
        .args(["check", "--config"])
        .arg(&path)
        .env("POINTWORK_TEST_UNSET_KEY_FOR_CHECK", "sk-zzzzzzzz9876")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stdout: {stdout}\nstderr: {stderr}");
    for expected in [
        "model groups: 2, deployments: 3",
        "gpt-4o-mini",
        "text-embedding-3-small",
        "mini-1",
        "mini-2",
        "num_retries 3",
        "cooldown_time 30s",
    ] {
        assert!(stdout.contains(expected), "{expected:?} missing from:\n{stdout}");
    }
    assert!(
        !stdout.contains("sk-abcdef123456") && !stdout.contains("sk-zzzzzzzz9876"),
        "keys are redacted in the summary:\n{stdout}"
    );
}

#[test]
fn check_lists_every_error_with_its_key_path_and_exits_1() {
    let dir = TempDir::new("check-bad");
    let path = dir.write(
        "config.yaml",
        r#"model_list:
  - model_name: gpt
    litellm_params:
      model: openai/gpt-4o-mini
      weight: high
  - model_name: gpt
    litellm_params:
      model: openai/gpt-4o
      timeout: -3
router_settings:
  num_retries: lots
pointwork:
  listn: 127.0.0.1:4000
"#,
    );
    let out = check(&path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for expected in [
        r#"model_list[0].litellm_params.weight: expected a positive integer, got "high""#,
        "model_list[1].litellm_params.timeout:",
        "router_settings.num_retries:",
        "pointwork.listn:",
    ] {
        assert!(stderr.contains(expected), "{expected:?} missing from:\n{stderr}");
    }
    assert!(stderr.contains(&path.display().to_string()), "{stderr}");
}

#[test]
fn check_reports_a_missing_file_and_a_yaml_syntax_error() {
    let dir = TempDir::new("check-syntax");
    let missing = dir.path.join("nope.yaml");
    let out = check(&missing);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope.yaml"));

    let broken =
        dir.write("broken.yaml", "model_list:\n  - model_name: b\n    litellm_params: {model: openai/gpt-4o\n");
    let out = check(&broken);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("broken.yaml"), "{stderr}");
}

#[test]
fn demo_serves_both_groups_and_prints_how_to_try_it() {
    let mut command = Command::new(pointwork_bin());
    command.args(["demo", "--listen", "127.0.0.1:0", "--shards", "1"]);
    let mut process = Process::spawn("pointwork demo", command);
    let line = process.wait_for_line("listening on http://", common::READY_DEADLINE);
    let addr = common::addr_after_http(&line);
    // The banner follows the ready line: the config it used and a curl to try.
    process.wait_for_line("Ctrl-C", common::READY_DEADLINE);
    let banner = process.stdout();
    assert!(banner.contains("model_list:"), "{banner}");
    assert!(banner.contains(&format!("curl -s http://{addr}/v1/chat/completions")), "{banner}");

    // The flaky deployment fails half its calls; retries and cooldowns hide it from clients.
    for i in 0..20 {
        let response =
            common::Client::connect(addr).post_json("/v1/chat/completions", &common::chat_body("gpt-4o-mini", false));
        assert_eq!(response.status, 200, "request {i}: {}", response.text());
    }
    let embedding = common::Client::connect(addr)
        .post_json("/v1/embeddings", r#"{"model":"text-embedding-3-small","input":"hello"}"#);
    assert_eq!(embedding.status, 200, "{}", embedding.text());
    let models = common::Client::connect(addr).request("GET", "/v1/models", &[], b"");
    assert_eq!(models.status, 200);
    assert!(process.is_running());
}

/// `command` with a standard output whose reader is already gone, as after `… | head -1` once
/// `head` has its line: every write to it fails with a broken pipe, whenever it comes.
fn into_a_closed_pipe(command: &mut Command) -> &mut Command {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    command.stdout(writer).stderr(Stdio::piped())
}

#[test]
fn answers_into_a_closed_pipe_end_quietly_with_the_usual_status() {
    let dir = TempDir::new("closed-pipe");
    let config = dir.write(
        "config.yaml",
        "model_list:\n  - model_name: gpt\n    litellm_params: {model: openai/gpt-4o-mini, api_base: \"http://127.0.0.1:9/v1\", api_key: sk-test-1234}\n",
    );
    let known = dir.write("known.json", &chat_body("gpt", false));
    let unknown = dir.write("unknown.json", &chat_body("gpt-9", false));
    let (config, known, unknown) = (config.to_str().unwrap(), known.to_str().unwrap(), unknown.to_str().unwrap());
    for (args, stdin, expected) in [
        (&["route", "--config", config, "--request", known][..], "", 0),
        (&["route", "--config", config, "--request", unknown], "", 1),
        (&["check", "--config", config], "", 0),
        (&["--help"], "", 0),
        (&["--version"], "", 0),
        (&["hash-key"], "sk-some-key\n", 0),
    ] {
        let mut child = into_a_closed_pipe(Command::new(pointwork_bin()).args(args).stdin(Stdio::piped()))
            .spawn()
            .expect("run pointwork");
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(expected), "{args:?}: {stderr}");
        if expected == 0 {
            assert_eq!(stderr, "", "{args:?}: a closed pipe is not worth a message");
        } else {
            assert!(stderr.contains("Invalid model name passed in model=gpt-9"), "{args:?}: {stderr}");
        }
    }
}

#[test]
fn a_gateway_whose_standard_output_is_gone_keeps_serving() {
    let mock = Mock::start("a", &[]);
    let dir = TempDir::new("closed-pipe-serve");
    let path = dir.write("config.yaml", &config(&[deployment("gpt", "dep-a", "openai/gpt-4o-mini", &mock, "")], ""));
    // Its ready line cannot be read: the test chooses the port (free a moment ago).
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut command = serve_command(&path, &GatewayOptions { listen: Some(addr), ..GatewayOptions::default() });
    let mut child = into_a_closed_pipe(command.stdin(Stdio::null())).spawn().expect("run pointwork serve");
    let deadline = Instant::now() + READY_DEADLINE;
    while std::net::TcpStream::connect(addr).is_err() {
        assert!(child.try_wait().unwrap().is_none(), "pointwork serve exited before listening");
        assert!(Instant::now() < deadline, "pointwork serve never listened on {addr}");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The ready line was written (and lost) just after the listener opened: give it time.
    std::thread::sleep(Duration::from_millis(300));
    if let Some(status) = child.try_wait().unwrap() {
        let stderr = String::from_utf8_lossy(&child.wait_with_output().unwrap().stderr).into_owned();
        panic!("pointwork serve exited ({status}) once listening: {stderr}");
    }
    for _ in 0..3 {
        let response = common::Client::connect(addr).post_json("/v1/chat/completions", &chat_body("gpt", false));
        assert_eq!(response.status, 200, "{}", response.text());
    }
    let exited = child.try_wait().unwrap();
    child.kill().unwrap();
    let stderr = String::from_utf8_lossy(&child.wait_with_output().unwrap().stderr).into_owned();
    assert!(exited.is_none() && !stderr.contains("panicked"), "exited: {exited:?}; stderr: {stderr}");
}

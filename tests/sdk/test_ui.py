"""The live view (`/ui`) in headless Chromium against the running gateway: the page lists the
running config, shows a failing deployment cooling down with its cause, follows more traffic
without a reload (polling at most once a second, and not while hidden), explains a decision,
blocks/unblocks and ends a cooldown through the admin actions, reloads the config, and shows
nothing without the key. Keys and teams are listed, created and revoked against a real
PostgreSQL. Every test also proves that the page asked no other host for anything and logged no
console error (a CSP violation would be one); the run writes the screenshots in docs/ui/."""

from __future__ import annotations

import json
import re
import time
from types import SimpleNamespace
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest
from playwright.sync_api import expect, sync_playwright

import ui_browser
from conftest import Process, RedisServer, _deployment, _start_gateway, _start_mock, metric, wait_until
from test_openrouter_walk import CALLBACK, MODEL as PARETO_MODEL, _telemetry

MASTER = "sk-ui-master"
# A page polls once a second; a busy CI machine gets slack over Playwright's 5 s.
expect.set_options(timeout=10_000)
GROUPS = {"chat": ["chat-alpha", "chat-beta"], "flaky": ["flaky-broken", "flaky-alpha"]}


@pytest.fixture(scope="module")
def gw(tmp_path_factory):
    """Two healthy mocks, one answering 500, an OpenRouter stand-in for a pareto rule, a
    complexity router over `chat`, a redis-server, and `pointwork serve` with a master key."""
    started: list[Process] = []
    redis = RedisServer()
    try:
        alpha, beta = _start_mock("alpha"), _start_mock("beta")
        broken = _start_mock("broken", "--fault", "status:500")
        root = tmp_path_factory.mktemp("ui")
        _telemetry(root / "telemetry")
        openrouter = _start_mock("openrouter", "--openrouter-telemetry", str(root / "telemetry"))
        started += [m.process for m in (alpha, beta, broken, openrouter)]
        config = (
            "model_list:\n"
            + _deployment("chat", "chat-alpha", "openai/gpt-4o-mini", alpha)
            + _deployment("chat", "chat-beta", "openai/gpt-4o-mini", beta)
            + _deployment("flaky", "flaky-broken", "openai/gpt-4o", broken)
            + _deployment("flaky", "flaky-alpha", "openai/gpt-4o", alpha)
            + f"  - model_name: {PARETO_MODEL}\n"
            f"    litellm_params: {{model: openrouter/{PARETO_MODEL}, api_base: \"http://{openrouter.addr}/api/v1\", api_key: sk-or}}\n"
            "    model_info: {id: or-wildcard}\n"
            "  - model_name: auto\n"
            "    litellm_params:\n"
            "      model: auto_router/complexity_router\n"
            "      complexity_router_config:\n"
            "        tiers: {SIMPLE: [chat], MEDIUM: [chat], COMPLEX: [chat], REASONING: [chat]}\n"
            "router_settings: {num_retries: 1, allowed_fails: 0, cooldown_time: 3600, "
            f"redis_host: 127.0.0.1, redis_port: {redis.port}}}\n"
            "pointwork: {cluster: {instance: pw-ui, sync_interval: 200ms}}\n"
            "litellm_settings:\n"
            f"  callbacks: [\"{CALLBACK}\"]\n"
            "  openrouter_pareto_rules:\n"
            f"    \"{PARETO_MODEL}\": {{precision: [fp8], min_context: 1000000, min_stats_requests: 100, wildcard: true}}\n"
            f"  openrouter_pareto_telemetry: {{base_url: \"http://{openrouter.addr}\", cache_dir: \"{root / 'cache'}\"}}\n"
            f"general_settings: {{master_key: {MASTER}}}\n"
        )
        gateway = _start_gateway(config, root)
        started.append(gateway)
        url = f"http://{gateway.wait_for_address()}"
        wait_until(lambda: metric(url, "pointwork_cluster_redis_up") == 1.0, "the gateway reaches Redis", within=20)
        wait_until(lambda: _pareto_winner(url), "the pareto walk's first verdict", within=20)
        yield SimpleNamespace(url=url, gateway=gateway, config=root / "config.yaml", alpha=alpha)
    finally:
        for process in reversed(started):
            process.stop()
        redis.kill()


def _call(url: str, path: str, body: dict | None = None, key: str | None = MASTER):
    """(status, JSON) of one call to the gateway."""
    headers = {"content-type": "application/json"}
    if key:
        headers["authorization"] = f"Bearer {key}"
    request = urllib.request.Request(url + path, data=None if body is None else json.dumps(body).encode(),
                                     headers=headers, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def _pareto_winner(url: str) -> bool:
    body = {"model": PARETO_MODEL, "messages": [{"role": "user", "content": "hi"}]}
    status, answer = _call(url, "/v1/route", body)
    return status == 200 and bool((answer.get("pareto") or {}).get("telemetry", {}) or {}) and bool(
        answer["pareto"]["telemetry"].get("winner"))


def _deployments(url: str) -> dict[str, dict]:
    """Every deployment of /ui/api/live by id."""
    _, live = _call(url, "/ui/api/live")
    return {d["id"]: d for g in live["groups"] for d in g["deployments"]}


def _client(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{url}/v1", api_key=MASTER, max_retries=0)


def _ask(url: str, model: str = "chat"):
    """One chat request; the raw response (headers) of the SDK."""
    return _client(url).chat.completions.with_raw_response.create(
        model=model, messages=[{"role": "user", "content": "Say hello."}], max_tokens=8)


def _cool_down_broken(url: str) -> None:
    """Requests to `flaky` until its broken deployment was picked once and cools down (the
    retry serves each request from flaky-alpha)."""
    def cooling():
        _ask(url, "flaky")
        return _deployments(url)["flaky-broken"]["state"] == "cooling_down"
    wait_until(cooling, "flaky-broken cooling down", within=20)


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        browser = ui_browser.launch(playwright)
        yield browser
        browser.close()


@pytest.fixture
def browsing(browser):
    """A fresh context; at the end, no foreign request and no console error."""
    b = ui_browser.browse(browser)
    yield b
    try:
        b.check()
    finally:
        b.close()


def _sign_in(page, url: str, key: str = MASTER) -> None:
    page.goto(f"{url}/ui")
    page.locator("#key").fill(key)
    page.locator("#login-form button[type=submit]").click()


def _signed_in(page, url: str):
    _sign_in(page, url)
    expect(page.locator("#app")).to_be_visible()
    # Watching: the gateway notes requests from the poll after the first one on.
    page.wait_for_function("() => window.PW.live && window.PW.live.watching === true")
    return page


def _confirm(page) -> None:
    expect(page.locator("#confirm")).to_be_visible()
    page.locator("#confirm-ok").click()
    expect(page.locator("#confirm")).to_be_hidden()


def _row(page, deployment: str):
    return page.locator(f'tr[data-deployment="{deployment}"]')


# --- the tests ---------------------------------------------------------------------------------


def test_the_page_lists_every_group_and_deployment(gw, browsing):
    url = gw.url
    page = _signed_in(browsing.page, url)
    status, info = _call(url, "/model/info")
    assert status == 200
    expected: dict[str, set[str]] = {}
    for model in info["data"]:
        expected.setdefault(model["model_name"], set()).add(model["model_info"]["id"])
    assert {"chat", "flaky", PARETO_MODEL} <= set(expected)
    for group, ids in expected.items():
        section = page.locator(f'section[data-group="{group}"]')
        expect(section).to_be_visible()
        for ident in ids:
            expect(section.locator(f'tr[data-deployment="{ident}"]')).to_be_visible()
    expect(_row(page, "chat-alpha").locator("td").nth(1)).to_have_text("openai")
    expect(_row(page, "chat-alpha")).to_contain_text("gpt-4o-mini")
    # The key is in this tab's session storage, nowhere else.
    assert page.evaluate("sessionStorage.getItem('pointwork-key')") == MASTER
    assert MASTER not in page.url and browsing.context.cookies() == []


def test_a_failing_deployment_shows_cooling_down_with_its_cause(gw, browsing):
    url = gw.url
    page = _signed_in(browsing.page, url)
    _cool_down_broken(url)
    row = _row(page, "flaky-broken")
    expect(row.locator(".badge")).to_have_text("cooling down")
    expect(row.locator(".cause")).to_contain_text("500")
    expect(row.locator(".left")).to_have_text(re.compile(r"^\d+ s left$"))
    first = int(row.locator(".left").inner_text().split()[0])
    assert 3500 < first <= 3600
    # The seconds count down between two reads, with no reload.
    expect(row.locator(".left")).not_to_have_text(f"{first} s left", timeout=5_000)
    assert int(row.locator(".left").inner_text().split()[0]) < first
    expect(_row(page, "flaky-alpha").locator(".badge")).to_have_text("healthy")


def test_the_page_follows_more_traffic_without_a_reload(gw, browsing):
    url = gw.url
    page = _signed_in(browsing.page, url)
    count = """(ids) => ids.reduce((sum, id) => sum + Number(document.querySelector(
        `tr[data-deployment="${id}"] td[data-label="Req/min"]`).textContent.replace(/\\D/g, '') || 0), 0)"""
    before = page.evaluate(count, GROUPS["chat"])
    for _ in range(20):
        assert _ask(url).parse().choices
    page.wait_for_function(f"(ids) => ({count})(ids) >= {before + 20}", arg=GROUPS["chat"], timeout=10_000)
    assert page.evaluate("window.__loads") == 1, "the page was never reloaded"


def test_the_page_polls_at_most_once_a_second_and_not_while_hidden(gw, browsing):
    url = gw.url
    page = browsing.page
    polls: list[float] = []
    page.on("request", lambda r: polls.append(time.monotonic()) if "/ui/api/live" in r.url else None)
    _signed_in(page, url)
    for _ in range(3):
        with page.expect_request(lambda r: "/ui/api/live" in r.url, timeout=5_000):
            pass
    gaps = [b - a for a, b in zip(polls, polls[1:])]
    assert len(gaps) >= 3 and min(gaps) >= 0.95, gaps

    hide = """(hidden) => { Object.defineProperty(document, 'hidden', {value: hidden, configurable: true});
                            document.dispatchEvent(new Event('visibilitychange')); }"""
    page.evaluate(hide, True)
    hidden_at = len(polls)
    page.wait_for_timeout(2_500)  # a window to count in: a hidden tab asks nothing
    assert len(polls) - hidden_at <= 1, "at most the poll already on its way"
    with page.expect_request(lambda r: "/ui/api/live" in r.url, timeout=2_000):
        page.evaluate(hide, False)


def test_a_decision_shows_its_candidates_and_reasons(gw, browsing):
    url = gw.url
    page = _signed_in(browsing.page, url)
    _cool_down_broken(url)
    raw = _ask(url, "flaky")
    route = raw.headers["x-pointwork-route"]
    assert raw.headers["x-pointwork-deployment"] == "flaky-alpha"
    page.locator('[role="tab"][data-view="decisions"]').click()
    row = page.locator("#view-decisions tbody tr").filter(has_text=route).first
    expect(row).to_be_visible()
    expect(row.locator(".winner")).to_have_text("flaky-alpha")
    expect(row.locator(".reason")).to_have_text(route)
    expect(row.locator(".drops")).to_contain_text("flaky-broken cooldown")
    row.click()
    dialog = page.locator("#detail")
    expect(dialog).to_be_visible()
    candidates = dialog.locator("table.candidates tbody tr")
    expect(candidates).to_have_count(2)
    broken = candidates.filter(has_text="flaky-broken")
    expect(broken).to_contain_text("removed")
    expect(broken).to_contain_text("cooldown")
    expect(candidates.filter(has_text="flaky-alpha")).to_contain_text("winner")
    expect(dialog.locator("code").first).to_have_text(route)
    seq = row.get_attribute("data-seq")
    raw_json = json.loads(dialog.locator("details.raw pre").text_content())
    assert raw_json["seq"] == int(seq) and raw_json["winner"] == "flaky-alpha"
    page.locator("#detail-close").click()
    expect(dialog).to_be_hidden()


def test_block_and_unblock_through_the_page(gw, browsing):
    url, gateway = gw.url, gw.gateway
    page = _signed_in(browsing.page, url)
    row = _row(page, "chat-alpha")
    row.locator(".act-block").click()
    expect(page.locator("#confirm-text")).to_contain_text("Block chat-alpha")
    _confirm(page)
    expect(row.locator(".badge")).to_have_text("blocked (by admin)")
    expect(row.locator(".act-block")).to_have_text("Unblock")
    served = {_ask(url).headers["x-pointwork-deployment"] for _ in range(10)}
    assert served == {"chat-beta"}, "a blocked deployment gets no request"

    row.locator(".act-block").click()
    _confirm(page)
    expect(row.locator(".badge")).to_have_text("healthy")
    wait_until(lambda: _ask(url).headers["x-pointwork-deployment"] == "chat-alpha",
               "a request reaches chat-alpha again", within=10)
    for word in ("blocked", "unblocked"):
        wait_until(lambda: f"deployment chat-alpha {word} by admin" in "".join(gateway.stderr_text),
                   f"the gateway logs who {word} chat-alpha")


def test_end_cooldown_through_the_page(gw, browsing):
    url = gw.url
    page = _signed_in(browsing.page, url)
    _cool_down_broken(url)
    row = _row(page, "flaky-broken")
    expect(row.locator(".badge")).to_have_text("cooling down")
    row.locator(".act-end").click()
    expect(page.locator("#confirm-text")).to_contain_text("End the cooldown of flaky-broken")
    _confirm(page)
    expect(row.locator(".badge")).to_have_text("healthy")
    expect(row.locator(".act-end")).to_be_hidden()
    assert _deployments(url)["flaky-broken"]["cooldown"] is None


def test_reload_through_the_page(gw, browsing):
    url = gw.url
    page = _signed_in(browsing.page, url)
    browsing.allow_console(r"status of 400")  # the refused reload
    original = gw.config.read_text()
    try:
        gw.config.write_text(original.replace("model_list:\n", "model_list:\n"
                                              + _deployment("chat", "chat-gamma", "openai/gpt-4o-mini", gw.alpha), 1))
        page.locator("#reload").click()
        expect(page.locator("#confirm-text")).to_contain_text("Reload the config")
        _confirm(page)
        expect(page.locator("#notice")).to_contain_text("Config reloaded")
        expect(page.locator("#detail h2")).to_have_text("Reload report")
        expect(page.locator("#detail pre")).to_contain_text('"chat-gamma"')
        page.locator("#detail-close").click()
        # The new deployment appears without a reload of the page.
        expect(_row(page, "chat-gamma")).to_be_visible()

        gw.config.write_text(original.replace("cooldown_time: 3600", "cooldown_time: soon"))
        page.locator("#reload").click()
        _confirm(page)
        expect(page.locator("#notice")).to_contain_text("Reload refused")
        expect(page.locator("#notice")).to_contain_text("cooldown_time")
        expect(_row(page, "chat-gamma")).to_be_visible()  # the running config keeps serving
        page.locator("#detail-close").click()
    finally:
        gw.config.write_text(original)
        assert _call(url, "/admin/reload", {})[0] == 200
    expect(_row(page, "chat-gamma")).to_have_count(0)
    assert page.evaluate("window.__loads") == 1


def test_nothing_without_the_key(gw, browsing):
    url = gw.url
    page = browsing.page
    browsing.allow_console(r"status of 401")  # the page's own probe, and the wrong key
    page.goto(f"{url}/ui")
    expect(page.locator("#login")).to_be_visible()
    expect(page.locator("#app")).to_be_hidden()
    names = ["chat-alpha", "chat-beta", "flaky-broken", "or-wildcard", PARETO_MODEL, "gpt-4o-mini"]

    def nothing_shown():
        html = page.content()
        assert not [n for n in names if n in html], "the config leaked into the page"

    nothing_shown()
    assert page.request.get(f"{url}/ui/api/live").status == 401
    assert page.request.get(f"{url}/ui/api/decision/1").status == 401
    assert page.request.get(f"{url}/ui/api/live", headers={"authorization": "Bearer sk-wrong"}).status == 401

    _sign_in(page, url, "sk-wrong")
    expect(page.locator("#login-error")).to_be_visible()
    expect(page.locator("#login-error")).to_contain_text("refused")
    expect(page.locator("#app")).to_be_hidden()
    nothing_shown()
    assert page.evaluate("sessionStorage.length") == 0

    _sign_in(page, url)
    expect(_row(page, "chat-alpha")).to_be_visible()
    page.locator("#signout").click()
    expect(page.locator("#login")).to_be_visible()
    nothing_shown()
    assert page.evaluate("sessionStorage.length") == 0


def test_screenshots_of_every_view(gw, browser, browsing):
    """docs/ui/*.png at 1280×800, and a phone in the dark: a cooling deployment, traffic, a
    pareto frontier and complexity counts to show."""
    url = gw.url
    page = _signed_in(browsing.page, url)
    _cool_down_broken(url)
    for i in range(24):
        _ask(url, ["chat", "flaky", "auto", PARETO_MODEL][i % 4])
    page.wait_for_function("() => window.PW.decisions.length >= 24")
    expect(_row(page, "flaky-broken").locator(".badge")).to_have_text("cooling down")
    ui_browser.screenshot(page, "deployments")
    page.locator('[role="tab"][data-view="decisions"]').click()
    expect(page.locator("#view-decisions tbody tr").first).to_be_visible()
    ui_browser.screenshot(page, "decisions")
    page.locator("#view-decisions tbody tr").filter(has_text="flaky-broken").first.click()
    expect(page.locator("#detail table.candidates")).to_be_visible()
    ui_browser.screenshot(page, "decision-detail")
    page.locator("#detail-close").click()
    # A complexity-routed decision says what the router did before the pick.
    page.locator("#view-decisions tbody tr").filter(has_text="auto-router SIMPLE").first.click()
    before = page.locator("#detail dt").filter(has_text="Before the pick").locator("xpath=following-sibling::dd[1]")
    expect(before).to_contain_text("auto-router SIMPLE")
    assert "[object " not in page.locator("#detail").inner_text()
    page.locator("#detail-close").click()
    page.locator('[role="tab"][data-view="routers"]').click()
    rule = page.locator("section.rule").first
    expect(rule.locator(".uplot canvas")).to_be_visible()
    expect(rule.locator("table.pareto tbody tr")).to_have_count(4)
    expect(rule.locator(".winner")).to_have_text("b/fp8")
    expect(page.locator('[data-card="complexity"] table')).to_contain_text("SIMPLE")
    ui_browser.screenshot(page, "routers")
    page.locator('[role="tab"][data-view="cluster"]').click()
    expect(page.locator('[data-card="Gateway"]')).to_contain_text("simple-shuffle")
    expect(page.locator('[data-card="Redis and instances"]')).to_contain_text("Redis up")
    expect(page.locator('[data-card="Redis and instances"] table')).to_contain_text("pw-ui")
    ui_browser.screenshot(page, "cluster")

    phone = ui_browser.browse(browser, viewport=ui_browser.PHONE, color_scheme="dark")
    try:
        _signed_in(phone.page, url)
        expect(_row(phone.page, "flaky-broken").locator(".badge")).to_have_text("cooling down")
        phone.page.locator('section[data-group="flaky"]').scroll_into_view_if_needed()
        background = phone.page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(17, 17, 17)", "dark in a dark room"
        ui_browser.screenshot(phone.page, "phone-dark")
        phone.check()
    finally:
        phone.close()
    for shot in ui_browser.SHOTS.glob("*.png"):
        assert shot.stat().st_size < 250_000, f"{shot} is large"


# --- keys and teams, with a real PostgreSQL ---------------------------------------------------


@pytest.fixture(scope="module")
def db_gw(tmp_path_factory):
    from test_database import Postgres

    started: list[Process] = []
    pg = Postgres()
    try:
        mock = _start_mock("db")
        started.append(mock.process)
        config = ("model_list:\n" + _deployment("chat", "chat-db", "openai/gpt-4o-mini", mock)
                  + f"general_settings: {{master_key: {MASTER}, database_url: \"{pg.url}\"}}\n")
        gateway = _start_gateway(config, tmp_path_factory.mktemp("ui-db"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}"
    finally:
        for process in reversed(started):
            process.stop()
        pg.stop()


def test_keys_and_teams_with_a_database(db_gw, browsing):
    url = db_gw
    status, _ = _call(url, "/team/new", {"team_alias": "research", "max_budget": 50})
    assert status == 200
    status, _ = _call(url, "/key/generate", {"key_alias": "batch-jobs", "max_budget": 20, "rpm_limit": 60})
    assert status == 200
    page = _signed_in(browsing.page, url)
    tab = page.locator('[role="tab"][data-view="keys"]')
    expect(tab).to_be_visible()
    tab.click()
    keys = page.locator("table.keys tbody tr")
    expect(keys.filter(has_text="batch-jobs")).to_be_visible()
    expect(page.locator("table.teams")).to_contain_text("research")

    page.locator("#key-form input[name=alias]").fill("made-in-the-page")
    page.locator("#key-form input[name=budget]").fill("5")
    page.locator("#key-form button[type=submit]").click()
    _confirm(page)
    secret = page.locator(".new-key .secret")
    expect(secret).to_have_text(re.compile(r"^sk-\S+$"))
    key = secret.inner_text()
    made = keys.filter(has_text="made-in-the-page")
    expect(made).to_be_visible()
    expect(made).to_contain_text("$5.00")
    assert key not in made.inner_text(), "the list never shows the key itself"
    ui_browser.screenshot(page, "keys")
    assert _ask(url).parse().choices  # the master key
    works = openai.OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0)
    assert works.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hi"}]).choices

    page.locator('[role="tab"][data-view="deployments"]').click()
    page.locator('[role="tab"][data-view="keys"]').click()
    expect(made).to_be_visible()
    expect(page.locator(".new-key")).to_have_count(0)  # shown once: gone after leaving the view
    made.locator(".act-revoke").click()
    expect(page.locator("#confirm-text")).to_contain_text("made-in-the-page")
    _confirm(page)
    expect(made).to_have_count(0)
    expect(page.locator("#notice")).to_contain_text("revoked")
    with pytest.raises(openai.AuthenticationError):
        works.chat.completions.create(model="chat", messages=[{"role": "user", "content": "hi"}])

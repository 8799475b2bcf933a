"""A hit is free, as in LiteLLM: a database key's request answered from the response cache writes
a `LiteLLM_SpendLogs` row with `cache_hit` 'True' and spend 0 (the tokens of the first answer),
and charges the key nothing; the miss before it is charged as any request. Real PostgreSQL with
LiteLLM's schema (test_database.py's `Postgres`), the official `openai` SDK."""

from __future__ import annotations

import time

import openai
import pytest

from conftest import _start_gateway, _start_mock
from test_database import MASTER, PRICED, Postgres, _manage


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    started: list = []
    pg = Postgres()
    try:
        mock = _start_mock("cache-spend")
        started.append(mock.process)
        config = (
            "model_list:\n"
            "  - model_name: gpt-4o-mini\n"
            f"    litellm_params: {{model: openai/gpt-4o-mini, api_base: \"{mock.api_base}\", api_key: sk-upstream}}\n"
            f"    model_info: {{id: gpt-1, {PRICED}}}\n"
            f"general_settings:\n  master_key: {MASTER}\n  database_url: {pg.url}\n"
            "litellm_settings:\n  cache: true\n  cache_params: {type: local}\n"
        )
        gateway = _start_gateway(config, tmp_path_factory.mktemp("gateway"))
        started.append(gateway)
        yield f"http://{gateway.wait_for_address()}", pg
    finally:
        for process in reversed(started):
            process.stop()
        pg.stop()


def test_a_hit_writes_a_free_spend_row_and_charges_nothing(served):
    url, pg = served
    generated = _manage(url, "/key/generate", {"models": ["gpt-4o-mini"], "key_alias": "cached"})
    client = openai.OpenAI(api_key=generated["key"], base_url=f"{url}/v1", max_retries=0)
    ask = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "the same question"}]}
    first = client.chat.completions.with_raw_response.create(**ask)
    again = client.chat.completions.with_raw_response.create(**ask)
    assert first.headers["x-pointwork-cache"] == "miss" and again.headers["x-pointwork-cache"] == "hit"
    assert again.parse().id == first.parse().id

    token = generated["token"]
    rows_sql = (
        "SELECT cache_hit, spend, prompt_tokens, completion_tokens, model_group FROM \"LiteLLM_SpendLogs\" "
        f"WHERE api_key = '{token}' ORDER BY \"startTime\""
    )
    deadline = time.monotonic() + 10
    while len(rows := [r.split("|") for r in pg.psql("litellm", rows_sql).splitlines()]) < 2:
        assert time.monotonic() < deadline, "two spend rows within 10 s"
        time.sleep(0.05)
    (miss_hit, miss_spend, miss_in, miss_out, _), (hit, hit_spend, hit_in, hit_out, group) = rows
    usage = first.parse().usage
    assert (miss_hit, hit) == ("False", "True")
    assert float(miss_spend) > 0 and float(hit_spend) == 0
    assert (int(hit_in), int(hit_out)) == (int(miss_in), int(miss_out)) == (usage.prompt_tokens, usage.completion_tokens)
    assert group == "gpt-4o-mini"
    key_spend = float(pg.psql("litellm", f"SELECT spend FROM \"LiteLLM_VerificationToken\" WHERE token = '{token}'"))
    assert key_spend == pytest.approx(float(miss_spend))

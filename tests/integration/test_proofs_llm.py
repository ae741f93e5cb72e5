"""The LLM client against a real local HTTP server speaking the OpenAI protocol
(tests/support/llm_server.py): the Authorization header, retries (5xx and 429 retried, other
4xx not) and code fences around the JSON answer. Issue 19, item 8 (e)."""

from __future__ import annotations

import time

import pytest

from memcli.adapters.llm import LLMClient, LLMError, client_from
from memcli.store.config import LLMSettings
from tests.support.llm_server import FakeLLM


@pytest.fixture(scope="module")
def server():  # noqa: ANN201 - one server for the module: each shutdown polls for 0.5 s
    with FakeLLM() as running:
        yield running


@pytest.fixture
def llm(server: FakeLLM) -> FakeLLM:
    server.answer, server.content, server.fail_with, server.mode = {"ok": True}, None, [], "ok"
    server.requests.clear()
    return server


def client(server: FakeLLM, retries: int = 2, key: str | None = None) -> LLMClient:
    return LLMClient(server.url, "test-model", key, timeout=5.0, retries=retries)


def test_api_key_goes_in_a_bearer_authorization_header(llm: FakeLLM) -> None:
    settings = LLMSettings(
        provider="openai", base_url=llm.url, model="test-model", api_key_env="MY_LLM_KEY"
    )
    configured = client_from(settings, env={"MY_LLM_KEY": "sk-test-123"})
    assert configured is not None
    assert configured.chat_json("system", "user") == {"ok": True}
    request = llm.requests[-1]
    assert request["auth"] == "Bearer sk-test-123"
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["model"] == "test-model"
    assert request["body"]["messages"][1] == {"role": "user", "content": "user"}
    keyless = client_from(settings, env={})  # no key in the environment: no header at all
    assert keyless is not None and keyless.chat_json("s", "u") == {"ok": True}
    assert llm.requests[-1]["auth"] is None


def test_server_errors_are_retried_until_an_answer(llm: FakeLLM) -> None:
    llm.fail_with = [500, 429]
    assert client(llm, retries=2).chat_json("s", "u") == {"ok": True}
    assert len(llm.requests) == 3  # two failures, then the answer


def test_retries_run_out_with_an_error(llm: FakeLLM) -> None:
    llm.fail_with = [503, 503]
    with pytest.raises(LLMError, match="HTTP 503"):
        client(llm, retries=1).chat_json("s", "u")
    assert len(llm.requests) == 2  # the first try and one retry, no more


def test_client_errors_are_not_retried(llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    llm.fail_with = [401]
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)  # the client's backoff
    with pytest.raises(LLMError, match="HTTP 401"):
        client(llm, retries=2).chat_json("s", "u")
    assert len(llm.requests) == 1
    assert slept == []  # no backoff either


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"ok": true}\n```',
        '```\n{"ok": true}\n```',
        '  ```json\n{"ok": true}```  ',
        '{"ok": true}',
    ],
)
def test_code_fences_around_the_answer_are_stripped(llm: FakeLLM, content: str) -> None:
    llm.content = content
    assert client(llm).chat_json("s", "u") == {"ok": True}


def test_an_answer_that_is_not_json_is_an_error_not_retried(llm: FakeLLM) -> None:
    llm.content = "```json\nsure, here you go\n```"
    with pytest.raises(LLMError, match="not JSON"):
        client(llm).chat_json("s", "u")
    assert len(llm.requests) == 1

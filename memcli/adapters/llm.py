"""The optional LLM: OpenAI-compatible chat completions with JSON answers (DESIGN §10).

Standard library HTTP, a timeout per request, retries with backoff on network errors
and 5xx; a 4xx, an exhausted retry budget or an answer that is not the JSON asked for
raise LLMError, and callers write nothing in that case.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memcli.core.errors import ConfigError, MemcliError
from memcli.store.config import LLMSettings


class LLMError(MemcliError):
    """The LLM could not be reached or gave an unusable answer; nothing was changed."""


@dataclass(frozen=True)
class LLMClient:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 30.0
    retries: int = 2

    def chat_json(self, system: str, user: str) -> Any:
        """Ask for a JSON object; returns it parsed."""
        body = json.dumps(
            {
                "model": self.model,
                "temperature": 0,
                "response_format": {"type": "json_object"},
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
            }
        ).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = self.base_url.rstrip("/") + "/chat/completions"
        last = "no attempt"
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(min(2.0, 0.2 * 2 ** (attempt - 1)))
            request = urllib.request.Request(url, data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    payload = json.loads(response.read().decode("utf-8"))
                return _answer_json(payload)
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code} from {url}"
                if exc.code < 500 and exc.code != 429:
                    break
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                last = f"cannot reach {url} ({getattr(exc, 'reason', exc)})"
            except ValueError:
                last = f"{url} did not answer with JSON"
        raise LLMError(
            f"the LLM failed: {last}; nothing was changed",
            hint='check [llm] base_url/model in memcli.toml, or set provider = "none"',
        )


def _answer_json(payload: Any) -> Any:
    try:
        content = payload["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise LLMError(
            "the LLM answer has no choices[0].message.content; nothing was changed"
        ) from None
    text = str(content).strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text)
    except ValueError:
        raise LLMError(f"the LLM answer is not JSON ({text[:60]!r}); nothing was changed") from None


def client_from(settings: LLMSettings, env: Mapping[str, str] | None = None) -> LLMClient | None:
    """The configured client, or None when provider = "none"."""
    if settings.provider == "none":
        return None
    if settings.provider != "openai":
        raise ConfigError(
            f"unknown llm provider {settings.provider!r}", hint='use "none" or "openai"'
        )
    if not settings.base_url or not settings.model:
        raise ConfigError('[llm] provider = "openai" needs base_url and model')
    env = os.environ if env is None else env
    return LLMClient(
        settings.base_url,
        settings.model,
        env.get(settings.api_key_env) or None,
        settings.timeout,
        settings.retries,
    )

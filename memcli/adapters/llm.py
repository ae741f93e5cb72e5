"""The optional LLM, asked for JSON answers (docs/configuration.md), from one of ([llm] provider):

- `openai`: an OpenAI-compatible chat-completions endpoint (`base_url`, `model`, the key
  in the variable `api_key_env`): OpenAI, DeepSeek, Qwen, vLLM…;
- `local`: a server on this machine speaking the same protocol with no key (Ollama's
  `http://127.0.0.1:11434/v1`, the default, or llama.cpp's `llama-server`);
- `claude-cli`: the Claude Code a person already runs, as `claude -p --output-format
  json --max-turns 1` (the prompt on stdin; it prints one JSON object whose `result` is
  the answer);
- `codex-cli`: Codex, as `codex exec --json --sandbox read-only --skip-git-repo-check -`
  (the prompt on stdin; it prints JSONL events, the answer is the text of the last
  `item.completed` agent message, `turn.failed` / `error` events are failures).

`command` replaces the executable of a CLI provider (`"/opt/bin/claude"`, `"npx codex"`;
a relative path is taken from the workspace, and the script it names is part of the
workspace's approval: memcli.store.trust.sealed). The provider, the command, the model
and the timeout are trusted-only settings (memcli.store.trust): a cloned workspace
cannot make memcli run a program, pass it an argument or send memory somewhere. A model
shaped like an option (`--dangerously-skip-permissions`) is refused whoever set it, and
a CLI runs in a new empty directory, never the workspace's (where a clone's own agent
settings, `.claude/` or `AGENTS.md`, would apply).

Every prompt is redacted first (memcli.core.credentials.redact): no prompt carries a
credential, whether an entry allowed with `secret=ok` or a password said in a
transcript. HTTP has a timeout per request and retries with backoff on network errors
and 5xx; a 4xx, an exhausted retry budget, a CLI that fails or is missing, or an answer
that is not the JSON asked for raise LLMError, and callers write nothing in that case.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memcli.core.credentials import redact
from memcli.core.errors import ConfigError, MemcliError
from memcli.store.config import LLMSettings
from memcli.store.config_rules import LLM_PROVIDERS

#: the local server when [llm] base_url is not set (Ollama's OpenAI-compatible API)
LOCAL_BASE_URL = "http://127.0.0.1:11434/v1"


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
        system, user = redact(system), redact(user)
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
    return _json_of(str(content))


def _json_of(content: str) -> Any:
    """The JSON object a model's answer holds (a ```json fence around it is fine)."""
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").removeprefix("json").strip()
    try:
        return json.loads(text)
    except ValueError:
        raise LLMError(f"the LLM answer is not JSON ({text[:60]!r}); nothing was changed") from None


@dataclass(frozen=True)
class CLIClient:
    """An agent CLI run once per question (`claude -p`, `codex exec`), the prompt on its
    stdin (never on its command line, which other users can read in `ps`)."""

    provider: str  # claude-cli | codex-cli
    command: tuple[str, ...]
    model: str = ""
    timeout: float = 120.0

    def argv(self) -> list[str]:
        """The command line run: the executable, then the documented flags."""
        model = ["--model", self.model] if self.model else []
        if self.provider == "claude-cli":
            # one turn: an answer, no tool use (a run that wants a tool ends in an error)
            return [*self.command, "-p", "--output-format", "json", "--max-turns", "1", *model]
        flags = ["--json", "--sandbox", "read-only", "--skip-git-repo-check"]
        return [*self.command, "exec", *flags, *model, "-"]

    def chat_json(self, system: str, user: str) -> Any:
        """Ask for a JSON object; returns it parsed."""
        prompt = (
            f"{redact(system)}\n\nAnswer with one JSON object and nothing else.\n\n{redact(user)}\n"
        )
        argv = self.argv()
        name = argv[0]
        try:
            with tempfile.TemporaryDirectory(prefix="memcli-llm-") as neutral:
                done = subprocess.run(
                    argv,
                    input=prompt.encode("utf-8"),
                    capture_output=True,
                    timeout=self.timeout,
                    check=False,
                    cwd=neutral,
                )
        except FileNotFoundError:
            raise LLMError(
                f"{name}: not found on PATH ([llm] provider = {self.provider!r}); "
                "nothing was changed",
                hint='install it, set [llm] command to its path, or set provider = "none"',
            ) from None
        except subprocess.TimeoutExpired:
            raise LLMError(
                f"{name} gave no answer within {self.timeout:g} s; nothing was changed",
                hint="raise [llm] timeout",
            ) from None
        except OSError as exc:
            raise LLMError(f"{name}: cannot run it ({exc.strerror}); nothing was changed") from None
        out = done.stdout.decode("utf-8", "replace")
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            why = lines[-1][:200] if lines else f"exit status {done.returncode}"
            raise LLMError(f"{name} failed: {why}; nothing was changed")
        text = claude_result(out) if self.provider == "claude-cli" else codex_message(out)
        return _json_of(text)


def claude_result(out: str) -> str:
    """The answer in `claude -p --output-format json`'s output: the `result` of its one
    JSON object (`is_error` true, or no text: LLMError)."""
    try:
        payload = json.loads(out)
    except ValueError:
        raise LLMError("claude did not print a JSON object; nothing was changed") from None
    if not isinstance(payload, dict):
        raise LLMError("claude did not print a JSON object; nothing was changed")
    result = payload.get("result")
    if payload.get("is_error") or not isinstance(result, str):
        why = result if isinstance(result, str) and result else payload.get("subtype", "no result")
        raise LLMError(f"claude failed: {str(why)[:200]}; nothing was changed")
    return result


def codex_message(out: str) -> str:
    """The answer in `codex exec --json`'s JSONL events: the text of the last completed
    agent message (`turn.failed` or `error`: LLMError)."""
    answer: str | None = None
    for line in out.splitlines():
        if not line.strip().startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "turn.failed":
            error = event.get("error")
            why = error.get("message") if isinstance(error, dict) else error
            raise LLMError(f"codex failed: {str(why)[:200]}; nothing was changed")
        if kind == "error":
            raise LLMError(f"codex failed: {str(event.get('message'))[:200]}; nothing was changed")
        item = event.get("item") if kind == "item.completed" else None
        if isinstance(item, dict) and (item.get("type") or item.get("item_type")) in (
            "agent_message",
            "assistant_message",
        ):
            answer = str(item.get("text", ""))
    if answer is None:
        raise LLMError("codex printed no agent message; nothing was changed")
    return answer


def _cli_model(model: str) -> str:
    """`model` as an agent CLI's `--model` argument; ConfigError for one that would be
    read as an option or is not one word."""
    if model.startswith("-") or any(c.isspace() or not c.isprintable() for c in model):
        raise ConfigError(
            f"[llm] model {model!r} is not a model name: an agent CLI would read it as an "
            "option or several arguments",
            hint='give the model\'s name, e.g. model = "sonnet"',
        )
    return model


def _from_workspace(command: tuple[str, ...], root: Path | None) -> tuple[str, ...]:
    """`command` with a relative program path taken from the workspace `root` (never
    from the directory memcli happens to run in)."""
    program = command[0]
    if "/" not in program or os.path.isabs(os.path.expanduser(program)):
        return command
    if root is None:
        raise ConfigError(
            f"[llm] command {program!r} is a relative path and there is no workspace to "
            "take it from",
            hint="give an absolute path or a program on PATH",
        )
    return (os.path.join(root, program), *command[1:])


def client_from(
    settings: LLMSettings, env: Mapping[str, str] | None = None, root: Path | None = None
) -> LLMClient | CLIClient | None:
    """The configured client, or None when provider = "none"; a CLI provider's relative
    `command` is taken from the workspace `root` (ConfigError without one)."""
    provider = settings.provider
    if provider == "none":
        return None
    if provider not in LLM_PROVIDERS:
        raise ConfigError(
            f"unknown llm provider {provider!r}", hint=f"use one of {', '.join(LLM_PROVIDERS)}"
        )
    if provider in ("claude-cli", "codex-cli"):
        try:
            command = tuple(shlex.split(settings.command))
        except ValueError as exc:
            raise ConfigError(f"[llm] command {settings.command!r}: {exc}") from None
        default = ("claude",) if provider == "claude-cli" else ("codex",)
        command = _from_workspace(command, root) if command else default
        return CLIClient(provider, command, _cli_model(settings.model), settings.timeout)
    if provider == "local":
        if not settings.model:
            raise ConfigError(
                '[llm] provider = "local" needs model', hint='e.g. model = "llama3.2"'
            )
        return LLMClient(
            settings.base_url or LOCAL_BASE_URL,
            settings.model,
            None,
            settings.timeout,
            settings.retries,
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

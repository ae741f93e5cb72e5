"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for tests: it answers
deterministically, or with garbage, a 500 or too slowly, as the test sets `mode`;
`fail_with` lists HTTP statuses to answer the next requests with first, and `content`
(when set) is sent as the message content verbatim instead of `answer` as JSON."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeLLM:
    def __init__(self) -> None:
        self.mode = "ok"
        self.answer: Any = {}
        self.content: str | None = None
        self.fail_with: list[int] = []
        self.requests: list[dict] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                auth = self.headers.get("Authorization")
                owner.requests.append({"path": self.path, "body": body, "auth": auth})
                failure = owner.fail_with.pop(0) if owner.fail_with else None
                if owner.mode == "500" or failure is not None:
                    self.send_response(failure or 500)
                    self.end_headers()
                    return
                if owner.mode == "slow":
                    time.sleep(1.5)
                content = (
                    "this is not json" if owner.mode == "garbage" else json.dumps(owner.answer)
                )
                if owner.content is not None:
                    content = owner.content
                reply = {"choices": [{"message": {"role": "assistant", "content": content}}]}
                data = json.dumps(reply).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (the "slow" mode)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def toml(self) -> str:
        return (
            f'[llm]\nprovider = "openai"\nbase_url = "{self.url}"\nmodel = "test-model"\n'
            "timeout = 0.5\nretries = 1\n"
        )

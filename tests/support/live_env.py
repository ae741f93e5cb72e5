"""The environment of the processes a test starts, read when they start.

Built once at import, it was the developer's own (HOME, XDG_CONFIG_HOME, XDG_DATA_HOME,
the real per-user memory folder and user cache): modules of tests/support are imported
at collection, before each test isolates its environment (tests/support/env.isolate).
A LiveEnv reads os.environ each time it is used, so a process started during a test gets
that test's isolated folders."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class LiveEnv(Mapping[str, str]):
    """os.environ as it is now, offline, without MEMCLI_ settings, with memcli
    importable from the checkout and no watcher started behind the test's back; `extra`
    on top."""

    def __init__(self, **extra: str) -> None:
        self.extra = extra

    def now(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCLI_")}
        env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONPATH=str(ROOT))
        env["MEMCLI_WATCH_AUTOSTART"] = "0"
        env.update(self.extra)
        return env

    def __getitem__(self, key: str) -> str:
        return self.now()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.now())

    def __len__(self) -> int:
        return len(self.now())

"""memcli: long-term memory for people and LLM agents, kept in plain Markdown.

Public API (imported lazily so that `import memcli` stays cheap):
`Memory`, `Layers` (a workspace and the layers it reads), `Entry`, `Hit`, `MemcliError`
and the other errors.
"""

from __future__ import annotations

import os as _os

# memcli works offline and sends nothing anywhere unless an LLM is configured: switch off
# what dependencies would report on their own, before any of them is imported. onnxruntime
# >= 1.29 sends usage events from its native code on Linux and macOS unless
# ORT_DISABLE_TELEMETRY is set; huggingface_hub honours HF_HUB_DISABLE_TELEMETRY and
# DO_NOT_TRACK, and would send a stored Hugging Face token with any hub request.
for _name in (
    "ORT_DISABLE_TELEMETRY",
    "HF_HUB_DISABLE_TELEMETRY",
    "DO_NOT_TRACK",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN",
):
    _os.environ.setdefault(_name, "1")

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (≈ 10 ms)

__all__ = ["Memory", "Layers", "Entry", "Hit", "MemcliError", "NotFoundError", "ValidationError"]

if TYPE_CHECKING:
    from typing import Any

    from memcli.core.errors import MemcliError, NotFoundError, ValidationError
    from memcli.core.models import Entry
    from memcli.core.version import VERSION as __version__  # noqa: F401 - public
    from memcli.logic.search import Hit
    from memcli.services.layers import Layers
    from memcli.services.memory import Memory

_WHERE = {
    "Memory": "memcli.services.memory",
    "Layers": "memcli.services.layers",
    "Entry": "memcli.core.models",
    "Hit": "memcli.logic.search",
    "MemcliError": "memcli.core.errors",
    "NotFoundError": "memcli.core.errors",
    "ValidationError": "memcli.core.errors",
}


def __getattr__(name: str) -> Any:
    if name == "__version__":  # the public version (on first use: a served command never asks)
        from memcli.core.version import VERSION

        return VERSION
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'memcli' has no attribute {name!r}")

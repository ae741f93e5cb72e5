"""Switching the embedding model (`memcli config set index.model NAME`): get the model
onto this machine when it is named on the Hugging Face hub and not here yet, prepare its
ONNX export (each step reported), and rebuild the index with it (docs/search.md,
Models).

The index records the model it was built with, so the next search after a switch would
rebuild it anyway; doing it here means the person waits once, with progress, at the
command that asked for it, rather than at a hook's time limit.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcli.core.errors import ConfigError

#: the steps a switch reports before the index is rebuilt (each of the model's own
#: preparation steps follows: memcli.index.onnx_embedder.STEPS)
FETCH = "getting the model from the Hugging Face hub"


def is_local(setting: str) -> bool:
    """The setting names a folder on this machine ("" is the bundled model)."""
    name = setting.strip()
    return not name or Path(name).expanduser().is_dir()


def fetch(setting: str, say: Callable[[str], None]) -> None:
    """Make sure the model `setting` names is on this machine: a folder is; a hub name
    already in the Hugging Face cache is; any other is downloaded now (the hub's own
    progress bars on stderr). A ConfigError names the model and what to do when it
    cannot be had (no network, HF_HUB_OFFLINE set, no such model)."""
    if is_local(setting):
        return
    from memcli.index.embedder import cached_model_dir

    if cached_model_dir(setting) is not None:
        return
    say(f"{FETCH}: {setting}")
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise ConfigError(
            f"the embedding model {setting!r} is not on this machine and HF_HUB_OFFLINE is "
            "set, so it cannot be downloaded",
            hint="unset HF_HUB_OFFLINE for this command, or set index.model to a local "
            "sentence-transformers folder",
        )
    try:
        from huggingface_hub import snapshot_download

        snapshot_download(repo_id=hub_name(setting))
    except Exception as exc:  # noqa: BLE001 - any download failure is the finding
        raise ConfigError(
            f"cannot download the embedding model {setting!r}: {exc}",
            hint="check the name (e.g. sentence-transformers/paraphrase-multilingual-"
            "MiniLM-L12-v2) and the network, or give a local folder",
        ) from None


def hub_name(setting: str) -> str:
    """The hub repository of a model name: `org/name` as given, a bare name under
    sentence-transformers/ (as sentence-transformers resolves it)."""
    name = setting.strip()
    return name if "/" in name else f"sentence-transformers/{name}"


def switch(
    mem: Any,
    steps: Callable[[int, int, str], None],
    say: Callable[[str], None],
    progress: Any = None,
) -> Any:
    """Fetch the model `mem`'s settings name (a Memory whose settings were read after
    the change; `say` tells of a download), prepare its ONNX export reporting `steps`,
    and rebuild the index with it (`progress` of the embedding); returns the index's
    SyncReport."""
    fetch(mem.settings.index.model, say)
    mem.runtime.prepare_model(steps)
    return mem.index(rebuild=True, progress=progress)

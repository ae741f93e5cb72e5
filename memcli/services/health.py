"""`memcli doctor`'s checks of what surrounds the files: the embedding model (and the
languages it reads) and its ONNX export, the index and the git merge driver (the
watcher's check is the daemon's: the CLI passes it in).

Each check says what it found and, where something is off, what to run. None of them
changes anything; `memcli.services.recovery.diagnose` checks the Markdown itself.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memcli.core.errors import MemcliError


@dataclass
class Check:
    name: str
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def config_check(settings: Any) -> Check:
    """Every value in a settings file fits its setting (memcli.store.config_rules)."""
    problems = tuple(getattr(settings, "problems", ()))
    if problems:
        return Check(
            "config",
            False,
            "; ".join(problems) + " (fix it, or `memcli config unset KEY`)",
        )
    return Check("config", True, "every setting has a value it accepts")


def model_check(model_setting: str) -> Check:
    """The embedding model is where it is expected (bundled, or the configured path)."""
    from memcli.index.onnx_embedder import model_source_dir

    try:
        source = model_source_dir(model_setting)
    except Exception as exc:  # noqa: BLE001 - any failure to locate it is the finding
        return Check("model", False, f"cannot locate the embedding model: {exc}")
    if model_setting.strip() and not source.exists():
        return Check(
            "model",
            False,
            f"{model_setting.strip()}: not on this machine ([index] model): "
            f"`memcli config set index.model {model_setting.strip()}` gets it",
        )
    name = model_setting.strip() or "bundled all-MiniLM-L6-v2"
    return Check("model", True, f"{name} ({source})")


def languages_check(model_setting: str, texts: Iterable[str]) -> Check:
    """Whether the embedding model reads the workspace's entries: advice, never a
    failure. From a fifth of them in a script it does not read (the bundled
    all-MiniLM-L6-v2 reads Latin script), the one command that switches to a
    multilingual model (memcli.index.coverage.notice)."""
    from memcli.index.coverage import notice, unread_share

    texts = list(texts)
    said = notice(model_setting, texts)
    if said is not None:
        return Check("languages", True, said)
    share = unread_share(model_setting, texts)
    return Check("languages", True, f"the model reads {1 - share:.0%} of the entries")


def language_notice(rt: Any) -> str | None:
    """The line `init` and `index` say when a fifth or more of the workspace's entries
    (`rt`, a Runtime) are in a script the configured model does not read (None
    otherwise)."""
    from memcli.index.coverage import notice
    from memcli.services.entries import all_entries

    return notice(rt.settings.index.model, (e.text for e in all_entries(rt)))


def onnx_check(model_id: str, enabled: bool, model_setting: str = "") -> Check:
    """The ONNX export the torch-free query path uses, and which engine embeds a one-off
    process's queries (numpy or onnxruntime: memcli.index.query_engine)."""
    from memcli.index.onnx_embedder import export_dir, is_exported
    from memcli.index.query_engine import engine_of

    if not enabled:
        return Check("onnx", True, "off ([index] onnx = false): searches load torch")
    engine = engine_of(model_id, model_setting)
    if is_exported(model_id):
        return Check("onnx", True, f"exported in {export_dir(model_id)}; queries: {engine}")
    return Check(
        "onnx",
        True,
        "not exported yet: the first `memcli index` makes it (searches are slower until then)",
    )


def index_check(manager: Any) -> Check:
    """The index exists and matches the files (a search would refresh it anyway)."""
    manifest = manager.read_manifest()
    if manifest is None:
        return Check("index", True, "none yet: the first search or `memcli index` builds it")
    if manifest.get("corrupt"):
        return Check("index", False, "damaged: run `memcli index --rebuild`")
    count = manager.count()
    if manager.is_current(manifest):
        return Check("index", True, f"current ({count} entries, {manifest.get('model')})")
    return Check("index", True, f"behind the files ({count} entries): the next search updates it")


def merge_driver_check(root: Path) -> Check | None:
    """In a git repository: the entry-aware merge driver is set up (None outside one)."""
    from memcli.store.config_files import load_registry
    from memcli.store.gitmerge import attributes as driver_lines

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    if git("rev-parse", "--git-dir") is None:
        return None
    attributes = root / ".gitattributes"
    lines = attributes.read_text(encoding="utf-8").splitlines() if attributes.exists() else []
    try:
        wanted = driver_lines(load_registry(root))  # the curated files `[files]` adds too
    except MemcliError:
        wanted = driver_lines()
    missing = [line for line in wanted if line not in lines]
    driver = git("config", "merge.memcli.driver")
    if missing or not driver:
        what = "the .gitattributes lines" if missing else "the driver in git config"
        return Check(
            "git", False, f"merge driver not set up ({what} missing): run `memcli git setup`"
        )
    return Check("git", True, "entries merge by id (merge=memcli)")


def checks(
    root: Path,
    settings: Any,
    manager: Any,
    extra: Sequence[Check] = (),
    texts: Iterable[str] = (),
) -> list[Check]:
    """Every check, in the order `doctor` prints them; `extra` are the surfaces' own
    (the watcher's socket: memcli.surfaces.daemon.service.watcher_check); `texts` the
    entries' (what the model must read)."""
    found = [
        config_check(settings),
        model_check(settings.index.model),
        languages_check(settings.index.model, texts),
        onnx_check(
            manager.model_id,
            bool(getattr(settings.index, "onnx", True)),
            getattr(settings.index, "model", ""),
        ),
        index_check(manager),
        *extra,
    ]
    git = merge_driver_check(root)
    if git is not None:
        found.append(git)
    return found

"""The runtime of one workspace: what the services share, built once and lazily.

It is the one place of the service layer that reads the environment and the settings
(flag > MEMCLI_* > memcli.toml > the user's config.toml > defaults, memcli.store.config),
and it builds, on first use, the store, the access statistics, the index manager with
its embedders (sentence-transformers for bulk; numpy or the ONNX export for queries)
and the LLM client. Services receive a Runtime and never read `os.environ` themselves.

Lower layers keep a few process-wide knobs of their own, read where they act because
passing them down would thread one value through every caller of a low-level function:
MEMCLI_MAX_FILE_MB (memcli.store.store.max_file_bytes, also used by the recovery and
merge code that builds stores without a runtime), MEMCLI_NO_EXCHANGE and
MEMCLI_LOCK_TIMEOUT (memcli.store.files, the write guard and its locks, used by the
hooks and the git merge driver too), XDG_CACHE_HOME (memcli.index.onnx_embedder, where
the ONNX export of a model lives, shared by every workspace) and the HF_* defaults the
embedder sets before importing transformers.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcli.core.names import CONFIG_FILE
from memcli.store.access import AccessStats
from memcli.store.config import Settings, load_settings
from memcli.store.store import Store
from memcli.store.trust import local_key
from memcli.store.workspace import require_workspace, resolve_workspace

if TYPE_CHECKING:
    from memcli.adapters.llm import LLMClient
    from memcli.index.embedder import Embedder
    from memcli.services.indexing import IndexManager


class Runtime:
    """Settings, environment and the components built from them, for one workspace."""

    def __init__(
        self,
        workspace: str | Path | None = None,
        *,
        settings: Settings | None = None,
        env: Mapping[str, str] | None = None,
        embedder_factory: Callable[[], Embedder] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.root = resolve_workspace(workspace, self.env)
        self.store = Store(self.root)
        #: a test's deterministic embedder; None: the configured model
        self.embedder_factory = embedder_factory
        self.notify: Callable[[str], None] = notify or notice_stderr
        self._settings = settings
        self._index: IndexManager | None = None
        #: serves many requests (long_lived): what it keeps is written when they pause
        self.long_lived_process = False

    @property
    def settings(self) -> Settings:
        """The settings in effect, read on first use (a notice names what an untrusted
        memcli.toml tried to set)."""
        if self._settings is None:
            self._settings = load_settings(self.root, self.env)
            if self._settings.ignored:
                from memcli.store.trust import untrusted_notice

                self.notify(untrusted_notice(self.root / CONFIG_FILE, self._settings.ignored))
            for problem in self._settings.problems:  # `memcli doctor` lists them too
                self.notify(problem)
        return self._settings

    @cached_property
    def access(self) -> AccessStats:
        """Access statistics (`.memcli/access.json`)."""
        return AccessStats(self.store.state_dir)

    @property
    def index_manager(self) -> IndexManager:
        """The index of the workspace, with the configured embedders (built lazily: the
        model loads on the first embedding, not here)."""
        if self._index is None:
            from memcli.services.indexing import IndexManager

            settings = self.settings.index
            bm25 = (self.settings.search.bm25_k1, self.settings.search.bm25_b)
            if self.embedder_factory is not None:
                self._index = IndexManager(
                    self.store,
                    settings,
                    self.embedder_factory,
                    notify=self.notify,
                    bm25=bm25,
                    key=functools.partial(local_key, self.env),
                )
            else:
                self._index = IndexManager(
                    self.store,
                    settings,
                    functools.partial(
                        _bulk_embedder,
                        settings.model,
                        settings.batch_size,
                        self.prepare_steps if settings.onnx else None,
                    ),
                    notify=self.notify,
                    query_factory=functools.partial(_fast_query, settings.model, settings.onnx),
                    bm25=bm25,
                    key=functools.partial(local_key, self.env),
                )
        return self._index

    def prepare_steps(self, step: int, of: int, what: str) -> None:
        """How the one-time preparation of the embedding model (its ONNX export) goes,
        as notices (memcli.index.onnx_embedder.STEPS)."""
        self.notify(f"preparing the embedding model, once ({step}/{of}): {what}")

    def prepare_model(self, report: Callable[[int, int, str], None] | None = None) -> str:
        """Make the ONNX export of the configured model now (init, install and
        `watch --background` do it up front): "ready" (it was there), "prepared", "off"
        ([index] onnx = false) or "unavailable" (no torch, or the export failed: searches
        load torch instead)."""
        from memcli.index import onnx_embedder, query_engine
        from memcli.index.embedder import model_id_for

        index = self.settings.index
        if not index.onnx:
            return "off"
        if onnx_embedder.is_exported(model_id_for(index.model)):
            query_engine.ensure_checked(model_id_for(index.model), index.model)  # once
            return "ready"
        done = query_engine.prepare(index.model, index.batch_size, report or self.prepare_steps)
        return "prepared" if done else "unavailable"

    def embeddings_ready(self) -> bool:
        """Whether a query can be embedded and searched without first waiting for the
        one-time model preparation (the ONNX export) or a first indexing of every entry."""
        from memcli.index import onnx_embedder
        from memcli.index.embedder import model_id_for

        index = self.settings.index
        if index.onnx and not onnx_embedder.is_exported(model_id_for(index.model)):
            return False
        return self.index_manager.read_manifest() is not None

    def llm(self) -> LLMClient | None:
        """The configured LLM client ([llm]), None when there is none; the API key is
        read from this runtime's environment."""
        from memcli.adapters.llm import client_from

        return client_from(self.settings.llm, self.env, root=self.root)

    def require(self) -> Store:
        """The store, once the workspace is known to exist (WorkspaceError otherwise)."""
        require_workspace(self.root)
        return self.store

    def long_lived(self) -> None:
        """Serve many requests from this process (the watch daemon): new embeddings and
        access counts stay in memory until `flush()` instead of being written each time."""
        self.index_manager.keep_cache_in_memory = True
        self.access.defer = True
        self.long_lived_process = True

    def flush(self) -> None:
        """Write what `long_lived` kept in memory."""
        self.access.flush()
        self.index_manager.flush()


def shared_key(workspace: str | Path | None = None) -> tuple[str, object, tuple[Any, ...]]:
    """What decides the settings of a runtime for `workspace` in this process: its root
    and `settings_stamp` (memcli.services.memory.shared_memory keeps one Memory per key)."""
    root = resolve_workspace(workspace, os.environ)
    stamps, env = settings_stamp(root)
    return str(root), stamps, env


def settings_stamp(root: Path, with_env: bool = True) -> tuple[tuple[object, ...], tuple[Any, ...]]:
    """The modification times of the workspace's memcli.toml, the user's config.toml and
    the approvals (a `memcli trust` applies a withheld setting), and the MEMCLI_*
    variables (unless `with_env` is False): what changes the settings of a workspace
    found already."""
    from memcli.store.trust import CONFIG_NAME, TRUST_NAME, user_config_dir

    user = user_config_dir()  # the user's config.toml and the approvals (trusted.json)
    paths = (os.path.join(root, CONFIG_FILE), user / CONFIG_NAME, user / TRUST_NAME)
    stamps = tuple(_mtime(p) for p in paths)
    if not with_env:
        return stamps, ()
    environ = os.environ  # names first: only the few values kept are decoded
    env = tuple(sorted((k, environ[k]) for k in environ if k.startswith("MEMCLI_")))
    return stamps, env


def _mtime(path: str | Path) -> object:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def operation(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Group the file writes of a service call as one operation of the history
    (`memcli history`, `memcli undo`); an outer operation names nested ones."""

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            from memcli.store.history import operation as recorded

            with recorded(name):
                return function(*args, **kwargs)

        return run

    return wrap


def notice_stderr(message: str) -> None:
    """The default notify: a notice on stderr."""
    print(f"notice: {message}", file=sys.stderr)


def _bulk_embedder(
    model: str, batch_size: int, report: Callable[[int, int, str], None] | None
) -> Embedder:
    """sentence-transformers, and with `report` (the ONNX export is on) the one-time
    export made first if it is missing, when the model first loads (a sync with nothing
    to embed never loads it): the export's first step is said before torch loads, so a
    first run in a fresh cache is not silent while torch imports (issue 37), and the
    queries after it take the fast path."""
    from memcli.index.embedder import SentenceTransformerEmbedder

    if report is None:
        return SentenceTransformerEmbedder(model, batch_size)

    def export_first() -> None:
        from memcli.index import query_engine

        query_engine.export(model, embedder, report)  # at once when it is there

    embedder = SentenceTransformerEmbedder(model, batch_size, before_load=export_first)
    return embedder


def _fast_query(model: str, onnx: bool) -> Embedder | None:
    """Query embeddings by numpy or the ONNX export (memcli.index.query_engine), else
    None (torch)."""
    from memcli.index import query_engine
    from memcli.index.embedder import model_id_for

    if not onnx:
        return None
    return query_engine.make(model_id_for(model), model)

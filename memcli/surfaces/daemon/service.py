"""`memcli watch`: keep the index current as files change, and serve the fast path.

Wires a Watcher (debounced file events) and a DaemonServer (socket requests) to one warm
Memory, and a LayerWatch to the other layers it reads (memcli.surfaces.daemon.
layerwatch). Batches and requests take turns under one lock.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memcli.core.errors import MemcliError
from memcli.core.names import CONFIG_FILE
from memcli.core.registry import BUILTIN, Registry
from memcli.services.health import Check
from memcli.services.memory import shared_memory
from memcli.store.workspace import Resolved
from memcli.surfaces.daemon.layerwatch import LayerWatch
from memcli.surfaces.daemon.server import DaemonServer, Lease, RequestHandler
from memcli.surfaces.daemon.watch import Watcher

#: the daemon writes access counts once requests pause this long...
ACCESS_IDLE_S = 0.2
#: ...or at the latest this long after the first unwritten one
ACCESS_MAX_DELAY_S = 2.0
#: new embeddings the cache read at start has room for (1.5 MB): edits add without
#: copying the whole cache
RESERVED_VECTORS = 1024
#: seconds between two tries to catch up after a failed sync (a read-only workspace, a
#: lock another process holds): one log line each, not one a second
CATCH_UP_BACKOFF_S = 30.0
#: embedded once at start: as long as a long entry (≈ 200 tokens)
WARM_UP_TEXT = " ".join(["memory"] * 200)
#: searched at start, twice, to derive the search view before the first request
WARM_UP_QUERY = "warm up"
#: served requests whose time is kept per kind, for the latency figures of `status`
LATENCY_SAMPLES = 10_000
#: request kind (memcli.core.requests) -> the command's name
KINDS = {"SearchQuery": "search", "InjectRequest": "inject", "GetRequest": "get"}


class WatchService:
    def __init__(
        self,
        workspace: str | Path | None,
        log: Callable[[str], None],
        idle_exit_s: float | None = None,
    ) -> None:
        self.memory = shared_memory(workspace)
        #: seconds without a request or a batch after which the watcher leaves (one the
        #: agents' path started: memcli.surfaces.daemon.autostart); None: it stays
        self.idle_exit_s = idle_exit_s
        self._last_activity = time.monotonic()
        #: ms each served request took, per kind (search, inject, get), and how many
        self.latency: dict[str, deque[float]] = {}
        self.served: dict[str, int] = {}
        self.root = self.memory.root
        self.log = log
        self.lock = threading.Lock()
        self.started = time.time()
        self.batches = 0
        self.last_batch: dict[str, Any] | None = None
        self._reported: object = None  # the index manager's last report, once logged
        self.lease = Lease(self.root)
        handler = RequestHandler(self.root, self.status, self.current)
        self.server = DaemonServer(self.root, self._locked(handler), self._answered)
        self._last_answer = 0.0
        self._next_catch_up = 0.0
        self._stopping = threading.Event()
        self._flusher = threading.Thread(
            target=self._flush_when_idle, name="memcli-access", daemon=True
        )
        self.watcher = Watcher(self.root, self.on_batch, files=self._files)
        self.layers = LayerWatch(self, log)  # the other layers the workspace reads
        #: the thread reading the embedding cache at start (IndexManager.read_cache_ahead)
        self.cache_reader: Any = None

    def _files(self) -> Registry:
        """The workspace's registry as memcli.toml has it now (a bad `[files]`: the
        built-in files, while each command that reads the files says what is wrong)."""
        try:
            return self.memory.store.files
        except MemcliError:
            return BUILTIN

    def _locked(self, handler: Callable[[dict], dict]) -> Callable[[dict], dict]:
        def run(request: dict) -> dict:
            if request.get("op") == "status":
                return handler(request)
            started = time.perf_counter()
            with self.lock:
                answer = handler(request)
            self._timed(request, (time.perf_counter() - started) * 1000)
            return answer

        return run

    def _timed(self, message: dict, ms: float) -> None:
        """Keep the time a served request took (the last LATENCY_SAMPLES of each kind)."""
        wire = message.get("request")
        kind = KINDS.get(wire.get("kind")) if isinstance(wire, dict) else None
        if kind is not None:
            self.latency.setdefault(kind, deque(maxlen=LATENCY_SAMPLES)).append(ms)
            self.served[kind] = self.served.get(kind, 0) + 1

    def latency_figures(self) -> dict[str, dict[str, float]]:
        """Per kind of request served since the start: how many, p50 and p99 in ms (of
        the last LATENCY_SAMPLES)."""
        figures = {}
        for kind, samples in sorted(self.latency.items()):
            ordered = sorted(samples)
            figures[kind] = {
                "requests": self.served[kind] if kind in self.served else len(ordered),
                "p50_ms": round(_percentile(ordered, 0.50), 1),
                "p99_ms": round(_percentile(ordered, 0.99), 1),
            }
        return figures

    def current(self) -> Any:
        """The Memory of the workspace's settings as they are now (memcli.toml, the
        user's config, the approvals: services.runtime.shared_key), kept warm; a changed
        setting (a layer read or no longer read) applies without restarting."""
        fresh = shared_memory(Resolved(self.root))  # resolved at start: not again per request
        if fresh is not self.memory:
            self.memory.access.flush()
            self.memory.index_manager.flush()
            self.memory = fresh
            fresh.long_lived()
        return fresh

    def _answered(self) -> None:
        self._last_answer = self._last_activity = time.monotonic()

    def _leave_when_idle(self) -> None:
        """With idle_exit_s: once nothing was asked and nothing changed for that long,
        say so in the log and stop as on SIGTERM (the command's handler stops cleanly)."""
        if self.idle_exit_s is None or self._stopping.is_set():
            return
        idle = time.monotonic() - self._last_activity
        if idle < self.idle_exit_s:
            return
        import signal

        self.log(f"no request or change for {idle / 60:.1f} min: leaving")
        self._stopping.set()
        os.kill(os.getpid(), signal.SIGTERM)

    def _flush_when_idle(self) -> None:
        """Write the access counts that answers recorded in memory once requests pause
        (ACCESS_IDLE_S) or at the latest after ACCESS_MAX_DELAY_S: a burst of searches
        never waits for the statistics file."""
        ticks = 0
        while not self._stopping.wait(0.05):
            ticks += 1
            if ticks % 20 == 0:
                self._merge_late_writes()
                self._catch_up()
                self.layers.tick()
                self._leave_when_idle()
                if time.monotonic() - self._last_answer >= ACCESS_IDLE_S:
                    self._keep_token_counts()
            since = self.memory.access.pending_since
            if since is None:
                continue
            now = time.monotonic()
            if now - self._last_answer >= ACCESS_IDLE_S or now - since >= ACCESS_MAX_DELAY_S:
                with self.lock:
                    self.memory.access.flush()

    def _keep_token_counts(self) -> None:
        """Keep the token counts served injects made, for cold processes
        (memcli.adapters.token_memo): once requests pause, at most once a second."""
        import sys

        tokens = sys.modules.get("memcli.adapters.tokens")
        if tokens is not None:
            with self.lock:
                tokens.save_counts()

    def start(self) -> None:
        self.memory.ready()
        self.lease.acquire()  # before minutes of indexing, not after; any path to it
        if query_status(self.root) is not None:
            self.lease.release()
            raise RuntimeError(f"another memcli watch already serves {self.root}")
        self.memory.long_lived()
        started = time.perf_counter()
        # the embedding cache is read while the files are parsed and the model warms up
        # (≈ 2 s at 100k entries): the first hand edit finds it read, with room to grow
        self.cache_reader = self.memory.index_manager.read_cache_ahead(
            RESERVED_VECTORS,
            lambda exc: self.log(f"warning: could not read the embedding cache ahead: {exc}"),
        )
        report = self.memory.index()
        self._reported = self.memory.index_manager.last_report
        # a query, then an entry's length: the model's weights read in from their file
        # (numpy) or the session's buffers sized for each length (onnxruntime), which
        # the first search and edit paid (≈ 0.2 s)
        self.memory.index_manager.query_embedder.embed(["warm up", WARM_UP_TEXT])
        self._remember_heads()
        self._warm_view()
        # The warm index, model and memos live as long as the process: keep the cyclic
        # garbage collector from rescanning them after every batch (an edit of a 10k
        # workspace spent more time in GC pauses than in indexing).
        gc.collect()
        gc.freeze()
        gc.set_threshold(50_000, 20, 100)
        self.log(
            f"indexed {report.total} entries ({report.embedded} embedded) in "
            f"{(time.perf_counter() - started) * 1000:.0f} ms; watching {self.root}"
        )
        self.server.start()
        self.watcher.start()
        self.layers.tick()
        self._flusher.start()
        self.log(f"serving search, inject and get on {self.server.path}")

    def _warm_view(self) -> None:
        """Before serving: the entries held as the store parsed them (each edit's reparse
        then keeps the unchanged ones, and the search view carries over), and the view a
        search derives from them (positions, ranking arrays, every entry's values: the
        second query of a generation reads them all), which the first requests paid
        (at 100k entries the first served searches took 0.7 s, the first edit's 0.15 s
        more than later ones)."""
        try:
            self.memory.index_manager.hold_parsed()
            for _ in range(2):
                self.memory.search(WARM_UP_QUERY, touch=False)
            make_room = getattr(self.memory.index_manager.backend, "make_room", None)
            if make_room is not None:  # the local index: a graph's first add copies it
                make_room(RESERVED_VECTORS)
        except Exception as exc:  # noqa: BLE001 - only a head start: a request derives it
            self.log(f"warning: could not prepare the search view ahead: {exc}")

    def _remember_heads(self) -> None:
        """Hold the curated files' content (memory.md, learnings.md, …: the ones hand
        edited) in memory as the base of their history's next delta, where the history
        has it as the file's newest version: the first edit read that version back and
        decompressed it (≈ 0.2 s of its 0.5 s at 100k entries; later edits have it at
        hand). Files read and hashed off the lock; one that changed meanwhile is left to
        its own event. (The history keeps a few recent contents: not every log file.)"""
        from memcli.store.history_objects import sha256

        store = self.memory.store
        try:
            for name in store.files.names:
                path = store.path(name)
                if not path.is_file():
                    continue
                data = path.read_bytes()
                digest = sha256(data)
                with self.lock:
                    history = store.history
                    if self.memory.store is store and history.head(name) == digest:
                        history.objects.remember(digest, data)
        except (OSError, MemcliError) as exc:  # only a head start: the edit reads it back
            self.log(f"warning: could not read the files' history ahead: {exc}")

    def on_batch(self, paths: list[str]) -> bool:
        """Index what changed in `paths` (names relative to the root); False when the
        sync failed (said in the log; `_catch_up` tries again)."""
        started = time.perf_counter()
        with self.lock:
            if CONFIG_FILE in paths:
                self.current()
            manager = self.memory.index_manager
            # a search may have indexed the change already (it syncs a stale index first)
            current = CONFIG_FILE not in paths and manager.is_current(manager.read_manifest())
            if current and manager.last_report is self._reported:
                return True  # a repeated event: nothing new
            try:
                for name in paths:
                    if name.endswith(".md") and (self.root / name).is_file():
                        for problem in self.memory.store.load(name).problems:
                            self.log(f"warning: {problem} (the rest is indexed)")
                        self._observe(name)
                report = manager.last_report if current else manager.sync()
            except MemcliError as exc:
                self.log(f"error: {exc}")
                return False
            self._reported = manager.last_report
        elapsed = (time.perf_counter() - started) * 1000
        self._last_activity = time.monotonic()
        self.batches += 1
        self.last_batch = {"paths": paths, "ms": round(elapsed, 1), **report.to_dict()}
        self.log(f"{time.strftime('%H:%M:%S')} {', '.join(paths)}: {report.summary(elapsed)}")
        return True

    def _catch_up(self) -> None:
        """Once a second: an index the files have moved past, with no batch to bring it
        up to date (an event the observer missed, a batch whose sync failed: a lock held
        past its timeout), is synced now rather than at the next edit. After a failed
        sync it tries again every CATCH_UP_BACKOFF_S, not every second."""
        if time.monotonic() < self._next_catch_up:
            return
        manager = self.memory.index_manager
        try:
            stale = not manager.is_current(manager.read_manifest())
        except (MemcliError, OSError):
            return
        if stale:
            names = [n for n in self._files().names if (self.root / n).is_file()]
            if not self.on_batch(names):
                self._next_catch_up = time.monotonic() + CATCH_UP_BACKOFF_S

    def _merge_late_writes(self) -> None:
        """Once a second: bytes an editor wrote into a file after memcli replaced it
        (kept in the history) are merged back into the file."""
        history = self.memory.store.history
        try:
            names = {d.file for d in history.detached()}
        except OSError:
            return
        for name in sorted(names):
            if not history.late_writes(name):
                continue
            try:
                with self.lock:
                    self.memory.store.update(name, lambda doc: None)
            except MemcliError as exc:
                self.log(f"warning: {name}: cannot merge back an editor's late bytes: {exc}")
                continue
            self.log(f"{name}: merged back bytes an editor wrote after memcli replaced the file")

    def _observe(self, name: str) -> None:
        """Keep the file's new version in the history; say so when someone's save
        removed entries memcli had just written (a stale editor buffer)."""
        try:
            lost = self.memory.store.observe(name)
        except MemcliError as exc:
            self.log(f"warning: {exc}")
            return
        if not lost:
            return
        present = {e.id for e in self.memory.store.entries(include_archived=True, warn=_quiet)}
        for item in lost:
            if item["id"] not in present:
                self.log(
                    f"warning: {name}: a save removed {item['id']} (\"{item['text'][:60]}\"), "
                    f"which memcli had written; `memcli restore {item['id']}` brings it back"
                )

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "workspace": str(self.root),
            "socket": str(self.server.path),
            "uptime_s": round(time.time() - self.started, 1),
            "entries": self.memory.index_manager.count(),
            "batches": self.batches,
            "requests": self.server.requests,
            "latency": self.latency_figures(),
            "last_batch": self.last_batch,
            **self.layers.status(),
        }

    def stop(self) -> None:
        self.watcher.stop()
        self.server.stop()
        self._stopping.set()
        if self._flusher.is_alive():
            self._flusher.join(timeout=5)
        self.layers.stop()
        with self.lock:
            self.memory.access.flush()
            self.memory.index_manager.flush()
        self.lease.release()


def query_status(root: Path) -> dict[str, Any] | None:
    """Ask a running watcher for its status; None when none answers."""
    import json
    import socket

    from memcli.surfaces.protocol import peer_uid, read_line, socket_path

    path = socket_path(root)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(2.0)
    try:
        sock.connect(str(path))
        if peer_uid(sock) != os.getuid():  # a stranger's socket: believe nothing it says
            return None
        sock.sendall(b'{"op": "status"}\n')
        data = read_line(sock, limit=1 << 20)
        return json.loads(data.decode()).get("status")
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def _percentile(ordered: list[float], q: float) -> float:
    """The nearest-rank percentile `q` of sorted values."""
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _quiet(problem: object) -> None:
    """Parse problems are reported by the batch itself."""


def start_background(root: Path, timeout: float = 180.0) -> dict[str, Any]:
    """Start `memcli watch` for `root` as a process of its own (its output in
    `.memcli/watch.log`) and wait until it answers; its status."""
    import subprocess
    import sys

    if query_status(root) is not None:
        raise RuntimeError(f"another memcli watch already serves {root}")
    from memcli.store.links import follow

    log_path = follow(root, ".memcli", folder=True) / "watch.log"  # the rule for links
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", str(root), "watch"],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # outlives this shell; Ctrl-C here does not reach it
        )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = query_status(root)
        if status is not None:
            return {**status, "log": str(log_path)}
        if proc.poll() is not None:
            tail = log_path.read_text(encoding="utf-8", errors="replace")[-400:].strip()
            raise RuntimeError(f"memcli watch exited ({proc.returncode}): {tail}")
        time.sleep(0.2)
    raise RuntimeError(f"memcli watch did not answer within {timeout:.0f} s (see {log_path})")


def stop_running(root: Path, timeout: float = 30.0) -> int | None:
    """Ask the watcher serving `root` to stop (SIGTERM) and wait until it has; its pid,
    or None when none was running."""
    import signal

    status = query_status(root)
    if status is None:
        return None
    pid = int(status["pid"])
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if query_status(root) is None:
            return pid
        time.sleep(0.1)
    raise RuntimeError(f"memcli watch (pid {pid}) did not stop within {timeout:.0f} s")


def watcher_check(root: Path) -> Check:
    """A watcher serving this workspace, or a stale socket one left behind."""
    from memcli.surfaces.protocol import socket_path

    path = socket_path(root)
    if not path.exists():
        return Check("watcher", True, "not running (commands run in-process)")
    status = query_status(root)
    if status is None:
        return Check(
            "watcher",
            True,
            f"{path}: stale socket (no watcher answers; the next `memcli watch` removes it)",
        )
    return Check("watcher", True, f"running (pid {status.get('pid')}), serving {path}")

"""What an index remembers on disk about the Markdown it was built from: the base of
memcli.services.indexing.IndexManager, which does the syncing.

`.memcli/index/manifest.json` holds the file signature the index was built from (each
entry file's sha256 with the stamp it was hashed under), the model, the backend's revision
after that sync, the entry count and the name of a signed snapshot of the parsed entries
(memcli.index.snapshot), so a one-off process whose files are unchanged need not parse the
Markdown. A file's hash is reused only while its size, mtime, ctime and inode are as they
were when it was hashed and it had not changed for RACY_NS before."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from memcli.core.models import Entry
from memcli.index import snapshot as entry_snapshot
from memcli.store.files import atomic_write
from memcli.store.store import Store

STATE_VERSION = 2
#: a file changed this close to the moment it was hashed may change again within the same
#: timestamp tick (ctime moves in coarse steps): its stamp alone proves nothing, hash it
RACY_NS = 2_000_000_000


class IndexState:
    """The manifest, the entry files' signature and the entries snapshot of one
    workspace's index (`.memcli/index/`); read-only apart from `_save_manifest` and
    `_write_snapshot`, which the sync calls under the index lock."""

    def __init__(self, store: Store, key: Callable[[], bytes | None]) -> None:
        self.store = store
        #: the user's secret that signs the entry snapshot (memcli.store.trust.local_key)
        self._key = key
        self.dir = store.state_dir / "index"
        self._manifest_file = str(self.dir / "manifest.json")  # stat on every read
        self._manifest: tuple[tuple[int, int, int], dict] | None = None
        #: ((backend revision, snapshot file or None), entries) this process parsed or read
        self._snapshot: tuple[tuple[str, str | None], list[Entry]] | None = None
        self._digests: dict[str, list] = {}  # name -> files_signature row, memoized
        #: a long-lived process (the watcher) sets this: new embeddings and the parsed-
        #: entries snapshot are written by flush(), not on every small update
        self.keep_cache_in_memory = False

    # ------------------------------------------------------------------ manifest

    def _manifest_path(self) -> Path:
        return self.dir / "manifest.json"

    def read_manifest(self) -> dict | None:
        """This sync's state (memoized while the file's stat is unchanged; read-only):
        model, files, backend (revision), count, entries (snapshot name)."""
        path = self._manifest_file
        try:
            st = os.stat(path)
            stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
            if self._manifest is not None and self._manifest[0] == stamp:
                return self._manifest[1]
            with open(path, encoding="utf-8") as handle:
                data = json.loads(handle.read())
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return {"corrupt": True}
        required = ("model", "files", "backend", "count")
        if isinstance(data, dict) and data.get("version") == 1:
            return {"corrupt": True, "old": True}
        if (
            not isinstance(data, dict)
            or data.get("version") != STATE_VERSION
            or any(key not in data for key in required)
        ):
            return {"corrupt": True}
        self._manifest = (stamp, data)
        return data

    def _save_manifest(self, manifest: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self._manifest_path(), json.dumps(manifest))

    def count(self) -> int:
        """Entries the index held after the last sync (0 without one)."""
        count = (self.read_manifest() or {}).get("count", 0)
        return count if isinstance(count, int) else 0

    # ------------------------------------------------------------------ the entry files

    def files_signature(self) -> dict[str, list]:
        """Every entry file's content hash, with the stamp it was hashed under:
        `name -> [size, mtime_ns, ctime_ns, inode, sha256, hashed_at_ns]`."""
        signature: dict[str, list] = {}
        for name in self.store.entry_files(include_archived=True):
            with contextlib.suppress(OSError):
                signature[name] = self._hashed(name)
        return signature

    def _hashed(self, name: str, st: os.stat_result | None = None) -> list:
        """[size, mtime_ns, ctime_ns, inode, sha256, hashed_at_ns] of one entry file;
        the hash is memoized while the stamp stays and the file had settled when hashed
        (a watcher answering searches does not re-read an unchanged file)."""
        path = self.store.root / name
        if st is None:
            st = path.stat()
        stamp = _stamp(st)
        known = self._digests.get(name)
        if known is not None and known[:4] == stamp and _settled(st.st_ctime_ns, known[5]):
            return known
        hashed_at = time.time_ns()
        with path.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
        result = [*stamp, digest, hashed_at]
        self._digests[name] = result
        return result

    def _read_entries(self) -> tuple[list[Entry], dict[str, list]]:
        """Entries and the file signature they were read under (re-read if a file
        changed while parsing, so the manifest never vouches for older content)."""
        for _ in range(5):
            signature = self.files_signature()
            now = time.time_ns()
            for name, row in signature.items():
                if not _settled(row[2], now):
                    # the store memoizes parses by stamp, which a write within the same
                    # timestamp tick keeps: parse a file that changed just now afresh
                    self.store.invalidate(name)
            entries = self.store.entries(include_archived=True, warn=self.store.left_out)
            after = self.files_signature()
            if {n: r[:5] for n, r in after.items()} == {n: r[:5] for n, r in signature.items()}:
                break
        return entries, signature

    def _unchanged(self, recorded: dict) -> bool:
        """The entry files are the ones `recorded` (a manifest's "files") names, with the
        content they had then. A file is hashed unless its stamp is the recorded one and
        it had not changed for RACY_NS before it was hashed (ctime cannot be set back)."""
        try:
            names = self.store.entry_files(include_archived=True)
        except OSError:
            return False
        if sorted(names) != sorted(recorded):
            return False
        root = str(self.store.root)
        for name in names:
            held = recorded[name]
            if not isinstance(held, list) or len(held) != 6:
                return False  # an index from before content hashes
            try:
                st = os.stat(os.path.join(root, name))
            except OSError:
                return False
            if _stamp(st) == held[:4] and _settled(st.st_ctime_ns, held[5]):
                continue
            if st.st_size != held[0]:
                return False
            try:
                if self._hashed(name, st)[4] != held[4]:
                    return False
            except OSError:
                return False
        return True

    # ------------------------------------------------------------------ entries snapshot

    def _write_snapshot(
        self, entries: Sequence[Entry], files: dict, to_disk: bool | None = None
    ) -> tuple[str | None, str | None]:
        """The parsed entries as read under `files`, signed (memcli.index.snapshot); a
        watcher writes them only when it flushes. (file name, MAC), or (None, None)."""
        if not (not self.keep_cache_in_memory if to_disk is None else to_disk):
            return None, None
        return entry_snapshot.write(self.dir, entries, files, self._key()) or (None, None)

    def snapshot_entries(self) -> list[Entry] | None:
        """The entries of the last sync (file order, first of each id) from this process
        or a snapshot this user wrote here for the files the manifest records, or None."""
        manifest = self.read_manifest()
        if not manifest or manifest.get("corrupt"):
            return None
        name = manifest.get("entries")
        key = (manifest["backend"], name)
        if self._snapshot is not None and self._snapshot[0] == key:
            return self._snapshot[1]
        if not isinstance(name, str) or not name:
            return None
        entries = entry_snapshot.read(
            self.dir, name, manifest.get("entries_mac"), manifest.get("files"), self._key()
        )
        if entries is None or len(entries) != manifest["count"]:
            return None
        self._snapshot = (key, entries)
        return entries


def _stamp(st: os.stat_result) -> list[int]:
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _settled(ctime_ns: int, hashed_at_ns: object) -> bool:
    """The file had not changed for RACY_NS when it was hashed: a later change, even of
    the same size with its mtime put back, moves its ctime. Never on Windows, where
    st_ctime is the creation time."""
    return os.name != "nt" and isinstance(hashed_at_ns, int) and ctime_ns < hashed_at_ns - RACY_NS

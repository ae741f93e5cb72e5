"""The files of the local index (memcli.index.local) under `.memcli/index/`: reading and
writing them, nothing about what the rows mean.

- a *base* generation, written whole: `vectors-<gen>.npy` or `.faiss`, `keyword-<gen>.kw`
  (CSR postings in one read, memcli.index.keyword; an earlier memcli's `.npz` is read
  too) and `rows-<gen>.json` (row -> id and content key, null when dead);
- an append-only *log* `log-<gen>.bin`: one record per upsert or delete (a JSON header
  with the ids, keys and keyword texts, then the raw float32 vectors), each framed with
  its length and crc32;
- `local.json`, replaced atomically after every append: model, dim, the generation's
  file names and `log_size`, how many bytes of the log belong to the index.

Readers replay exactly `log_size` bytes, so a record being appended, or torn by a kill
-9, is never seen; a writer truncates the log to `log_size` before it appends. A new
generation is written manifest last, then the old generation's files are removed; a
half-written one (a full disk, a kill) is removed and the old one stays. The files are
read as data only (JSON, NumPy without pickle, FAISS): a workspace copied from someone
else cannot make a reader run code, and the manifest names files in the index folder
only.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from memcli.index.write_errors import os_error_of

if TYPE_CHECKING:
    from memcli.index.keyword import KeywordIndex
    from memcli.index.vectors import VectorIndex

VERSION = 3  # 3: rows and log records as JSON (2: marshal)
MANIFEST = "local.json"
_HEADER = struct.Struct("<4sII")
_MAGIC = b"MLG1"
#: prefixes of the files a generation consists of
_FILES = ("vectors-", "keyword-", "rows-", "log-", "slots-")
_PARTS = ("vectors", "keyword", "rows", "log")
#: what reading a damaged file can raise (faiss raises RuntimeError)
DAMAGED = (
    OSError,
    ValueError,
    KeyError,
    TypeError,
    IndexError,
    RuntimeError,
    EOFError,
)

Stamp = tuple[int, int, int]
#: a log record: ("u", ids, keys, vectors, texts) or ("d", ids)
Record = tuple


def stamp_of(path: str | Path) -> Stamp:
    """What changes whenever the manifest is replaced (size, mtime, inode)."""
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ino)


def read_manifest(directory: Path) -> tuple[Stamp | None, dict | None]:
    """(stamp, manifest) of `local.json`; (None, None) without one; the manifest is
    `{"corrupt": True}` (and `"old": True` for an older format) when unusable."""
    path = directory / MANIFEST
    try:
        stamp = stamp_of(path)
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError):
        return (0, 0, 0), {"corrupt": True}
    required = ("model", "dim", "generation", "kind", *_PARTS)
    version = data.get("version") if isinstance(data, dict) else None
    if isinstance(version, int) and version < VERSION:
        return stamp, {"corrupt": True, "old": True}
    if (
        not isinstance(data, dict)
        or data.get("version") != VERSION
        or any(key not in data for key in required)
        or not isinstance(data.get("log_size"), int)
        or not all(_own_file(data[key], key) for key in _PARTS)
    ):
        return stamp, {"corrupt": True}
    return stamp, data


def save_manifest(directory: Path, manifest: dict) -> Stamp:
    """Replace `local.json` atomically (no temp file left on failure); its new stamp."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / MANIFEST
    tmp = directory / f".{MANIFEST}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(manifest), encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return stamp_of(path)


def read_rows(directory: Path, manifest: dict) -> tuple[list, list]:
    """(ids, keys) of the generation's rows (None: a dead row)."""
    ids, keys = json.loads((directory / manifest["rows"]).read_bytes())
    if not (_names(ids) and _names(keys) and len(ids) == len(keys)):
        raise ValueError("rows")
    return ids, keys


def read_log(directory: Path, manifest: dict, start: int, dim: int) -> list[Record]:
    """The log records between byte `start` and the manifest's log_size."""
    end = manifest["log_size"]
    if end == start:
        return []
    if end < start:
        raise ValueError("the log shrank")
    with open(directory / manifest["log"], "rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    if len(data) != end - start:
        raise ValueError("the log is shorter than the manifest says")
    records, offset = [], 0
    while offset < len(data):
        magic, size, crc = _HEADER.unpack_from(data, offset)
        payload = data[offset + _HEADER.size : offset + _HEADER.size + size]
        if magic != _MAGIC or len(payload) != size or zlib.crc32(payload) != crc:
            raise ValueError("a damaged log record")
        records.append(decode(payload, dim))
        offset += _HEADER.size + size
    return records


def append_log(directory: Path, manifest: dict, record: bytes) -> dict:
    """Append one record after the manifest's log_size (a torn tail cut first) and
    return the manifest to save (its new log_size)."""
    log = directory / manifest["log"]
    with open(log, "r+b" if log.exists() else "w+b") as handle:
        handle.truncate(manifest["log_size"])
        handle.seek(manifest["log_size"])
        handle.write(_HEADER.pack(_MAGIC, len(record), zlib.crc32(record)))
        handle.write(record)
        size = handle.tell()
    return {**manifest, "log_size": size}


def write_generation(
    directory: Path,
    vectors: VectorIndex,
    keyword: KeywordIndex,
    rows: tuple[list, list],
    head: dict,
) -> tuple[Stamp, dict]:
    """Write a new generation (vectors, postings, rows (ids, keys), an empty log), then
    the manifest (`head`: model, dim, count) naming it; (stamp, manifest). A failure
    removes what was written of it. The previous generation's files stay: remove_stale."""
    directory.mkdir(parents=True, exist_ok=True)
    generation = os.urandom(6).hex()
    names = {
        "vectors": f"vectors-{generation}.{vectors.suffix}",
        "keyword": f"keyword-{generation}.kw",
        "rows": f"rows-{generation}.json",
        "log": f"log-{generation}.bin",
    }
    manifest = {
        "version": VERSION,
        **head,
        "generation": generation,
        "kind": vectors.kind,
        **names,
        "log_size": 0,
    }
    try:
        try:
            vectors.save(directory / names["vectors"])
        except RuntimeError as exc:  # FAISS reports a refused write as text
            refused = os_error_of(exc)
            if refused is None:
                raise
            raise refused from exc
        keyword.save(directory / names["keyword"])
        tmp = directory / (names["rows"] + ".tmp")
        tmp.write_bytes(json.dumps(list(rows)).encode("utf-8"))
        tmp.replace(directory / names["rows"])
        (directory / names["log"]).write_bytes(b"")
        stamp = save_manifest(directory, manifest)
    except BaseException:
        # a full disk or a kill: the half-written generation goes, the old one stays
        for partial in directory.glob(f"*-{generation}*"):
            with contextlib.suppress(OSError):
                partial.unlink()
        raise
    return stamp, manifest


def remove_stale(directory: Path, generation: str) -> None:
    """Remove the files of every generation but `generation`."""
    for stale in directory.glob("*-*"):
        if stale.name.startswith(_FILES) and generation not in stale.name:
            with contextlib.suppress(OSError):
                stale.unlink()


def encode(
    op: str,
    ids: list[str],
    keys: list[str] | None = None,
    texts: list[str] | None = None,
    vectors: np.ndarray | None = None,
) -> bytes:
    """A log record: a JSON header line (op, ids, keys, keyword texts), then for an
    upsert the float32 vectors, row after row."""
    head = (
        {"op": op, "ids": ids}
        if op == "d"
        else {"op": op, "ids": ids, "keys": keys, "texts": texts}
    )
    raw = b"" if vectors is None else np.ascontiguousarray(vectors, dtype=np.float32).tobytes()
    return json.dumps(head).encode("ascii") + b"\n" + raw


def decode(payload: bytes, dim: int) -> Record:
    """("u", ids, keys, vectors, texts) or ("d", ids) of a log record; ValueError (or
    KeyError, TypeError) for anything else."""
    line, _, raw = payload.partition(b"\n")
    head = json.loads(line)
    ids = head["ids"]
    if not (_names(ids) and None not in ids):
        raise ValueError("log record ids")
    if head["op"] == "d":
        return ("d", ids)
    keys, texts = head["keys"], head["texts"]
    if head["op"] != "u" or not (_names(keys) and _names(texts)):
        raise ValueError("log record")
    if len(keys) != len(ids) or len(texts) != len(ids) or len(raw) != len(ids) * dim * 4:
        raise ValueError("log record sizes")
    vectors = np.frombuffer(raw, dtype=np.float32).reshape(len(ids), dim)
    return ("u", ids, keys, vectors, texts)


#: what a list of names may hold (JSON gives exactly these types)
_NAME_TYPES = frozenset((str, type(None)))


def _names(values: object) -> bool:
    """A list of strings (None allowed: a dead row). The types are collected at C speed:
    a Python test per value cost ≈ 40 ms of a cold read at 100k rows (ids and keys)."""
    return isinstance(values, list) and _NAME_TYPES.issuperset(set(map(type, values)))


def _own_file(name: object, kind: str) -> bool:
    """A file name of the index folder for that part (never a path elsewhere)."""
    return (
        isinstance(name, str)
        and name.startswith(f"{kind}-")
        and "/" not in name
        and "\\" not in name
        and name not in (".", "..")
    )

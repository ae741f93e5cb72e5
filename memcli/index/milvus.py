"""The Milvus index backend (`[index] backend = "milvus"`): one collection, many workspaces.

`uri` is a file path (embedded Milvus Lite: one process at a time per file) or
`http(s)://host:port` (a Milvus standalone or cluster server, or a managed Milvus);
`token` authenticates there. One collection serves many workspaces: each row is keyed
`<workspace>:<entry id>` and the workspace column is the partition key, so a search
only touches its own workspace. Vectors come from memcli's own embedder (the same as
the local backend's); the keyword side is Milvus's BM25 over memcli's own keyword terms
(stems, stop words dropped, CJK characters and bigrams: `terms`), so both backends count
the same terms in Chinese as in English. Scores for given ids come on the same scale as
the searches' (dense: the stored vectors; keyword: read from the workspace's top
KEYWORD_POOL BM25 hits), so the ranking formula fills in candidates that only one
retriever returned the same way on both backends.

pymilvus is imported only here and in memcli.index.milvus_schema (the collections it
creates), and only when this backend is chosen (≈ 0.5 s). The module is over 500 lines
because it is the one place that speaks pymilvus's data calls: the connection and its
errors, and the protocol's methods. The writer lease
(one writer per workspace, held while a sync writes) is memcli.index.lease; this module
keeps its record in the workspaces collection.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memcli.core.errors import ConfigError, MemcliError
from memcli.index.lease import LEASE_SECONDS, Lease, WriterConflict, released_on_sigterm
from memcli.index.milvus_schema import create_index, create_workspaces
from memcli.index.protocol import Allowed, Fingerprint, Scored
from memcli.index.tokenize import tokenize

MAX_TEXT_BYTES = 60_000  # under Milvus's 65,535-byte VARCHAR limit
MAX_TOPK = 16_384  # Milvus's limit on k and on rows per query
ID_CHUNK = 1_000  # ids per `in [...]` expression
KEYWORD_POOL = 1_000  # BM25 hits read to score given ids or to filter by allowed ids


class IndexUnavailable(MemcliError):
    """The engine could not be reached or refused the request."""


class MilvusBackend:
    """IndexBackend over a Milvus collection (see the module docstring)."""

    #: other clones of the workspace may write to it (memcli.services.indexing then never
    #: deletes an entry this clone's files never held)
    shared = True

    def __init__(
        self,
        uri: str,
        workspace: str,
        *,
        collection: str = "memcli",
        token: str | None = None,
        bm25: tuple[float, float] = (1.2, 0.75),
        hnsw: tuple[int, int, int] = (16, 200, 64),
    ) -> None:
        if not uri:
            raise ConfigError(
                'memcli.toml: [index] backend = "milvus" needs [index] uri',
                hint="a file path for Milvus Lite, or http://host:19530 for a server",
            )
        self.uri = uri
        self.workspace = workspace
        self.collection = collection
        self.token = token
        self.bm25 = bm25
        self.hnsw_m, self.hnsw_ef_construction, self.hnsw_ef_search = hnsw
        self._client: Any = None
        self._dim: int | None = None
        self._model: str | None = None
        #: the workspace's writer lease (memcli.index.lease), taken on the first write
        self.lease = Lease(self._record, self._write_record, self._conflict)
        self._wait = 0.0  # how long a write waits for a live writer (see writing)
        self._ready_collections: set[str] = set()

    # ------------------------------------------------------------------ connection

    @property
    def client(self) -> Any:
        if self._client is None:
            # gRPC's core logs to stderr, e.g. a server's "too_many_pings" GOAWAY to an
            # idle watcher's keepalive (the channel reconnects): memcli reports errors
            os.environ.setdefault("GRPC_VERBOSITY", "NONE")
            from pymilvus import MilvusClient

            _quiet_logs()  # after the import: pymilvus configures its loggers on import
            if "://" not in self.uri:  # Milvus Lite: a file, in a folder that must exist
                Path(self.uri).expanduser().parent.mkdir(parents=True, exist_ok=True)
            options: dict[str, Any] = {"uri": self.uri}
            if self.token:
                options["token"] = self.token
            try:
                self._client = MilvusClient(**options)
            except Exception as exc:  # noqa: BLE001 - pymilvus raises several kinds
                raise _unavailable(self.uri, exc) from None
        return self._client

    def _refresh(self) -> None:
        """Learn whether the collection exists now (another process may have made it)."""
        client = self.client
        if self._dim is None and self._call(client.has_collection, self.collection):
            self._call(client.load_collection, self.collection)
            self._dim = _dense_dim(self._call(client.describe_collection, self.collection))

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemcliError:
            raise
        except Exception as exc:  # noqa: BLE001 - pymilvus raises several kinds
            raise _unavailable(self.uri, exc) from None

    def _workspace_expr(self) -> str:
        return f"workspace == {_literal(self.workspace)}"

    def _expr(self, ids: Sequence[str] | None = None) -> str:
        expr = self._workspace_expr()
        if ids is not None:
            expr += f" and entry_id in {json.dumps(list(ids), ensure_ascii=False)}"
        return expr

    # ------------------------------------------------------------------ protocol

    def revision(self) -> str:
        """Changes whenever this workspace's index changes (each write stamps one)."""
        if not self._exists():
            return ""
        return str(self._record().get("rev") or "")

    def fingerprint(self) -> Fingerprint:
        if not self._exists():
            return Fingerprint()
        keys: dict[str, str] = {}
        models: set[str] = set()
        for row in self._rows(["entry_id", "key", "model"]):
            keys[row["entry_id"]] = row["key"]
            models.add(row["model"])
        recorded = self._record().get("model") or None
        if len(models) > 1 or (models and recorded and models != {recorded}):
            found = ", ".join(sorted(models | ({recorded} if recorded else set())))
            return Fingerprint(damaged=f"rows of several models ({found})")
        model = recorded or (models.pop() if models else None)
        if model is None:
            return Fingerprint()
        return Fingerprint(model=model, dim=self._dim, keys=keys)

    def reset(self, model: str, dim: int) -> None:
        client = self.client
        self._refresh()
        self.lease.take(self._wait)
        if self._dim is not None and self._dim != dim:
            if self._only_workspace():
                self._call(client.drop_collection, self.collection)
                self._dim = None
            else:
                raise ConfigError(
                    f"Milvus collection {self.collection!r} holds {self._dim}-d vectors; "
                    f"{model} gives {dim}-d and other workspaces share the collection",
                    hint="name another [index] collection in memcli.toml",
                )
        if self._dim is None:
            self._create(dim)
        self._call(client.delete, self.collection, filter=self._workspace_expr())
        self._model = model
        self._write_record(model=model, rev=uuid.uuid4().hex)

    def upsert(
        self,
        ids: Sequence[str],
        vectors: np.ndarray,
        texts: Sequence[str],
        keys: Sequence[str],
    ) -> None:
        if not len(ids):
            return
        if not self._exists():
            self._create(int(vectors.shape[1]))
        self.lease.take(self._wait)
        if self._model is None:
            self._model = self.fingerprint().model or "unknown"
        model = self._model
        rows = [
            {
                "pk": f"{self.workspace}:{entry_id}",
                "workspace": self.workspace,
                "entry_id": entry_id,
                "key": key,
                "model": model,
                "text": _clip(terms(text)),
                "dense": vector.astype(np.float32).tolist(),
            }
            for entry_id, vector, text, key in zip(ids, vectors, texts, keys, strict=True)
        ]
        for start in range(0, len(rows), ID_CHUNK):
            self.lease.take(self._wait)  # renewed while a long upsert runs
            self._call(self.client.upsert, self.collection, rows[start : start + ID_CHUNK])
        self._write_record(rev=uuid.uuid4().hex)

    def delete(self, ids: Sequence[str]) -> None:
        if not ids or not self._exists():
            return
        self.lease.take(self._wait)
        for chunk in _chunks(list(ids)):
            self._call(self.client.delete, self.collection, filter=self._expr(chunk))
        self._write_record(rev=uuid.uuid4().hex)

    def dense_search(self, vector: np.ndarray, k: int, allowed: Allowed = None) -> Scored:
        if k <= 0 or not self._exists() or (allowed is not None and not allowed):
            return _empty()
        data = [np.asarray(vector, dtype=np.float32).tolist()]
        if allowed is not None and len(allowed) > ID_CHUNK:
            # many allowed ids (say, all but the archived): one unrestricted search read
            # deep enough, rather than an `in [...]` search per thousand ids
            wanted = min(MAX_TOPK, 4 * k + ID_CHUNK)
            params = {"metric_type": "IP", "params": {"ef": max(self.hnsw_ef_search, wanted)}}
            found = self._search(data, "dense", wanted, None, params, False)
            keep = [n for n, entry_id in enumerate(found.ids) if entry_id in allowed][:k]
            if len(keep) >= k or len(found) < wanted:
                return Scored([found.ids[n] for n in keep], found.scores[keep])
        params = {"metric_type": "IP", "params": {"ef": max(self.hnsw_ef_search, min(k, MAX_TOPK))}}
        return self._search(data, "dense", k, allowed, params, False)

    def keyword_search(self, query: str, k: int, allowed: Allowed = None) -> Scored:
        nothing_allowed = allowed is not None and not allowed
        if k <= 0 or not query.strip() or nothing_allowed or not self._exists():
            return _empty()
        wanted = k if allowed is None else max(4 * k, KEYWORD_POOL)
        top, full = self._bm25(query, wanted)
        if allowed is not None:
            top = {i: s for i, s in top.items() if i in allowed}
            if len(top) < k and full:  # more allowed ones may lie deeper
                for entry_id, score in self._bm25(query, k, list(allowed))[0].items():
                    top.setdefault(entry_id, score)
        ranked = sorted(top.items(), key=lambda item: -item[1])[:k]
        return Scored([i for i, _ in ranked], np.asarray([s for _, s in ranked], dtype=np.float32))

    def dense_scores(self, vector: np.ndarray, ids: Sequence[str]) -> np.ndarray:
        out = np.zeros(len(ids), dtype=np.float32)
        if not ids or not self._exists():
            return out
        where = {entry_id: n for n, entry_id in enumerate(ids)}
        query = np.asarray(vector, dtype=np.float32)
        for chunk in _chunks(list(dict.fromkeys(ids))):
            rows = self._call(
                self.client.query,
                self.collection,
                filter=self._expr(chunk),
                output_fields=["entry_id", "dense"],
            )
            for row in rows:
                stored = np.asarray(row["dense"], dtype=np.float32)
                out[where[row["entry_id"]]] = float(stored @ query)
        return _spread(out, ids, where)

    def keyword_scores(self, query: str, ids: Sequence[str]) -> np.ndarray:
        """BM25 of each id, read from the workspace's top KEYWORD_POOL (at least) for
        `query`: an id deeper than that scores 0. Milvus Lite computes BM25 statistics
        over the rows a filter leaves, so restricting the search to `ids` would score
        them on another scale than keyword_search's."""
        if not ids or not query.strip() or not self._exists():
            return np.zeros(len(ids), dtype=np.float32)
        top, _ = self._bm25(query, max(KEYWORD_POOL, 10 * len(ids)))
        return np.asarray([top.get(entry_id, 0.0) for entry_id in ids], dtype=np.float32)

    def keyword_ideal(self, query: str) -> float | None:
        return None  # BM25 statistics live on the server (search: saturated keyword side)

    def count(self) -> int:
        if not self._exists():
            return 0
        rows = self._call(
            self.client.query,
            self.collection,
            filter=self._workspace_expr(),
            output_fields=["count(*)"],
        )
        return int(rows[0]["count(*)"]) if rows else 0

    def flush(self) -> None:
        if self._client is not None and self._exists():
            self._call(self._client.flush, self.collection)

    def close(self) -> None:
        if self._client is not None:
            try:
                self.flush()
                self.lease.release()
            finally:
                client, self._client = self._client, None
                with contextlib.suppress(Exception):  # closing a dead connection
                    client.close()

    # ------------------------------------------------------------------ internals

    @contextlib.contextmanager
    def writing(self, wait: float = 0.0) -> Iterator[None]:
        """The writes of one sync: the lease is taken at the first write (waiting up to
        `wait` seconds for a live writer) and given back when the block ends, however it
        ends (SIGTERM too, unless the process handles it itself)."""
        self._wait = wait
        try:
            with released_on_sigterm():
                yield
        finally:
            self._wait = 0.0
            if self._client is not None:
                with contextlib.suppress(MemcliError):  # the server went: it reports itself
                    self.lease.release()

    def _record(self) -> dict[str, Any]:
        """This workspace's row in the workspaces collection: model, holder, beat."""
        rows = self._call(
            self.client.query,
            self._workspaces(),
            filter=f"pk == {_literal(self.workspace)}",
            output_fields=["model", "holder", "beat", "rev"],
        )
        return dict(rows[0]) if rows else {}

    def _write_record(self, **changes: Any) -> None:
        record = {"model": "", "holder": "", "beat": 0, "rev": "", **self._record(), **changes}
        row = {
            "pk": self.workspace,
            "rev": record["rev"],
            "model": record["model"],
            "holder": record["holder"],
            "beat": int(record["beat"]),
            "v": [0.0, 0.0],
        }
        self._call(self.client.upsert, self._workspaces(), [row])

    def _conflict(self, holder: str, age: float) -> WriterConflict:
        where = f"Milvus at {self.uri}, workspace {self.workspace!r}"
        return WriterConflict(
            f"{where}: the index is written by {holder} (seen {age:.0f} s ago); one writer "
            "per workspace, nothing was changed",
            hint="let that memcli (a watcher?) do the writing, or stop it; a writer that "
            f"has exited is taken over at once, one on another host silent for "
            f"{LEASE_SECONDS:.0f} s too",
            holder=holder,
            age=age,
            where=where,
        )

    def _workspaces(self) -> str:
        """The small collection beside the index with one row per workspace: the model
        its index was built with, and its writer lease (created once)."""
        name = f"{self.collection}_workspaces"
        if name not in self._ready_collections:
            create_workspaces(self.client, name, self._call)
            self._ready_collections.add(name)
        return name

    def _exists(self) -> bool:
        self._refresh()
        return self._dim is not None

    def _only_workspace(self) -> bool:
        rows = self._call(
            self.client.query,
            self.collection,
            filter=f"workspace != {_literal(self.workspace)}",
            output_fields=["pk"],
            limit=1,
        )
        return not rows

    def _create(self, dim: int) -> None:
        create_index(
            self.client,
            self.collection,
            dim,
            (self.hnsw_m, self.hnsw_ef_construction),
            self.bm25,
            self._call,
        )
        self._dim = dim

    def _bm25(
        self, query: str, k: int, allowed: list[str] | None = None
    ) -> tuple[dict[str, float], bool]:
        """The `k` best BM25 scores > 0 by id (among `allowed`), and whether the search
        returned all `k` (more may lie deeper)."""
        query = terms(query)
        if not query:
            return {}, False
        k = min(k, MAX_TOPK)
        found = self._search([query], "sparse", k, allowed, {"metric_type": "BM25"}, True)
        scores = {i: float(s) for i, s in zip(found.ids, found.scores, strict=True) if s > 0}
        return scores, len(found) >= k

    def _rows(self, fields: list[str]) -> Iterator[dict[str, Any]]:
        iterator = self._call(
            self.client.query_iterator,
            self.collection,
            filter=self._workspace_expr(),
            output_fields=fields,
            batch_size=2_000,
        )
        try:
            while True:
                batch = self._call(iterator.next)
                if not batch:
                    return
                yield from batch
        finally:
            iterator.close()

    def _search(
        self,
        data: list[Any],
        field: str,
        k: int,
        allowed: Allowed,
        params: dict[str, Any],
        negated: bool,
    ) -> Scored:
        ids_out: list[str] = []
        scores: list[float] = []
        chunks = [None] if allowed is None else _chunks(list(allowed))
        for chunk in chunks:
            result = self._call(
                self.client.search,
                self.collection,
                data=data,
                anns_field=field,
                limit=min(k, MAX_TOPK),
                filter=self._expr(chunk),
                output_fields=["entry_id"],
                search_params=params,
            )
            for hit in result[0]:
                distance = float(hit["distance"])
                ids_out.append(hit["entity"]["entry_id"])
                # BM25: Milvus Lite returns the negated score (it sorts ascending)
                scores.append(abs(distance) if negated else distance)
        order = np.argsort(-np.asarray(scores, dtype=np.float32), kind="stable")[:k]
        return Scored([ids_out[i] for i in order], np.asarray(scores, dtype=np.float32)[order])


def _unavailable(uri: str, exc: BaseException) -> IndexUnavailable:
    """The error for a Milvus call that failed, with what to check."""
    message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    fallback = "meanwhile MEMCLI_INDEX_BACKEND=local searches the local index"
    if "://" not in uri and "open local milvus failed" in message.lower():
        hint = (
            "Milvus Lite opens a file in one process at a time: is another memcli (a "
            f"watcher?) using it? {fallback}"
        )
    elif "://" in uri:
        hint = f"is the server up and the token right? {fallback}"
    else:
        hint = f"check [index] uri in memcli.toml; {fallback}"
    return IndexUnavailable(f"Milvus at {uri}: {message}", hint=hint)


def terms(text: str) -> str:
    """memcli's own keyword terms (memcli.index.tokenize: stems, stop words dropped, CJK
    characters and bigrams) as words Milvus's standard tokenizer keeps whole: so both
    backends count the same terms. A term that is not plain a-z0-9 goes as its hex."""
    out = []
    for term in tokenize(text):
        out.append(term if _PLAIN.fullmatch(term) else "x" + term.encode("utf-8").hex())
    return " ".join(out)


_PLAIN = re.compile(r"[a-z0-9]+")


def _dense_dim(description: dict[str, Any]) -> int | None:
    for field in description.get("fields", []):
        if field.get("name") == "dense":
            return int(field.get("params", {}).get("dim"))
    return None


def _literal(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _clip(text: str) -> str:
    data = text.encode("utf-8")
    if len(data) <= MAX_TEXT_BYTES:
        return text
    return data[:MAX_TEXT_BYTES].decode("utf-8", errors="ignore")


def _chunks(ids: list[str]) -> list[list[str]]:
    return [ids[start : start + ID_CHUNK] for start in range(0, len(ids), ID_CHUNK)]


def _spread(out: np.ndarray, ids: Sequence[str], where: dict[str, int]) -> np.ndarray:
    """Copy each id's score to its repeated positions (where kept the last one)."""
    for n, entry_id in enumerate(ids):
        out[n] = out[where[entry_id]]
    return out


def _empty() -> Scored:
    return Scored([], np.zeros(0, dtype=np.float32))


def _quiet_logs() -> None:
    """pymilvus logs every failed RPC with a traceback: memcli reports errors itself."""
    for name in ("pymilvus", "pymilvus.milvus_client"):
        logging.getLogger(name).setLevel(logging.CRITICAL)

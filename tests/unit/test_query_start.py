"""A one-off search starts its query embedder (and embeds the query) in a thread while
the index loads, an inject while tiktoken loads (IndexManager.start_query_embedder);
the embedder the thread made is the one used, made once; a failed start is made again
where the search asks for it, failing there as it always did. Pure logic, with the
hashing embedder: the real ONNX path is tests/integration/test_query_tokenizer.py and
the cold searches of tests/process."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

from tests.support.env import SAMPLE
from tests.support.fakes import HashingEmbedder, fake_memory


class Prefetching(HashingEmbedder):
    """The hashing embedder with OnnxEmbedder's prefetch: what it made, on which thread."""

    def __init__(self) -> None:
        super().__init__()
        self.made_on = threading.current_thread().name
        self.prefetched: list[str] = []
        self.taken: list[str] = []

    def prefetch(self, texts: list[str]) -> None:
        self.prefetched.extend(texts)

    def embed(self, texts):  # noqa: ANN001, ANN201
        self.taken.extend(t for t in texts if t in self.prefetched)
        return super().embed(texts)


@pytest.fixture
def mem(tmp_path: Path):  # noqa: ANN201 - Memory with the fake query factory
    ws = tmp_path / "ws"
    shutil.copytree(SAMPLE, ws, ignore=shutil.ignore_patterns(".memcli"))
    memory = fake_memory(ws)
    memory.index()
    made: list[Prefetching] = []

    def factory() -> Prefetching:
        made.append(Prefetching())
        return made[-1]

    memory = fake_memory(ws)  # a fresh process's Memory: no query embedder yet
    memory.index_manager._query_factory = factory
    memory.made = made
    return memory


def test_a_search_starts_it_ahead_and_uses_it(mem) -> None:  # noqa: ANN001
    hits = mem.search("python tests", touch=False)
    assert hits
    assert len(mem.made) == 1
    embedder = mem.made[0]
    assert embedder.made_on == "memcli-query-embedder"  # not the search's own thread
    assert embedder.prefetched == ["python tests"] and embedder.taken == ["python tests"]
    assert mem.index_manager.query_embedder is embedder
    mem.search("another query", touch=False)
    assert len(mem.made) == 1  # there: nothing started again


def test_a_keyword_search_starts_nothing(mem) -> None:  # noqa: ANN001
    mem.search("python tests", mode="keyword", touch=False)
    assert mem.made == []


def test_an_inject_starts_it_before_counting_tokens(mem, monkeypatch) -> None:  # noqa: ANN001
    from memcli.services import inject

    seen = []
    real = inject.counter_for

    def counting(rt, request):  # noqa: ANN001, ANN202
        seen.append(rt.index_manager._starting is not None or rt.index_manager._query)
        return real(rt, request)

    monkeypatch.setattr(inject, "counter_for", counting)
    mem.inject("how do I run python tests", touch=False)
    assert seen == [True]  # started before the token counter loads
    assert len(mem.made) == 1 and mem.made[0].made_on == "memcli-query-embedder"


def test_a_failed_start_is_made_again_where_it_is_asked_for(mem) -> None:  # noqa: ANN001
    calls = []

    def failing() -> Prefetching:
        calls.append(threading.current_thread().name)
        raise RuntimeError("no session today")

    mem.index_manager._query_factory = failing
    with pytest.raises(RuntimeError, match="no session today"):
        mem.search("python tests", touch=False)
    assert calls == ["memcli-query-embedder", threading.current_thread().name]

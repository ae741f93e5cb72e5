"""Fixtures for every kind of test (unit/, integration/, process/): a copy of the sample
workspace per test, a CLI runner, and an environment isolated from the developer's."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from typer.testing import CliRunner

from tests.support.env import SAMPLE, isolate

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# A test process that has used pymilvus keeps gRPC threads; a later fork for a child with a
# preexec_fn (resource limits) would run gRPC's fork handlers half-way. The children exec
# at once and need none of them.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # one of several workers (pytest-xdist, `-n` in pyproject.toml): torch's and FAISS's
    # thread pools one thread each, here and in the processes it starts, so the workers
    # do not fight over the cores (set before anything imports torch or FAISS)
    for _threads in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_threads, "1")

# Property tests are the same on every run in CI (a failure reproduces; no red build by
# luck of the seed), and a slow shared machine never fails one on time. Counterexamples
# found by exploring (HYPOTHESIS_PROFILE=explore) go into the test as @example.
settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=100,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "explore", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

#: at most this many xdist workers for `-n auto`: each may load the model (≈ 1 GB)
MAX_WORKERS = 4


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker per core this process may use and one more, at most
    MAX_WORKERS (PYTEST_XDIST_AUTO_NUM_WORKERS overrides): many tests wait on the
    processes they start, and a third worker on two cores took the suite from 428 to
    384 s (December 7)."""
    given = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if given.isdigit():
        return int(given)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min((cores or 1) + 1, MAX_WORKERS))


#: the longest tests of the suite (seconds of wall time on 2 cores, `--durations`,
#: December 7), started before the other slow tests so none of them is left running alone
#: at the end; a test not named here keeps its place
LONGEST = (
    "tests/process/test_first_run.py::test_init_prepares_the_model_and_a_first_hook_answers",
    "tests/process/test_reliability.py::test_editors_racing_memcli_lose_nothing[inplace]",
    "tests/process/test_mutations.py::test_a_few_mutations_are_caught_in_a_copy",
    "tests/process/test_milvus_server.py::test_two_clones_watchers_cli_and_mcp_on_one_server",
    "tests/integration/test_agent_forget.py::test_an_agent_forgets_its_own_at_once",
    "tests/integration/test_watch.py::test_watcher_updates_incrementally_like_a_full_read",
    "tests/integration/test_compress.py::test_compress_twice_changes_nothing_on_a_generated",
    "tests/process/test_milvus_lease.py::test_commands_in_a_row_on_a_milvus_lite_workspace",
    "tests/process/test_reliability.py::test_damaged_derived_state_is_rebuilt",
    "tests/process/test_reliability.py::test_issue_14_attacks_do_no_harm",
    "tests/process/test_files_registry.py::test_a_curated_file_by_configuration_alone",
    "tests/process/test_gitmerge.py::test_a_confirm_on_one_machine_and_an_agents_rewrite",
    "tests/integration/test_watch.py::test_served_and_in_process_outputs_are_byte_identical",
    "tests/process/test_gitmerge.py::test_concurrent_forgets_restores_and_edits_of_the_same",
    "tests/process/test_install.py::test_installed_claude_code_hooks_end_to_end",
    "tests/process/test_no_network.py::test_no_command_opens_a_network_connection",
    "tests/process/test_discovery.py::test_the_round3_scenarios_find_no_harm",
)


def _longest_first(item: pytest.Item) -> tuple[bool, int]:
    """Slow tests first, the LONGEST of them in its order, then the others as collected."""
    rank = next((i for i, name in enumerate(LONGEST) if item.nodeid.startswith(name)), None)
    return item.get_closest_marker("slow") is None, len(LONGEST) if rank is None else rank


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow tests first, the longest of them first, each kind in its own order: with
    xdist workers the long tests start at once and the quick ones fill in at the end,
    instead of one long test running alone after everything else."""
    items.sort(key=_longest_first)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A fresh copy of the sample workspace (without derived state)."""
    target = tmp_path / "ws"
    shutil.copytree(SAMPLE, target, ignore=shutil.ignore_patterns(".memcli"))
    return target


@pytest.fixture
def empty_workspace(tmp_path: Path) -> Path:
    from memcli.store.workspace import init_workspace

    target = tmp_path / "empty"
    init_workspace(target)
    return target


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture(scope="session", autouse=True)
def session_cache(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    """One user cache (ONNX export) for the whole run, shared by its xdist workers, set
    before any other fixture: exporting takes seconds, and tests must not touch the
    developer's cache."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # this run's folder, above each worker's own
    path = base / "xdg-cache"
    path.mkdir(exist_ok=True)
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(path)
    yield path
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved


@pytest.fixture(scope="session")
def session_export(session_cache: Path):  # noqa: ANN201 - SentenceTransformerEmbedder or None
    """The ONNX export of the bundled model in the session's cache, and the check of its
    numpy query path (memcli.index.query_engine), made once for all workers (by the first that needs it; the others wait for it): the memcli processes a
    test starts load the export, instead of each loading torch to make it alongside the
    others (≈ 9 s of CPU each). A worker that finds it made loads nothing; the one that
    made it returns its loaded model (exported takes it)."""
    from filelock import FileLock

    from memcli.index import onnx_embedder, query_engine
    from memcli.index.embedder import SentenceTransformerEmbedder, model_id_for

    with FileLock(str(session_cache / "export.lock")):
        if onnx_embedder.is_exported(model_id_for("")):
            assert query_engine.ensure_checked(model_id_for(""), "")  # the numpy path's
            return None
        reference = SentenceTransformerEmbedder()
        assert query_engine.export("", reference)  # and the numpy path checked against it
        assert query_engine.checked(model_id_for(""), "") is not None
        return reference


@pytest.fixture(autouse=True)
def _export_before_slow_tests(request: pytest.FixtureRequest) -> None:
    """A slow test outside tests/unit (the real model, real processes) starts with the
    session's export made (session_export), whichever test of the run comes first."""
    if request.node.get_closest_marker("slow") and "unit" not in request.node.path.parts:
        request.getfixturevalue("session_export")


@pytest.fixture(scope="session")
def exported(session_export):  # noqa: ANN001, ANN201 - SentenceTransformerEmbedder, lazily imported
    """The bundled model (sentence-transformers, torch; loaded when first used) and its
    ONNX export in the session's cache (session_export): watchers and cold searches
    load the export."""
    from memcli.index import onnx_embedder
    from memcli.index.embedder import SentenceTransformerEmbedder

    reference = session_export or SentenceTransformerEmbedder()
    assert onnx_embedder.is_exported(reference.model_id)
    return reference


@pytest.fixture
def watched(workspace: Path, exported):  # noqa: ANN201 - (workspace, its watcher process)
    """A `memcli watch` of this test's own on its own copy of the sample workspace,
    stopped afterwards if the test did not stop it."""
    from tests.support.processes import start_watch, stop_watch

    proc = start_watch(workspace)
    yield workspace, proc
    stop_watch(proc)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session_cache: Path) -> None:
    """No test reads the developer's own workspace, settings or caches."""
    isolate(monkeypatch, tmp_path, session_cache)


@pytest.fixture(scope="session")
def milvus_server(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201 - MilvusServer
    """One `milvus-lite server` process on 127.0.0.1 for the whole run, shared by the
    tests that use it (each its own collection or workspace key); skipped without the
    milvus extra."""
    from tests.support.milvus_server import MilvusServer, available

    if not available():
        pytest.skip("the milvus extra (pymilvus, milvus-lite >= 3) is not installed")
    server = MilvusServer(tmp_path_factory.mktemp("milvus") / "data").start()
    yield server
    server.stop()

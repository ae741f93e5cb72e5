"""The Milvus writer lease as commands in a row use it (issue 28): each a real `memcli`
process on a Milvus workspace, none waiting for a process that has exited."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.milvus_server import append, hold_lease
from tests.support.processes import memcli, search_ids

pytestmark = pytest.mark.slow


def lease_holder(ws: Path) -> str:
    """Who the index's record names as its writer ("" when nobody), asked by another
    process (Milvus Lite serves a file to one process, until that process exits)."""
    code = (
        "import sys\n"
        "from memcli.index.backend import open_backend\n"
        "from memcli.store.config import load_settings\n"
        "ws = __import__('pathlib').Path(sys.argv[1])\n"
        "backend = open_backend(load_settings(ws).index, ws / '.memcli' / 'index')\n"
        "print('holder=' + str(backend._record().get('holder') or ''))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ws)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().removeprefix("holder=")


def test_commands_in_a_row_on_a_milvus_lite_workspace(
    workspace: Path, tmp_path: Path, exported: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """index; search; hand edit; search sees it; add; search sees it; a writer killed
    while it held the lease; a hand edit; search sees it at once."""
    pytest.importorskip("pymilvus")
    monkeypatch.setenv("MEMCLI_INDEX_BACKEND", "milvus")
    monkeypatch.setenv("MEMCLI_INDEX_URI", str(tmp_path / "lite" / "milvus.db"))

    done = memcli(workspace, "index")
    assert done.returncode == 0, done.stderr
    assert search_ids(workspace, "Python tests")[0] == "m8f3a2c1"  # refused before: a lease
    append(workspace, "- The build server is called zebrafish <!-- id=mzebra01 -->")
    assert search_ids(workspace, "zebrafish build server")[0] == "mzebra01"
    done = memcli(workspace, "add", "The office wifi password rotates on Mondays", "--json")
    assert done.returncode == 0, done.stderr
    found = memcli(workspace, "search", "wifi password", "--json", "--no-touch")
    assert found.returncode == 0, found.stderr
    assert "wifi password rotates" in json.loads(found.stdout)["data"]["hits"][0]["entry"]["text"]

    holder = hold_lease(workspace)
    holder.kill()  # SIGKILL: no `finally` gives the lease back
    holder.wait()
    assert f":{holder.pid}:" in lease_holder(workspace)
    append(workspace, "- The printer on floor two is named ocelot <!-- id=mocelot1 -->")
    done = memcli(workspace, "search", "ocelot printer", "--json", "--no-touch")
    assert done.returncode == 0, done.stderr  # the dead holder was taken over at once
    assert json.loads(done.stdout)["data"]["hits"][0]["id"] == "mocelot1"
    assert "behind" not in done.stderr

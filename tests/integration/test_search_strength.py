"""Strong, weak, nothing with the bundled model on the sample workspace (issue 38 item 4):
an off-topic question finds nothing, a distant one gets its closest hits marked weak in
the terminal and in --json, and inject takes none of them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.surfaces.cli.app import app
from tests.support.env import ROOT

pytestmark = pytest.mark.slow

DISTANT = "how do I set up a MongoDB replica set"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("strength") / "ws"
    shutil.copytree(ROOT / "workspace", ws, ignore=shutil.ignore_patterns(".memcli"))
    return ws


def run(ws: Path, *args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["-w", str(ws), *args])
    return result.exit_code, result.stdout, result.stderr


def test_an_off_topic_query_is_weak_or_empty_and_inject_takes_none(sample: Path) -> None:
    code, out, err = run(sample, "search", DISTANT)
    assert code == 0 and "no strong match; closest:" in err
    lines = [line for line in out.splitlines() if line[:1].isdigit()]
    assert 1 <= len(lines) <= 3 and all("(weak)" in line for line in lines)
    code, out, _ = run(sample, "search", DISTANT, "--json")
    hits = json.loads(out)["data"]["hits"]
    assert hits and all(h["weak"] is True for h in hits)
    code, out, _ = run(sample, "inject", "-q", DISTANT, "--json")
    chosen = {e["id"] for e in json.loads(out)["data"]["entries"]}
    assert not chosen & {h["id"] for h in hits}  # the weak hits stay out of the block
    code, out, err = run(sample, "search", "how do I bake sourdough bread", "--json")
    assert code == 0 and json.loads(out)["data"]["hits"] == []


def test_a_strong_query_is_not_weak(sample: Path) -> None:
    code, out, err = run(sample, "search", "How should I write Python tests?", "--json")
    hits = json.loads(out)["data"]["hits"]
    assert code == 0 and len(hits) > 3 and not any(h.get("weak") for h in hits)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and all(0 < s <= 1 for s in scores)

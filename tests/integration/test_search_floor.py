"""Search that knows when nothing fits (issue 29): with the bundled model on the sample
workspace, a query about something the memory never mentions returns no hits ("no
matches" on stderr, exit 0, an empty list in --json), an on-topic one still finds its
entry, and --min-score filters on the same absolute scale in every query."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.surfaces.cli.app import app

pytestmark = pytest.mark.slow


def search(runner: CliRunner, ws: Path, *args: str):  # noqa: ANN201
    return runner.invoke(app, ["-w", str(ws), "search", *args, "--no-touch"])


@pytest.mark.parametrize(
    "query", ["how do I bake sourdough bread", "who won the football world cup in 1998"]
)
def test_an_off_topic_query_finds_nothing(
    workspace: Path, runner: CliRunner, exported: object, query: str
) -> None:
    shown = search(runner, workspace, query)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == "" and "no matches" in shown.stderr
    as_json = search(runner, workspace, query, "--json")
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["data"]["hits"] == []


def test_an_on_topic_query_still_finds_its_entry_and_min_score_is_absolute(
    workspace: Path, runner: CliRunner, exported: object
) -> None:
    found = json.loads(
        search(runner, workspace, "which test framework do I like for Python", "--json").stdout
    )["data"]["hits"]
    assert found and "pytest over unittest" in found[0]["entry"]["text"]
    best = found[0]["score"]
    strict = json.loads(
        search(
            runner, workspace, "which test framework do I like for Python", "--json",
            "--min-score", str(best - 1e-3),
        ).stdout
    )["data"]["hits"]  # fmt: skip
    assert [h["id"] for h in strict] == [found[0]["id"]]
    explained = json.loads(
        search(runner, workspace, "pytest fixtures", "--json", "--explain").stdout
    )["data"]["hits"]
    # relevance as it is, not rescaled so that the best hit of the query gets 1.0
    assert all(0 < h["components"]["relevance"] < 1 for h in explained)

"""Chinese notes through their English gloss, with the bundled model (issue 38: an
English question finds the Chinese note that answers it; memcli.index.gloss): found with
`index.gloss` on, not without it, and switching the setting embeds again only the
entries with Chinese in them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memcli.surfaces.cli.app import app

pytestmark = pytest.mark.slow

NOTES = """# Memory

## Facts
- 朵朵对花生过敏，点外卖一定要备注不要花生 <!-- id=mpeanut -->
- 绩效评估每年两次，3 月和 9 月 <!-- id=mreview -->
- 运单搜索用的是 OpenSearch，索引每天凌晨 2 点全量重建 <!-- id=msearch -->
- Uses neovim with lazy.nvim; never suggest VS Code settings <!-- id=meditor -->
- The main database is Postgres 15 on AWS RDS with two read replicas <!-- id=mdb -->
- Deploys go through Argo CD; nobody runs kubectl apply by hand <!-- id=mdeploy -->
- Runs three times a week; goal is a half marathon under 1:50 <!-- id=mrun -->
"""

QUESTIONS = {
    "peanut allergy": "mpeanut",
    "how often are performance evaluations": "mreview",
    "when is the search index rebuilt": "msearch",
}


def run(ws: Path, *args: str) -> dict:
    result = CliRunner().invoke(app, ["-w", str(ws), *args, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["data"]


def top(ws: Path, question: str) -> list[str]:
    return [h["id"] for h in run(ws, "search", question, "--no-touch")["hits"][:1]]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "memory.md").write_text(NOTES, encoding="utf-8")
    return root


def test_an_english_question_finds_the_chinese_note_through_its_gloss(ws: Path) -> None:
    run(ws, "index")
    for question, wanted in QUESTIONS.items():
        assert top(ws, question) == [wanted], question
    (ws / "memcli.toml").write_text("[index]\ngloss = false\n")
    report = run(ws, "index")
    assert report["changed"] == 3 and report["added"] == 0  # the Chinese notes only
    for question, wanted in QUESTIONS.items():
        assert top(ws, question) != [wanted], question  # the model cannot read them


def test_a_chinese_question_reads_through_its_gloss(ws: Path) -> None:
    run(ws, "index")
    explained = run(ws, "search", "我女儿对什么过敏", "--no-touch", "--explain")["hits"]
    assert explained[0]["id"] == "mpeanut"
    assert explained[0]["components"]["read"] == pytest.approx(0.75)  # search.gloss_vote
    # English notes that share no word with the question, found through its gloss
    for question, wanted in {"数据库有几个只读副本": "mdb", "半程马拉松": "mrun"}.items():
        assert top(ws, question) == [wanted], question


def test_an_inject_embeds_a_chinese_prompt_once_as_its_gloss(ws: Path) -> None:
    """The prompt and its parts are embedded ahead in one batch (inject's prefetch), as
    the searches then embed them: glossed. Each prefetched vector is taken."""
    from memcli.services.memory import Memory

    mem = Memory(ws)
    mem.index()
    prompt = "给花生过敏的女儿点外卖，顺便查一下运单搜索的索引什么时候重建"
    block = mem.inject(prompt, touch=False, fmt="json")
    engine = mem.runtime.index_manager.query_embedder
    assert hasattr(engine, "_fetched")  # the numpy or ONNX path, which prefetches
    assert not engine._fetched, list(engine._fetched)  # each taken by its search
    assert "mpeanut" in str(block)


def test_a_query_in_another_script_is_not_read_as_a_gloss(ws: Path) -> None:
    """Hangul is not glossed: a Korean question is embedded as written, so its cosine
    counts for no note (as before glossing), Chinese or English."""
    run(ws, "index")
    hits = run(ws, "search", "데이터베이스 마이그레이션", "--no-touch", "--explain",
               "--min-score", "0")["hits"]  # fmt: skip
    assert hits and all(h["components"]["read"] == 0.0 for h in hits)

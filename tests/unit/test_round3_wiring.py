"""bench/reliability.py --only round3 (issue 25): the round3_*.py modules are found in
sorted order, each scenario runs in a fresh directory of its own, the table names every
scenario with its counts, and harm (fewer harmless than attempts, an exception, a bad
return value, a module that does not import) makes the exit status 1."""

from __future__ import annotations

from pathlib import Path

from tests.support import round3

FAKE = """
from pathlib import Path

SEEN: list[Path] = []


def fine(scratch: Path) -> tuple[int, int]:
    assert scratch.is_dir() and not any(scratch.iterdir())  # fresh and empty
    SEEN.append(scratch)
    (scratch / "left-behind").write_text("x")
    return 5, 5


def scenarios():
    return [("fine one", fine), ("fine two", fine)]
"""

HARMFUL = """
def harm(scratch):
    return 4, 3


def broken(scratch):
    raise RuntimeError("the scenario broke")


def odd(scratch):
    return (2, 5)


def scenarios():
    return [("some harm", harm), ("raises", broken), ("more harmless than attempts", odd)]
"""


def _folder(tmp_path: Path, modules: dict[str, str]) -> Path:
    folder = tmp_path / "support"
    folder.mkdir()
    for name, text in modules.items():
        (folder / f"{name}.py").write_text(text, encoding="utf-8")
    (folder / "not_a_scenario.py").write_text("raise SystemExit('never imported')\n")
    return folder


def test_harmless_scenarios_each_in_a_fresh_directory(tmp_path: Path) -> None:
    folder = _folder(tmp_path, {"round3_b": FAKE, "round3_a": FAKE.replace("fine", "good")})
    results = round3.run_all(tmp_path / "work", folder)
    assert [(r.module, r.name, r.attempts, r.harmless, r.error) for r in results] == [
        ("round3_a", "good one", 5, 5, ""),
        ("round3_a", "good two", 5, 5, ""),
        ("round3_b", "fine one", 5, 5, ""),
        ("round3_b", "fine two", 5, 5, ""),
    ]
    assert not list((tmp_path / "work").iterdir())  # every scratch directory removed
    table, status = round3.report(results)
    assert status == 0
    assert "round3_b: fine two | 5 | 5 |" in table and "4 of 4 scenarios harmless" in table


def test_harm_errors_and_bad_modules_fail_the_run(tmp_path: Path) -> None:
    folder = _folder(
        tmp_path,
        {"round3_fine": FAKE, "round3_harm": HARMFUL, "round3_zbroken": "import no_such_mod\n"},
    )
    results = round3.run_all(tmp_path / "work", folder)
    by_name = {(r.module, r.name): r for r in results}
    assert not by_name["round3_fine", "fine one"].harmed
    assert (
        by_name["round3_harm", "some harm"].attempts,
        by_name["round3_harm", "some harm"].harmless,
    ) == (4, 3)
    assert "RuntimeError: the scenario broke" in by_name["round3_harm", "raises"].error
    assert "attempts=2, harmless=5" in by_name["round3_harm", "more harmless than attempts"].error
    assert "ModuleNotFoundError" in by_name["round3_zbroken", "(import)"].error
    table, status = round3.report(results)
    assert status == 1
    assert "2 of 6 scenarios harmless" in table
    assert "harm in: round3_harm: some harm, round3_harm: raises" in table


def test_no_scenario_found_is_not_a_pass(tmp_path: Path) -> None:
    assert round3.report(round3.run_all(tmp_path / "w", _folder(tmp_path, {})))[1] == 1


def test_the_project_modules_are_found() -> None:
    names = [name for name, _ in round3.discover()]
    assert "round3_tests" in names and names == sorted(names)


def test_the_packer_scenario_finds_no_empty_block(tmp_path: Path) -> None:
    from tests.support.round3_tests import near_fit_sequences

    assert near_fit_sequences(tmp_path, runs=80) == (80, 80)


def test_round_four_is_its_own_set_of_modules(tmp_path: Path) -> None:
    """`--only round4` (issue 35): every round4_*.py, none of round three's; a concern
    (links, review versions) joins by adding a module of its own."""
    folder = _folder(tmp_path, {"round3_a": FAKE, "round4_b": FAKE.replace("fine", "new")})
    results = round3.run_all(tmp_path / "work", folder, prefix="round4_")
    assert [(r.module, r.name) for r in results] == [("round4_b", "new one"), ("round4_b", "new two")]
    names = [name for name, _ in round3.discover(prefix="round4_")]
    assert "round4_tenants" in names and not any(n.startswith("round3_") for n in names)
    from tests.support.round4_tenants import scenarios

    listed = [name for name, _ in scenarios()]
    for item in ("#3", "#9", "#10", "#11", "#13", "#14", "#16", "#18"):
        assert any(name.startswith(item + " ") for name in listed), item


def test_round_four_covers_the_links_and_review_findings() -> None:
    """The links and review-versions modules join `--only round4` (their attacks run in
    bench/reliability.py, not here: the suite is at its time budget)."""
    names = [name for name, _ in round3.discover(prefix="round4_")]
    assert {"round4_links", "round4_review", "round4_tenants"} <= set(names)
    from tests.support import round4_links, round4_review

    listed = [name for module in (round4_links, round4_review) for name, _ in module.scenarios()]
    for item in ("#1", "#2", "#4", "#5", "#6", "#7", "#8", "#15", "#17"):
        assert any(name.startswith(item + " ") for name in listed), item
    assert any("memcli.toml" in name for name in listed)
    assert any(name.startswith("restore ") for name in listed)

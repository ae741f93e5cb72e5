"""A workspace's memcli.toml under the link rule (issue 35, a links leftover): every
reader of it (the settings, `[files]`, the trust digest and the `[llm] command` script it
seals, the MCP front's snapshot check, `config set`'s check) reads a regular file, by
the link rule, bounded, and never blocks. A clone's `memcli.toml -> /dev/zero` hung every
command; a FIFO stands in for it here (a blocking open an alarm can interrupt, where a
read of /dev/zero would fill the memory), the CLI meets /dev/zero itself in
tests/support/round4_links.py."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memcli.core.errors import MemcliError
from memcli.core.names import CONFIG_FILE

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and SIGALRM")


class Blocked(Exception):  # noqa: N818 - not an OSError, which the readers catch
    """A reader blocked on memcli.toml."""


@pytest.fixture
def alarm() -> Iterator[None]:
    """A reader that blocks fails the test after 5 s instead of hanging the suite."""

    def ring(signum: int, frame: object) -> None:
        raise Blocked("the reader blocked on memcli.toml")

    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(5)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _workspace(tmp: Path) -> Path:
    ws = tmp / "clone"
    ws.mkdir()
    (ws / "memory.md").write_text("# Memory\n")
    return ws


def link_to_fifo(ws: Path) -> None:
    os.mkfifo(ws.parent / "pipe")
    (ws / CONFIG_FILE).symlink_to(ws.parent / "pipe")


def fifo_itself(ws: Path) -> None:
    os.mkfifo(ws / CONFIG_FILE)


def link_inside_to_fifo(ws: Path) -> None:
    os.mkfifo(ws / "pipe")
    (ws / CONFIG_FILE).symlink_to("pipe")


def settings(ws: Path) -> object:
    from memcli.store.config import load_settings

    return load_settings(ws, env={}, user_config=ws.parent / "none.toml")


def registry(ws: Path) -> object:
    from memcli.store.config_files import load_registry

    return load_registry(ws)


def digest(ws: Path) -> object:
    from memcli.store.trust import config_digest

    return config_digest(ws)


def config_check(ws: Path) -> object:
    from memcli.services.configedit import check

    return check(ws, None, "")


PLANTS = [link_to_fifo, fifo_itself, link_inside_to_fifo]
READERS = [settings, registry, digest, config_check]


@pytest.mark.parametrize("plant", PLANTS)
@pytest.mark.parametrize("reader", READERS)
def test_every_reader_refuses_a_memcli_toml_that_is_no_regular_file(
    tmp_path: Path, alarm: None, plant: Callable[[Path], None], reader: Callable[[Path], object]
) -> None:
    ws = _workspace(tmp_path)
    plant(ws)
    with pytest.raises(MemcliError) as refused:
        reader(ws)
    said = str(refused.value)
    assert CONFIG_FILE in said and ("not a regular file" in said or "link" in said), said


def test_the_mcp_front_passes_over_it(tmp_path: Path, alarm: None) -> None:
    from memcli.surfaces.mcp_stdio import load_snapshot

    ws = _workspace(tmp_path)
    link_to_fifo(ws)
    load_snapshot(ws)  # returns (the tools/list answer kept or not), never blocks


def test_a_sealed_command_script_that_is_no_regular_file_never_blocks(
    tmp_path: Path, alarm: None
) -> None:
    """`[llm] command = "tools/llm.sh"` with tools/llm.sh a FIFO: the digest is computed
    (as of a missing script: trust cannot approve what it cannot read)."""
    from memcli.store.trust import config_digest

    ws = _workspace(tmp_path)
    (ws / CONFIG_FILE).write_text('[llm]\ncommand = "tools/llm.sh"\n')
    (ws / "tools").mkdir()
    os.mkfifo(ws / "tools" / "llm.sh")
    blocked = config_digest(ws)
    os.unlink(ws / "tools" / "llm.sh")
    assert blocked == config_digest(ws)  # the same as no script at all


def test_a_regular_memcli_toml_and_an_inside_link_to_one_still_load(tmp_path: Path) -> None:
    from memcli.store.config import load_settings

    ws = _workspace(tmp_path)
    (ws / "settings.toml").write_text("[search]\nlimit = 7\n")
    (ws / CONFIG_FILE).symlink_to("settings.toml")
    assert load_settings(ws, env={}, user_config=tmp_path / "none.toml").search.limit == 7
    (ws / CONFIG_FILE).unlink()
    (ws / CONFIG_FILE).mkdir()  # a folder of that name: as before, no settings
    assert load_settings(ws, env={}, user_config=tmp_path / "none.toml").search.limit != 7


def test_a_memcli_toml_linked_out_of_an_untrusted_workspace_is_refused(tmp_path: Path) -> None:
    """The link rule, not only the regular-file check: a clone's memcli.toml linked to a
    valid TOML file outside it is not read until the workspace is trusted."""
    from memcli.store.config import load_settings
    from memcli.store.links import LinkRefused

    ws = _workspace(tmp_path)
    (tmp_path / "theirs.toml").write_text("[search]\nlimit = 7\n")
    (ws / CONFIG_FILE).symlink_to(tmp_path / "theirs.toml")
    with pytest.raises(LinkRefused, match="not trusted"):
        load_settings(ws, env={}, user_config=tmp_path / "none.toml")

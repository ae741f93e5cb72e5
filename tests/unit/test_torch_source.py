"""Where scripts/setup.sh takes torch from (issue 37, item 1): the PyTorch CPU index when
it answers (a real HTTP server on loopback stands in for it), else the default index with
one line saying so; and the line naming the torch it installed and its build."""

from __future__ import annotations

import importlib.util
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.support.env import ROOT

spec = importlib.util.spec_from_file_location("torch_source", ROOT / "scripts" / "torch_source.py")
assert spec is not None and spec.loader is not None
torch_source = importlib.util.module_from_spec(spec)
spec.loader.exec_module(torch_source)


class Index(BaseHTTPRequestHandler):
    """A wheel index with a page for torch only (PEP 503)."""

    def do_GET(self) -> None:  # noqa: N802 - http.server's spelling
        found = self.path.rstrip("/") == "/whl/cpu/torch"
        self.send_response(200 if found else 404)
        self.end_headers()
        if found:
            self.wfile.write(b'<a href="torch-2.13.0+cpu-cp311-linux_x86_64.whl">torch</a>')

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index_server():  # noqa: ANN201 - the server's base URL
    server = ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/whl/cpu"
    server.shutdown()
    server.server_close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed once the probe is: connections refused


def test_a_reachable_cpu_index_is_used(index_server: str) -> None:
    said, args = torch_source.choose(index_server)
    assert args == ["--index-url", index_server]
    assert said == f"torch from the PyTorch CPU index ({index_server})"


@pytest.mark.parametrize(
    "index",
    [
        "http://127.0.0.1:{closed}/whl/cpu",  # nothing listens (a port found per run)
        "http://no-such-host.invalid/whl/cpu",  # no such name
        "not a url",
    ],
)
def test_an_unreachable_index_falls_back_and_says_so(index: str) -> None:
    index = index.replace("{closed}", str(closed_port()))
    said, args = torch_source.choose(index)
    assert args == []  # pip's own settings: the default index, a local wheel it finds
    assert said.startswith(f"the PyTorch CPU index ({index}) is not reachable: ")
    assert "default index" in said and "\n" not in said  # one line


def test_an_index_without_torch_is_not_used(index_server: str) -> None:
    assert torch_source.reachable(index_server)
    assert not torch_source.reachable(index_server.replace("/whl/cpu", "/other"))  # a 404


def test_the_environment_variable_names_the_index(
    index_server: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMCLI_TORCH_INDEX", index_server)
    assert torch_source.main(["choose"]) == 0
    said, args = capsys.readouterr().out.split("\n")[:2]
    assert index_server in said and args == f"--index-url {index_server}"


@pytest.mark.parametrize(
    ("version", "cuda", "said"),
    [
        ("2.13.0+cpu", "None", "torch 2.13.0+cpu (CPU build)"),
        ("2.13.0", "'12.8'", "torch 2.13.0 (CUDA 12.8 build)"),
        (None, None, "no torch in this environment"),
    ],
)
def test_the_report_names_the_build(
    tmp_path: Path, version: str | None, cuda: str | None, said: str
) -> None:
    if version is not None:
        (tmp_path / f"torch-{version}.dist-info").mkdir()
        (tmp_path / "torch").mkdir()
        (tmp_path / "torch" / "version.py").write_text(
            f"__version__ = '{version}'\ndebug = False\ncuda = {cuda}\n"
        )
    assert torch_source.report(tmp_path).startswith(said)

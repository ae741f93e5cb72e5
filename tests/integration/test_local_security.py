"""Issue 14, local surfaces: the per-user socket directory, the server's uid checked
before a request leaves the client, the workspace the client resolved, and a daemon that
never reads its own stdin. Servers run in this process (no model needed) except where a
real `memcli watch` is the point."""

from __future__ import annotations

import builtins
import io
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memcli.surfaces import protocol as daemon_protocol
from memcli.surfaces.cli import fastpath
from memcli.surfaces.cli.env import Env, served_call
from memcli.surfaces.daemon.server import DaemonServer, RequestHandler
from memcli.surfaces.protocol import socket_file
from tests.support.env import make_workspace


def long_workspace(tmp_path: Path) -> Path:
    """A workspace whose .memcli/daemon.sock would be too long for a Unix socket."""
    path = tmp_path / ("deep-" + "d" * 60) / ("deeper-" + "e" * 60) / "ws"
    root = make_workspace(path, "mlong1", "Lives at the end of a long path")
    assert not socket_file(str(root)).startswith(str(root))
    return root


class Recorder:
    """A listener on `path` that records what clients send and answers as a daemon."""

    def __init__(self, path: str) -> None:
        self.received: list[bytes] = []
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        self.sock.listen(4)
        self.sock.settimeout(5)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while not data.endswith(b"\n"):
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        data += chunk
                    self.received.append(data)
                    conn.sendall(b'{"hits": []}\n')
                except OSError:
                    self.received.append(data)

    def sent(self) -> bytes:
        time.sleep(0.1)  # let the server thread record a closed connection
        return b"".join(self.received)

    def close(self) -> None:
        self.sock.close()


# ------------------------------------------------------------------ the /tmp directory


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A TMPDIR for the fallback socket directory with a short path: a socket path must
    fit in ~108 bytes, and a test's tmp_path (an xdist worker's especially) is long."""
    path = Path(tempfile.mkdtemp(prefix="mt"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_fallback_directory_is_created_private_and_used(
    short_tmp: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    monkeypatch.setenv("TMPDIR", str(short_tmp))
    root = long_workspace(tmp_path)
    server = DaemonServer(
        root, lambda request: {"inject": {"exact": True, "block": "hi"}}, detach_stdin=False
    )
    server.start()
    try:
        directory = os.path.dirname(socket_file(str(root)))
        st = os.lstat(directory)
        assert (st.st_mode & 0o7777, st.st_uid) == (0o700, os.getuid())
        assert fastpath.try_daemon(["-w", str(root), "get", "x"]) == 0
        assert capsys.readouterr().out == "hi\n"
    finally:
        server.stop()


def bad_directories(tmp_path: Path):  # noqa: ANN201 - (name, make) pairs
    def loose(path: Path) -> None:
        path.mkdir()
        path.chmod(0o777)

    def symlink(path: Path) -> None:
        target = tmp_path / "elsewhere"
        target.mkdir(mode=0o700)
        path.symlink_to(target)

    def plain_file(path: Path) -> None:
        path.write_text("")

    return [("mode 0777", loose), ("a symlink", symlink), ("a file", plain_file)]


@pytest.mark.parametrize("case", [0, 1, 2])
def test_a_fallback_directory_not_ours_alone_is_refused(
    case: int,
    short_tmp: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    monkeypatch.setenv("TMPDIR", str(short_tmp))
    root = long_workspace(tmp_path)
    path = socket_file(str(root))
    name, make = bad_directories(tmp_path)[case]
    make(Path(os.path.dirname(path)))
    # the daemon will not serve there...
    with pytest.raises(RuntimeError, match="memcli-"):
        DaemonServer(root, lambda request: {}, detach_stdin=False).start()
    if case == 2:
        return  # a file: nothing can listen "inside" it
    # ...and a client sends nothing to whatever listens there (an attacker's socket)
    recorder = Recorder(path)
    try:
        monkeypatch.setattr(sys, "stdin", io.StringIO("my private query"))
        assert fastpath.try_daemon(["-w", str(root), "search", "-"]) is None, name
        assert recorder.sent() == b"", name
        assert "not using the memcli watch socket" in capsys.readouterr().err
    finally:
        recorder.close()


def test_a_fallback_directory_of_another_owner_is_refused(
    short_tmp: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture,
) -> None:
    monkeypatch.setenv("TMPDIR", str(short_tmp))
    root = long_workspace(tmp_path)
    real_uid = os.getuid()
    monkeypatch.setattr(os, "getuid", lambda: real_uid + 4242)  # the directory is not "ours"
    path = socket_file(str(root))
    assert f"memcli-{real_uid + 4242}" in path
    os.mkdir(os.path.dirname(path), 0o700)
    problem = daemon_protocol.private_dir_problem(os.path.dirname(path))
    assert problem is not None and f"belongs to uid {real_uid}" in problem
    with pytest.raises(RuntimeError, match="belongs to uid"):
        DaemonServer(root, lambda request: {}, detach_stdin=False).start()
    recorder = Recorder(path)
    try:
        assert fastpath.try_daemon(["-w", str(root), "get", "x"]) is None
        assert recorder.sent() == b""
        assert "belongs to uid" in capsys.readouterr().err
    finally:
        recorder.close()


# ------------------------------------------------------------------ the server's uid


def test_client_sends_nothing_to_a_server_of_another_uid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path / "ws", "m1", "A fact")
    path = socket_file(str(root))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    recorder = Recorder(path)
    try:
        monkeypatch.setattr(sys, "stdin", io.StringIO("my private query"))
        # control: a server of our uid gets the request, stdin included
        assert fastpath.try_daemon(["-w", str(root), "search", "-"]) == 0
        assert b"my private query" in recorder.sent()
        recorder.received.clear()
        # SO_PEERCRED reports our real uid; pretend we are someone else
        real_uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: real_uid + 1)
        monkeypatch.setattr(sys, "stdin", io.StringIO("my private query"))
        assert fastpath.try_daemon(["-w", str(root), "search", "-"]) is None
        assert recorder.sent() == b""  # connected, checked, closed: nothing sent
        assert sys.stdin.read() == "my private query"  # left for the in-process run
    finally:
        recorder.close()


def test_peer_uid_is_read_from_the_kernel(tmp_path: Path) -> None:
    if not hasattr(socket, "SO_PEERCRED") and sys.platform != "darwin":
        pytest.skip("no peer credentials on this platform")
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        assert daemon_protocol.peer_uid(left) == os.getuid()


# ------------------------------------------------------------------ the workspace


@pytest.mark.parametrize(
    "args",
    [
        ["inject", "--messages", "/dev/stdin"],
        ["inject", "--context-file=/dev/stdin"],
        ["inject", "--messages", "/proc/self/fd/0"],
        ["inject", "--context-file", "fifo"],
        ["inject", "--messages", "."],
    ],
)
def test_daemon_never_opens_what_is_not_a_regular_file(tmp_path: Path, args: list[str]) -> None:
    ws = make_workspace(tmp_path / "ws", "m1", "A fact")
    os.mkfifo(ws / "fifo")  # opening a FIFO nobody writes to blocks forever
    handler = RequestHandler(ws, dict)
    # a request carries text, never a file name for the daemon to open
    option, _, value = args[1].partition("=")
    field = option.removeprefix("--").replace("-", "_")
    request = {
        "request": {"kind": "InjectRequest", field: value or args[2]},
        "workspace": str(ws),
        "env": daemon_protocol.settings_env(os.environ),
    }
    opened: list[str] = []  # every open in this process while the daemon answers

    def watching(real):  # noqa: ANN001, ANN202 - wraps os.open / io.open / open
        def watched(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            target = Path(os.fspath(path)) if isinstance(path, str | os.PathLike) else None
            if target is not None and (target.name in ("fifo", "0", "stdin", ".")
                                       or target == ws or target == tmp_path / "ws"):
                opened.append(str(target))
                raise AssertionError(f"the daemon opened {target}")  # instead of blocking
            return real(path, *args, **kwargs)

        return watched

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "open", watching(os.open))
        patch.setattr(io, "open", watching(io.open))
        patch.setattr(builtins, "open", watching(builtins.open))
        answer = handler(request)
    assert "unknown field" in answer["refused"]
    assert opened == []
    # the client does not even ask: only it can read its own stdin or pipe
    _kind, fields, _view = served_call(Env(["inject", *args[1:]]))
    files = [fields[k] for k in ("context_file", "messages") if k in fields]
    assert files
    assert any(daemon_protocol.plain_file_problem(f, str(ws)) for f in files)

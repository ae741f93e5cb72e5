"""The client side of the fast path: hand a request to the `memcli watch` daemon of a
workspace and get its answer (result data, never printed output).

Nothing is sent unless the socket lies in a directory that is ours alone and the
process listening on it runs as our uid (a request carries the query and stdin). Builtin
modules only (`_socket` rather than socket, which pulls in enum and selectors; the JSON
of memcli.core.text): a served command costs one Python start-up and a round trip.
"""

from __future__ import annotations

import os
import sys

from memcli.surfaces.daemon import protocol

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def ask(
    root: str,
    request: Callable[[], dict[str, Any] | None],
    timeout: float,
    view: dict[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The daemon's answer to `request()` (a core.requests wire dict) for the workspace
    at `root`, or None when no watcher answers it (no socket, a stale one, a socket in a
    directory that is not ours alone, a listener of another uid, a timeout, a refusal).
    `request()` is called only once the listener is known to be ours (it may read
    stdin); when it returns None nothing is sent. `view`: how the client would print
    the answer, for the daemon to print it (memcli.surfaces.cli.served.printed)."""
    path = protocol.socket_file(root)
    if not os.path.exists(path):
        return None
    directory = os.path.dirname(path)
    if directory != os.path.join(root, ".memcli"):
        problem = protocol.private_dir_problem(directory)
        if problem is not None:
            sys.stderr.write(
                f"warning: not using the memcli watch socket in {directory}: {problem}\n"
            )
            return None
    import _socket

    from memcli.core.text import dumps_wire, loads

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(min(1.0, timeout))
        sock.connect(path)
        if protocol.peer_uid(sock) != os.getuid():  # who listens, before anything is sent
            return None
        wire = request()
        if wire is None:
            return None
        message = {
            "request": wire,
            "workspace": root,
            "env": protocol.settings_env(os.environ),
        }
        if view is not None:
            message["view"] = view
        sock.settimeout(timeout)
        sock.sendall(dumps_wire(message).encode("ascii") + b"\n")
        answer = loads(protocol.read_all(sock, limit=1 << 30).decode("utf-8"))
    except (OSError, ValueError):
        return None
    finally:
        sock.close()
    if not isinstance(answer, dict) or "refused" in answer:
        return None
    return answer

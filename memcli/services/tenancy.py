"""A workspace served to a server's tenants (`mcp --http`, DESIGN §9): it reads no layer
that is not itself granted, and nothing is written to a "user" layer.

A server's own per-user workspace belongs to the person running the server, not to a
token's holder: read as every granted workspace's `user` layer, one tenant's token would
search, read, add to and forget the operator's memory and every other tenant's writes
there. The server confines each workspace it serves (`confine`) to the directories its
tenants may reach; services.layers reads a layer only when its directory is in that set (the
per-user workspace too: only when a grant names it), sends no write to the user layer
by `[layers] user_types`, and refuses `layer="user"` (`refuse_user_layer`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from memcli.core.errors import ValidationError

#: resolved workspace directory -> the directories its tenants may reach (this process)
_SERVED: dict[str, frozenset[str]] = {}


def confine(root: str | os.PathLike[str], granted: Iterable[str | os.PathLike[str]]) -> None:
    """Serve the workspace at `root` to tenants who may reach the directories `granted`
    (for the rest of this process: a server's every Memory of that workspace, the ones
    made anew when its settings change too)."""
    _SERVED[os.path.realpath(root)] = frozenset(os.path.realpath(p) for p in granted)


def granted(mem: Any) -> frozenset[str] | None:
    """The directories `mem`'s tenants may reach, or None when it is not served to
    tenants (the person's own process: every layer its settings name)."""
    return _SERVED.get(os.path.realpath(mem.root)) if _SERVED else None


def refuse_user_layer(mem: Any) -> None:
    """ValidationError when `mem` is served to tenants: they have no user layer."""
    if granted(mem) is not None:
        raise ValidationError(
            "layer 'user' cannot be written through this server: a server's tenants have "
            "no user layer (the server user's own memory is not theirs)",
            hint="leave `layer` out, or give 'project' (the granted workspace)",
        )

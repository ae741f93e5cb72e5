"""`memcli mcp --http HOST:PORT`: the MCP tools over streamable HTTP, behind bearer tokens.

Every request to `/mcp` must carry `Authorization: Bearer <token>`; a token is granted
one or more workspaces. The token comes from `MEMCLI_MCP_TOKEN` (granted the workspace
memcli runs in) or `--token-file F`: either one line holding the token, or TOML grants:

    [[grant]]
    token = "…"                      # or token_sha256 = "<hex>" to keep no secret here
    workspaces = ["/srv/memory/alice", "/srv/memory/shared"]

A token granted several workspaces names one with `/mcp?workspace=<name>` (the
directory's name); with one it needs none. Never on the command line (other users see
argv); a token file readable by others is refused, as ssh refuses such keys. The server
binds to 127.0.0.1 unless told another host. Each workspace gets its own MCP server (the
tools of memcli.surfaces.mcp_server, unchanged); this module only authenticates and
dispatches, as an ASGI app in front of them, and confines each workspace to its grant
(services.tenancy: it reads no layer not granted to each of its tokens, never the
server user's own per-user workspace unless a grant names it; `layer="user"` is
refused).

Limits against clients that hold connections: memcli.surfaces.http_limits.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from memcli.core.errors import ConfigError, UsageError
from memcli.surfaces.http_limits import HEADER_BYTES

TOKEN_ENV = "MEMCLI_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
PATH = "/mcp"


@dataclass(frozen=True)
class Grant:
    """A token (kept as its SHA-256 only) and the workspaces it may use, by name."""

    digest: str
    workspaces: Mapping[str, Path]


def parse_bind(value: str) -> tuple[str, int]:
    """`HOST:PORT` or `PORT` (host 127.0.0.1); a UsageError names what is wrong."""
    host, sep, port_text = value.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", value
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise UsageError(f"--http: {value!r} is not HOST:PORT or PORT") from None
    if not 0 < port < 65536:
        raise UsageError(f"--http: port {port} is out of range (1-65535)")
    return host, port


def load_grants(
    workspace: Path, token_file: Path | None, env: Mapping[str, str] | None = None
) -> list[Grant]:
    """The tokens this server accepts and what each may use. Refuses to serve without
    one (ConfigError naming what to set)."""
    env = os.environ if env is None else env
    if token_file is not None:
        return _grants_from_file(token_file, workspace)
    token = env.get(TOKEN_ENV, "").strip()
    if not token:
        raise ConfigError(
            "refusing to serve MCP over HTTP without a token",
            hint=f"set {TOKEN_ENV} in the environment or pass --token-file FILE",
        )
    _check_token(token, TOKEN_ENV)
    return [Grant(_digest(token), _named([workspace], TOKEN_ENV))]


def _grants_from_file(path: Path, workspace: Path) -> list[Grant]:
    try:
        info = path.stat()
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the token file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: the token file is not UTF-8 text") from None
    if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ConfigError(
            f"{path}: other users can read this token file",
            hint=f"chmod 600 {path}",
        )
    if "[[grant]]" not in text:
        token = text.strip()
        if not token or "\n" in token:
            raise ConfigError(f"{path}: expected one line holding the token, or [[grant]] tables")
        _check_token(token, str(path))
        return [Grant(_digest(token), _named([workspace], str(path)))]
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    grants = []
    for number, table in enumerate(data.get("grant", []), start=1):
        where = f"{path}: grant {number}"
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: expected a table")
        unknown = sorted(set(table) - {"token", "token_sha256", "workspaces"})
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}")
        if ("token" in table) == ("token_sha256" in table):
            raise ConfigError(f"{where}: give exactly one of token or token_sha256")
        if "token" in table:
            token = table["token"]
            if not isinstance(token, str):
                raise ConfigError(f"{where}: token must be a string")
            _check_token(token, where)
            digest = _digest(token)
        else:
            digest = str(table["token_sha256"]).lower()
            if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
                raise ConfigError(f"{where}: token_sha256 must be 64 hex digits")
        places = table.get("workspaces")
        if not (isinstance(places, list) and places and all(isinstance(p, str) for p in places)):
            raise ConfigError(f"{where}: workspaces must be a non-empty list of paths")
        base = path.parent
        grants.append(
            Grant(digest, _named([(base / Path(p).expanduser()).resolve() for p in places], where))
        )
    if not grants:
        raise ConfigError(f"{path}: no [[grant]] table")
    return grants


def _check_token(token: str, where: str) -> None:
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"{where}: the token is shorter than {MIN_TOKEN_CHARS} characters",
            hint="make a random one: python -c 'import secrets; print(secrets.token_urlsafe())'",
        )


def _named(paths: list[Path], where: str) -> dict[str, Path]:
    named: dict[str, Path] = {}
    for place in paths:
        root = place.resolve()
        if not root.is_dir():
            raise ConfigError(f"{where}: {root} is not a directory")
        if root.name in named and named[root.name] != root:
            raise ConfigError(f"{where}: two workspaces are named {root.name!r}; rename one")
        named[root.name] = root
    return named


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Gate:
    """The ASGI app: authenticates, picks the workspace, hands the request to its MCP app."""

    def __init__(
        self, grants: list[Grant], apps: Mapping[Path, Any], max_body: int | None = None
    ) -> None:
        self.grants = grants
        self.apps = apps
        self.max_body = max_body

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        if sum(len(k) + len(v) for k, v in scope.get("headers") or []) > HEADER_BYTES:
            # h11 bounds headers still arriving; these came whole in one read
            await _reply(send, 431, f"the request's headers are over {HEADER_BYTES} bytes")
            return
        if scope.get("path", "").rstrip("/") != PATH:
            await _reply(send, 404, f"not found: memcli serves MCP at {PATH}")
            return
        grant = self._grant(scope)
        if grant is None:
            await _reply(
                send, 401, "a valid bearer token is required", {"www-authenticate": "Bearer"}
            )
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        wanted = (query.get("workspace") or [None])[0]
        if wanted is None and len(grant.workspaces) == 1:
            wanted = next(iter(grant.workspaces))
        root = grant.workspaces.get(wanted) if wanted else None
        if root is None:
            names = ", ".join(sorted(grant.workspaces))
            what = f"workspace {wanted!r} is not granted to this token" if wanted else (
                "this token is granted several workspaces: add ?workspace=<name> to the URL"
            )
            await _reply(send, 403, f"{what} (granted: {names})")
            return
        if self.max_body is not None:
            receive = await self._read_body(scope, receive, send, self.max_body)
            if receive is None:
                return
        await self.apps[root](scope, receive, send)

    @staticmethod
    async def _read_body(scope: dict, receive: Any, send: Any, limit: int) -> Any:
        """The request's body read whole (at most `limit` bytes) and handed on to the
        app as it came; None after answering 413 to a longer one."""
        too_long = f"the request body is longer than {limit} bytes"
        declared = dict(scope.get("headers") or []).get(b"content-length", b"0")
        if declared.isdigit() and int(declared) > limit:
            await _reply(send, 413, too_long)
            return None
        messages: list[dict] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                return None  # the client went away (or was timed out): nobody to answer
            size += len(message.get("body", b""))
            if size > limit:
                await _reply(send, 413, too_long)
                return None
            if not message.get("more_body"):
                break

        async def replay() -> dict:
            return messages.pop(0) if messages else await receive()

        return replay

    def _grant(self, scope: dict) -> Grant | None:
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        kind, _, token = header.partition(" ")
        if kind.lower() != "bearer" or not token.strip():
            return None
        digest = _digest(token.strip())
        found = None
        for grant in self.grants:  # compare with every grant: timing says nothing
            if hmac.compare_digest(grant.digest, digest):
                found = grant
        return found

    async def _lifespan(self, scope: dict, receive: Any, send: Any) -> None:
        """Run every workspace app's lifespan (their session managers) for the server's."""
        message = await receive()
        async with contextlib.AsyncExitStack() as stack:
            try:
                for app in self.apps.values():
                    await stack.enter_async_context(app.router.lifespan_context(app))
            except Exception as exc:  # noqa: BLE001 - reported to the server, which stops
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})


async def _reply(send: Any, status: int, message: str, headers: Mapping[str, str] = {}) -> None:  # noqa: B006 - read only
    """An error answered and the connection closed: a client refused (no token, a body
    too long and left unread, …) keeps no connection open for its next try."""
    body = json.dumps({"error": message}).encode()
    head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    head.append((b"connection", b"close"))
    head += [(k.encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


def reachable(grants: list[Grant], root: Path) -> set[Path]:
    """The directories every token granted `root` may reach: the only layers `root` is
    read with (services.tenancy): a layer granted to one of its tenants but not to
    another would hand that other one memory nobody granted it."""
    sets = [set(g.workspaces.values()) for g in grants if root in g.workspaces.values()]
    return set.intersection(*sets)


def build_gate(grants: list[Grant], host: str, max_body: int | None = None) -> Gate:
    """One MCP app per granted workspace, behind the token check."""
    from memcli.services.tenancy import confine
    from memcli.surfaces.mcp_server import build_server

    apps: dict[Path, Any] = {}
    for grant in grants:
        for root in grant.workspaces.values():
            if root not in apps:
                confine(root, reachable(grants, root))
                apps[root] = build_server(root).streamable_http_app(
                    streamable_http_path=PATH, host=host
                )
    return Gate(grants, apps, max_body)


def serve_http(workspace: Path, bind: str, token_file: Path | None) -> None:
    """Serve until interrupted; refuses to start without a token."""
    from memcli.surfaces import http_limits as guard
    from memcli.surfaces.mcp_server import plain_logging

    host, port = parse_bind(bind)
    grants = load_grants(workspace, token_file)
    limits = guard.load_limits()
    plain_logging()  # before build_gate: building an MCP server would import Rich
    gate = build_gate(grants, host, limits.max_body)
    import uvicorn
    names = sorted({name for grant in grants for name in grant.workspaces})
    sys.stderr.write(
        f"memcli: serving MCP for {', '.join(names)} at http://{host}:{port}{PATH} "
        f"(bearer token required; at most {limits.max_connections} connections, "
        f"{limits.read_timeout:g} s to send a request)\n"
    )
    uvicorn.run(
        gate,
        host=host,
        port=port,
        log_level="warning",
        lifespan="on",
        http=guard.guarded_protocol(limits),  # the cap (uvicorn's limit_concurrency would 503
        # every request once the cap is reached, those of connections already in too)
        backlog=limits.accept_batch,  # how many asyncio accepts at once
        loop=f"{guard.__name__}:guarded_loop",
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=HEADER_BYTES,
    )

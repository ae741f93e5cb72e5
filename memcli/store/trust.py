"""Which workspaces' memcli.toml may send data or read secrets (as direnv and mise do).

A workspace can come from someone else's git repository, and its memcli.toml could name
an LLM endpoint and an environment variable holding a key (`api_key_env = "GITHUB_TOKEN"`).
Such settings (SENSITIVE) apply only from the user's own config file
(`$XDG_CONFIG_HOME/memcli/config.toml`), the environment (`MEMCLI_LLM_*`), or a
workspace the user approved with `memcli trust`: the approval records the workspace path
and the sha256 of its memcli.toml, so a changed file needs approving again. The per-user
default workspace (under the XDG data home) is the user's own and trusted as it is.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from memcli.core.errors import ConfigError
from memcli.core.names import CONFIG_FILE

#: settings a workspace's memcli.toml may set only once the workspace is trusted: where
#: memory text goes (an LLM endpoint, whether to use one), which program runs (the
#: agent CLI's command), which secret is read and sent (the API key's variable),
#: which model files are loaded (a name may be downloaded), and which other directories'
#: memory is read (a layer path)
SENSITIVE: dict[str, tuple[str, ...]] = {
    # model: an agent CLI's --model argument, and what a paid endpoint bills; timeout:
    # how long a program runs
    "llm": ("provider", "base_url", "api_key_env", "command", "model", "timeout"),
    "index": ("model", "uri", "token_env", "collection", "workspace"),
    # read: a path names another directory whose memory is read; user_types: which
    # writes (an agent's too) go to the person's own layer, read by every project
    "layers": ("read", "user_types"),
}
#: settings that say together where the index lives: they apply together or not at all.
#: When an untrusted memcli.toml sets any of them (but `backend = "local"`), none that it
#: sets applies: a backend without its uri, or a uri without its collection and workspace
#: key, would fail or write somewhere nobody chose. The workspace keeps the local index.
UNITS: dict[str, tuple[str, ...]] = {
    "index": ("backend", "uri", "token_env", "collection", "workspace"),
}
#: unit settings that alone need no approval, with the value that is harmless
HARMLESS: dict[tuple[str, str], object] = {("index", "backend"): "local"}
#: sensitive settings that need no approval for some values: reading no other layer, or
#: only the person's own (the default), names no other directory
SAFE_VALUES: dict[tuple[str, str], Callable[[object], bool]] = {
    ("layers", "read"): lambda value: (
        isinstance(value, str) and all(part.strip() in ("", "user") for part in value.split(","))
    ),
    ("layers", "user_types"): lambda value: isinstance(value, str) and not value.strip(),
}
CONFIG_NAME = "config.toml"
TRUST_NAME = "trusted.json"
_ABSENT = "absent"  # what is recorded for a workspace without memcli.toml


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/memcli` (default `~/.config/memcli`): the user's own settings
    (config.toml) and workspace approvals (trusted.json)."""
    from memcli.core.paths import config_dir

    return config_dir(os.environ if env is None else env)


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    """The user's config.toml: the same tables as memcli.toml, every key allowed."""
    return user_config_dir(env) / CONFIG_NAME


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    return user_config_dir(env) / TRUST_NAME


def config_digest(root: Path) -> str:
    """sha256 of the workspace's memcli.toml bytes, sealed with the script its `[llm]
    command` names in the workspace (`sealed`); "absent" when it has none."""
    import tomllib

    from memcli.store.atomic import read_settings

    try:
        data = read_settings(root / CONFIG_FILE)  # bounded: a link to /dev/zero is refused
    except FileNotFoundError:
        return _ABSENT
    try:
        table = tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        table = {}
    return sealed(root, table, hashlib.sha256(data).hexdigest())


def sealed(root: Path, table: Mapping[str, Any], digest: str) -> str:
    """`digest` (of memcli.toml's bytes, `table` its settings) as approved: with the bytes
    of the script its `[llm] command` runs from the workspace folded in, so a changed
    script needs approving again as a changed memcli.toml does."""
    script = command_script(root, table)
    if script is None:
        return digest
    from memcli.core.errors import MemcliError
    from memcli.store.atomic import read_bounded

    try:  # a regular file, bounded: a script linked to /dev/zero never hangs a command
        body = read_bounded(Path(os.path.realpath(script)))
    except (OSError, MemcliError):
        body = b"\0missing"
    return hashlib.sha256(digest.encode() + b"\0" + body).hexdigest()


def command_script(root: Path, table: Mapping[str, Any]) -> Path | None:
    """The file the `[llm] command` of a workspace's settings (`table`) runs when it is
    the workspace's own: a relative path (taken from the workspace, as
    memcli.adapters.llm runs it) or an absolute one inside it; None for a program on
    PATH or elsewhere."""
    import shlex

    llm = table.get("llm")
    command = llm.get("command") if isinstance(llm, Mapping) else None
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return None
    if not words or "/" not in words[0]:
        return None
    program = Path(words[0]).expanduser()
    if not program.is_absolute():
        return Path(root) / program
    inside = Path(os.path.realpath(program)).is_relative_to(os.path.realpath(root))
    return program if inside else None


def _key(root: Path) -> str:
    return str(Path(root).expanduser().resolve())


def approvals(env: Mapping[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """Recorded approvals: workspace path -> {"sha256", "approved"}."""
    path = trust_file(env)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path}: unreadable ({exc})", hint="fix or delete it, then run `memcli trust` again"
        ) from None
    workspaces = data.get("workspaces") if isinstance(data, dict) else None
    return workspaces if isinstance(workspaces, dict) else {}


def is_trusted(root: Path, env: Mapping[str, str] | None = None, digest: str | None = None) -> bool:
    """The workspace was approved with its memcli.toml as it is now (`digest` when the
    caller already hashed the bytes it read), or it is the per-user default workspace."""
    from memcli.store.workspace import default_workspace

    env = os.environ if env is None else env
    key = _key(root)
    with contextlib.suppress(OSError):
        if key == _key(default_workspace(env)):
            return True
    record = approvals(env).get(key)
    if not isinstance(record, dict):
        return False
    return record.get("sha256") == (digest or config_digest(Path(key)))


def trust(root: Path, env: Mapping[str, str] | None = None) -> str:
    """Approve the workspace's memcli.toml as it is now; returns its digest."""
    key = _key(root)
    digest = config_digest(Path(key))
    records = approvals(env)
    records[key] = {
        "sha256": digest,
        "approved": dt.datetime.now(dt.UTC).isoformat(),
        "links": links_now(Path(key)),
    }
    _save(records, env)
    return digest


def links_now(root: Path) -> dict[str, str]:
    """The links of the workspace at `root` as they are now (its own entries and those
    one folder down, not in dot folders): name -> where it leads. A trust approves these;
    a link a later `git pull` brings (`learnings.md -> ~/.bashrc`) is not approved by it
    (memcli.store.links follows a link out of the workspace only when approved)."""
    found: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            if entry.is_symlink():
                found[entry.name] = os.path.realpath(entry.path)
            elif entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                with contextlib.suppress(OSError):
                    for inner in os.scandir(entry.path):
                        if inner.is_symlink():
                            found[f"{entry.name}/{inner.name}"] = os.path.realpath(inner.path)
    return found


def approved_link(root: Path, link: str, env: Mapping[str, str] | None = None) -> bool:
    """The link `link` (a path in the workspace at `root`) leads where it led when the
    person trusted the workspace (and memcli.toml is as approved), or the workspace is the
    per-user default workspace (trusted as it is)."""
    from memcli.store.workspace import default_workspace

    env = os.environ if env is None else env
    key = _key(root)
    with contextlib.suppress(OSError):
        if key == _key(default_workspace(env)):
            return True
    if not is_trusted(Path(key), env):
        return False
    record = approvals(env).get(key) or {}
    links = record.get("links")
    name = os.path.relpath(link, root).replace(os.sep, "/")
    return isinstance(links, dict) and links.get(name) == os.path.realpath(link)


def revoke(root: Path, env: Mapping[str, str] | None = None) -> bool:
    """Withdraw an approval; False when there was none."""
    key = _key(root)
    records = approvals(env)
    if key not in records:
        return False
    del records[key]
    _save(records, env)
    return True


def _save(records: dict[str, dict[str, Any]], env: Mapping[str, str] | None) -> None:
    path = trust_file(env)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = json.dumps({"version": 1, "workspaces": records}, indent=2, sort_keys=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(data + "\n")
    os.replace(tmp, path)


def withheld(table: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(table, key) of a workspace's memcli.toml (`table`) that apply only once the
    workspace is trusted: the SENSITIVE settings it sets, and every setting of a UNIT it
    sets when it sets any of that unit (a HARMLESS value alone excepted)."""
    out: list[tuple[str, str]] = []
    for name, given in table.items():
        if not isinstance(given, dict):
            continue
        unit = [key for key in UNITS.get(name, ()) if key in given]
        if all(HARMLESS.get((name, key), object()) == given[key] for key in unit):
            unit = []
        for key in given:
            safe = SAFE_VALUES.get((name, key), _never)(given[key])
            if (key in SENSITIVE.get(name, ()) and not safe) or key in unit:
                out.append((name, key))
    return out


def _never(value: object) -> bool:
    return False


def untrusted_notice(config: Path, ignored: tuple[str, ...]) -> str:
    """The one notice printed when a workspace's sensitive settings were ignored."""
    return (
        f"{config}: ignored {', '.join(ignored)}: this workspace is not trusted (its "
        f"memcli.toml could send your memory or a secret elsewhere); `memcli trust "
        f"{config.parent}` approves it as it is now, or set these in "
        f"{user_config_file()} or MEMCLI_* variables"
    )


KEY_NAME = "local.key"
_keys: dict[str, bytes | None] = {}


def local_key(env: Mapping[str, str] | None = None) -> bytes | None:
    """This user's secret on this machine (`$XDG_CONFIG_HOME/memcli/local.key`, 32
    random bytes, created on first use, mode 0600): it signs what memcli writes for
    itself to read back (the index's entry snapshot), so a snapshot another machine or
    user wrote (a copied or cloned workspace) is never trusted. None when it cannot be
    made or is not this user's alone (nothing is trusted then)."""
    path = user_config_dir(env) / KEY_NAME
    key = str(path)
    if key not in _keys:
        _keys[key] = _read_or_make_key(path)
    return _keys[key]


def _read_or_make_key(path: Path) -> bytes | None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError:
        return None
    else:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            # secrets.token_hex(32), without importing secrets and random on every read
            handle.write(os.urandom(32).hex() + "\n")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "r", encoding="ascii") as handle:
            st = os.fstat(handle.fileno())
            text = handle.read(200).strip()
    except (OSError, ValueError):
        return None
    if os.name != "nt" and (st.st_uid != os.geteuid() or st.st_mode & 0o077):
        return None
    try:
        data = bytes.fromhex(text)
    except ValueError:
        return None
    return data if len(data) == 32 else None

"""Issue 25's lower findings as attacks on real processes, real git and real files: each
function runs one attack (or one variant of it) in a scratch directory and returns what
went wrong (an empty list: no harm). tests/process/test_round3_harden.py asserts on
them; `scenarios()` counts them for bench/reliability.py.

    from tests.support.round3_harden import scenarios
    for name, run in scenarios():
        attempts, harmless = run(scratch_dir)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.support.live_env import LiveEnv

ROOT = Path(__file__).resolve().parents[2]
ENV = LiveEnv()  # read when a process starts: the running test's isolated folders
GIT_ENV = LiveEnv(
    GIT_AUTHOR_NAME="t",
    GIT_AUTHOR_EMAIL="t@example.com",
    GIT_COMMITTER_NAME="t",
    GIT_COMMITTER_EMAIL="t@example.com",
    GIT_CONFIG_NOSYSTEM="1",
)

MEMORY = "# Memory\n\n## Facts\n- Works at TechCorp <!-- id=mwork -->\n"


def memcli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "memcli", *args],
        env=env or ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def git(cwd: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=GIT_ENV, timeout=120
    )
    if check and done.returncode != 0:
        raise AssertionError(f"git {' '.join(args)}: {done.stdout}{done.stderr}")
    return done


def _repository(root: Path, memory: str = MEMORY) -> None:
    """A git repository whose top is a memcli workspace set up with `memcli git setup`."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    (root / "memory.md").write_text(memory, encoding="utf-8")
    (root / "learnings.md").write_text("# Learnings\n", encoding="utf-8")
    done = memcli("-w", str(root), "git", "setup")
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "start")


# ---------------------------------------------------------------------- finding 3

TOKEN = "test-token-0123456789abcdef"


def _few_descriptors() -> None:
    """preexec_fn: the server may hold 128 descriptors (the attack then needs fewer
    sockets than at the common 1,024)."""
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))


def _closed_by_server(sock: object) -> bool:
    """Whether the server closed this connection (an error reply, then end of stream)."""
    try:
        while sock.recv(4096):  # type: ignore[attr-defined]
            pass
    except TimeoutError:
        return False
    except OSError:  # reset: closed as well
        return True
    return True


def _initialize(url: str) -> str:
    """An authenticated MCP `initialize`: '' when the server answers who it is."""
    import httpx2

    try:
        response = httpx2.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}},
            headers={"Accept": "application/json, text/event-stream",
                     "Authorization": f"Bearer {TOKEN}"},
            timeout=15,
        )
    except Exception as exc:  # noqa: BLE001 - any failure to answer is the finding
        return f"{type(exc).__name__}: {exc}"
    if response.status_code != 200 or "serverInfo" not in response.text:
        return f"{response.status_code}: {response.text[:200]}"
    return ""


#: ways to stop half way through a request: in a header, before the blank line that
#: ends the headers, in the body
HALF_REQUESTS = {
    "in a header": b"Content-Le",
    "before the end of the headers": b"Content-Length: 10\r\n",
    "in the body": f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
    "Accept: application/json, text/event-stream\r\n"
    'Content-Length: 100\r\n\r\n{"jsonrpc"'.encode(),
}


def half_sent_requests(scratch: Path, sockets: int = 200, clients: int = 4) -> list[str]:
    """A real `memcli mcp --http` limited to 128 descriptors, sent `sockets` connections
    by `clients` threads at once (bursts: asyncio accepts connections in batches) that
    each stop half way through a request (each of HALF_REQUESTS in turn): the server
    lives, never runs out of descriptors, closes every one (at once over its cap, after
    MEMCLI_MCP_READ_TIMEOUT the rest) and answers a proper request afterwards. A
    problem names its kind."""
    with _server(scratch, _few_descriptors) as (proc, port, log):
        slow, problems = _half_send(port, sockets, clients)
        if proc.poll() is not None:
            return [f"the server exited: {log.read_text()[-500:]}"]
        problems += _still_held(slow)
        answer = _initialize(f"http://127.0.0.1:{port}/mcp")
        if answer:
            problems.append(f"a proper request failed: {answer}")
        if proc.poll() is not None:
            problems.append("the server exited")
        said = log.read_text(errors="replace")
        if OUT_OF_DESCRIPTORS in said or "Traceback" in said:
            problems.append(f"the server ran out of descriptors or failed: {said[-500:]}")
    return problems


def descriptors_lowered(scratch: Path, sockets: int = 200) -> list[str]:
    """The descriptor limit lowered to 128 under a running server (`prlimit`; its cap
    was sized for 1,024), then `sockets` half-sent requests: it runs out of descriptors,
    says so in a line or two (no traceback), lives, closes every one and answers."""
    import resource

    with _server(scratch, _some_descriptors) as (proc, port, log):
        hard = resource.prlimit(proc.pid, resource.RLIMIT_NOFILE)[1]
        resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (128, hard))
        slow, problems = _half_send(port, sockets, 4)
        problems += _still_held(slow)
        answer = _initialize(f"http://127.0.0.1:{port}/mcp")
        if answer:
            problems.append(f"a proper request failed: {answer}")
        if proc.poll() is not None:
            problems.append(f"the server exited: {log.read_text()[-500:]}")
        said = log.read_text(errors="replace")
        notes = said.count(OUT_OF_DESCRIPTORS)
        if not 1 <= notes <= 10 or "Traceback" in said:
            problems.append(f"{notes} notes of running out, and this: {said[-500:]}")
    return problems


#: what the server says when it cannot accept for want of descriptors
OUT_OF_DESCRIPTORS = "cannot accept connections"


def _some_descriptors() -> None:
    """preexec_fn: the server starts with 1,024 descriptors (its cap sized for those)."""
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))


@contextlib.contextmanager
def _server(scratch: Path, preexec: Callable[[], None]) -> Iterator[tuple[Any, int, Path]]:
    """A real `memcli mcp --http` (read deadline 2 s) on a free port, its stderr in a
    file (never a pipe: a pipe nobody reads would stop the server once full), stopped
    at the end."""
    import socket

    from tests.support.processes import listening

    root = _workspace(scratch)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(ENV, MEMCLI_MCP_TOKEN=TOKEN, MEMCLI_MCP_READ_TIMEOUT="2")
    log = scratch / "server-stderr.txt"
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memcli", "-w", str(root), "mcp", "--http", f"127.0.0.1:{port}"],
            env=env, stderr=err,
            preexec_fn=preexec,  # noqa: PLW1509 - the server's limit only
        )
    try:
        listening(port, proc)
        yield proc, port, log
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _half_send(port: int, sockets: int, clients: int) -> tuple[list[tuple[str, Any]], list[str]]:
    """`sockets` connections from `clients` threads, each request stopped half way
    (connection n: kind n of HALF_REQUESTS in turn); a thread stops at its first refusal."""
    import socket
    import threading

    kinds = list(HALF_REQUESTS)
    slow: list[tuple[str, socket.socket]] = []
    problems: list[str] = []

    def send(first: int) -> None:
        for number in range(first, sockets, clients):
            kind = kinds[number % len(kinds)]
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                slow.append((kind, sock))
                sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" + HALF_REQUESTS[kind])
            except OSError as exc:  # the server stopped accepting: the finding itself
                problems.append(f"connection {number}: {type(exc).__name__}: {exc}")
                return

    threads = [threading.Thread(target=send, args=(first,)) for first in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return slow, problems


def _still_held(slow: list[tuple[str, Any]]) -> list[str]:
    """Every connection must be closed by the server within the read deadline (2 s) and
    a margin: one shared deadline, so a server that holds them fails in seconds instead
    of waiting on each socket in turn. Closes them all."""
    import time

    end = time.monotonic() + 20
    problems = []
    try:
        for kind in HALF_REQUESTS:
            held = 0
            for k, sock in slow:
                if k == kind:
                    sock.settimeout(max(0.05, end - time.monotonic()))
                    held += not _closed_by_server(sock)
            if held:
                problems.append(f"{kind}: {held} half-sent requests still held")
    finally:
        for _, sock in slow:
            sock.close()
    return problems


# ---------------------------------------------------------------------- finding 7

#: workspace folder names that ran a command through the post-merge hook's shell
HOSTILE_NAMES = [
    "ws $(touch pwned)",
    "ws `touch pwned`",
    'ws"; touch pwned; echo "',
    "ws'$(touch pwned)'",
    "ws $(touch pwned) 100%h",
]


def hook_injection(scratch: Path, name: str = HOSTILE_NAMES[0]) -> list[str]:
    """A workspace whose path holds shell syntax; `git merge` runs the post-merge hook:
    nothing but `memcli index` of that very workspace may run."""
    root = scratch / name
    _repository(root)
    git(root, "checkout", "-qb", "side")
    (root / "notes.txt").write_text("from the side branch\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "side")
    git(root, "checkout", "-q", "main")
    (root / "other.txt").write_text("from main\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    git(root, "merge", "-q", "--no-edit", "side")  # runs .git/hooks/post-merge
    problems = []
    planted = [str(p) for p in scratch.rglob("pwned")]
    if planted:
        problems.append(f"the hook ran a command from the path: {planted}")
    if not (root / ".memcli" / "index").is_dir():
        problems.append("the hook did not index the workspace it names")
    return problems


def driver_injection(scratch: Path) -> list[str]:
    """memcli installed under a path holding `%A` and `$(…)` (git expands the first in
    the driver command, the shell the second): a both-sides merge of memory.md must run
    the driver and nothing else."""
    from unittest import mock

    from memcli.store.gitmerge import setup

    bin_dir = scratch / "py 100%A $(touch pwned)"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    root = scratch / "repo"
    _repository(root)
    with mock.patch.object(sys, "executable", str(python)):
        setup(root)
    git(root, "checkout", "-qb", "side")
    (root / "memory.md").write_text(MEMORY + "- Side: standups at 9:30 <!-- id=mside -->\n")
    git(root, "commit", "-qam", "side")
    git(root, "checkout", "-q", "main")
    (root / "memory.md").write_text(MEMORY + "- Main: deploys on Fridays <!-- id=mmain -->\n")
    git(root, "commit", "-qam", "main")
    merge = git(root, "merge", "--no-edit", "side", check=False)
    problems = []
    if list(scratch.rglob("pwned")):
        problems.append("the driver command ran a command from the path")
    text = (root / "memory.md").read_text(encoding="utf-8")
    if merge.returncode != 0 or "id=mside" not in text or "id=mmain" not in text:
        problems.append(f"the driver did not merge both sides ({merge.stderr.strip()}):\n{text}")
    return problems


# ---------------------------------------------------------------------- finding 8

DOC_BASE = "# Notes for the docs\n\nThe build runs on Jenkins.\n"


def unanchored_attributes(scratch: Path, migrate: bool = False) -> list[str]:
    """A `docs/memory.md` (not memcli's) changed on one line differently on two branches:
    git must report the conflict; the memcli driver is for the workspace's own files
    only. With `migrate`, the repository starts with the unanchored lines earlier
    versions wrote and `memcli git setup` runs again."""
    root = scratch / "repo"
    _repository(root)
    if migrate:
        old = "*.txt text\nmemory.md merge=memcli\nlearnings.md merge=memcli\n"
        (root / ".gitattributes").write_text(old, encoding="utf-8")
        done = memcli("-w", str(root), "git", "setup")
        if done.returncode != 0:
            return [f"git setup failed: {done.stderr}"]
    docs = root / "docs"
    docs.mkdir()
    (docs / "memory.md").write_text(DOC_BASE, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "docs")
    git(root, "checkout", "-qb", "side")
    (docs / "memory.md").write_text(DOC_BASE.replace("Jenkins", "GitHub Actions"), "utf-8")
    git(root, "commit", "-qam", "side")
    git(root, "checkout", "-q", "main")
    (docs / "memory.md").write_text(DOC_BASE.replace("Jenkins", "Buildkite"), "utf-8")
    git(root, "commit", "-qam", "main")
    merge = git(root, "merge", "--no-edit", "side", check=False)
    problems = []
    text = (docs / "memory.md").read_text(encoding="utf-8")
    if merge.returncode == 0 or "<<<<<<<" not in text:
        problems.append(f"docs/memory.md merged without a conflict:\n{text}")
    attributes = (root / ".gitattributes").read_text(encoding="utf-8")
    if "\nmemory.md merge=memcli" in "\n" + attributes:
        problems.append(f".gitattributes still unanchored:\n{attributes}")
    if migrate and "*.txt text" not in attributes:
        problems.append("a line of the user's own left .gitattributes")
    checked = git(root, "check-attr", "merge", "memory.md", "docs/memory.md").stdout
    if "memory.md: merge: memcli" not in checked.splitlines()[0]:
        problems.append(f"the workspace's memory.md lost the driver: {checked}")
    return problems


# ---------------------------------------------------------------------- finding 9


def _big_memory(entries: int) -> str:
    lines = [f"- Fact number {n} about the build farm <!-- id=mf{n:05d} -->" for n in range(entries)]
    return "# Memory\n\n## Facts\n" + "\n".join(lines) + "\n"


def _file_size_limit(limit: int) -> Callable[[], None]:
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def driver_write_cut(scratch: Path, fraction: float) -> list[str]:
    """The merge driver cut off while writing %A (a file size limit makes the write fail
    at `fraction` of the result, as a kill or a full disk would): %A must hold ours,
    whole, or the whole merge; never a part."""
    scratch.mkdir(parents=True, exist_ok=True)
    base_text = _big_memory(3000)
    versions = {
        "base": base_text,
        "ours": base_text + "- Ours: deploys on Fridays <!-- id=mours -->\n",
        "theirs": base_text + "- Theirs: standups at 9:30 <!-- id=mtheirs -->\n",
    }
    paths = {}
    for name, text in versions.items():
        paths[name] = scratch / f".merge_file_{name}"
        paths[name].write_text(text, encoding="utf-8")
    paths["ours"].chmod(0o600)
    whole = len(versions["ours"]) + len(versions["theirs"]) - len(base_text)
    limit = int(whole * fraction)
    done = subprocess.run(
        [sys.executable, "-m", "memcli", "merge-driver",
         *(str(paths[n]) for n in ("base", "ours", "theirs")), "memory.md"],
        env=ENV, capture_output=True, text=True, timeout=120,
        preexec_fn=_file_size_limit(limit) if fraction < 1 else None,  # noqa: PLW1509
    )
    result = paths["ours"].read_text(encoding="utf-8")
    problems = []
    if result == versions["ours"]:
        if done.returncode == 0:
            problems.append("the driver said merged but left ours unchanged")
    elif not ("id=mours" in result and "id=mtheirs" in result and result.endswith("\n")):
        problems.append(f"%A holds {len(result)} of {whole} bytes: a part of the merge")
    elif done.returncode != 0:
        problems.append(f"merged but exit {done.returncode}: {done.stderr}")
    if paths["ours"].stat().st_mode & 0o777 != 0o600:
        problems.append(f"%A's mode changed to {paths['ours'].stat().st_mode & 0o777:o}")
    left = sorted(p.name for p in scratch.iterdir() if p not in paths.values())
    if left:
        problems.append(f"temp files left behind: {left}")
    return problems


# ---------------------------------------------------------------------- finding 17 (ids)

CONFLICT_BASE = "# Memory\n\n## Facts\n- Works at TechCorp <!-- id=mwork -->\n"
THEIR_TEXT = "Works at DataCorp"


def _planted(where: str, depth: int) -> dict[str, str]:
    """Base, ours and theirs of a both-sides text change of mwork, with entries planted
    under the ids the conflict copy would get (`mwork-<6 hex>`, then 7, … `depth` of
    them) in the version `where` names."""
    import hashlib

    digest = hashlib.sha256(THEIR_TEXT.encode("utf-8")).hexdigest()
    planted = "".join(
        f"- Planted {n} <!-- id=mwork-{digest[: 6 + n]} -->\n" for n in range(depth)
    )
    versions = {
        "base": CONFLICT_BASE,
        "ours": CONFLICT_BASE.replace("TechCorp", "TechCorp as a staff engineer"),
        "theirs": CONFLICT_BASE.replace("Works at TechCorp", THEIR_TEXT),
    }
    names = ["base", "ours", "theirs"] if where == "all" else [where]
    for name in names:
        versions[name] += planted
    return versions


#: where the entries are planted, how many ids deep
PLANTS = [("ours", 1), ("theirs", 2), ("all", 1), ("all", 3)]


def planted_conflict_id(scratch: Path, where: str = "ours", depth: int = 1) -> list[str]:
    """Real git: both sides change mwork's text (the driver keeps theirs under a new id)
    while a planted entry already holds that id: the result has no id twice and both
    texts."""
    from collections import Counter

    from memcli.store.markdown import parse

    versions = _planted(where, depth)
    root = scratch / "repo"
    _repository(root, versions["base"])
    for branch, name in (("side", "theirs"), ("main", "ours")):
        git(root, "checkout", "-q", *(["-b"] if branch == "side" else []), branch)
        (root / "memory.md").write_text(versions[name], encoding="utf-8")
        git(root, "commit", "-qam", name)
    merge = git(root, "merge", "--no-edit", "side", check=False)
    text = (root / "memory.md").read_text(encoding="utf-8")
    entries = parse(text, "memory.md").entries()
    twice = [i for i, n in Counter(e.id for e in entries).items() if n > 1]
    problems = []
    if merge.returncode != 0:
        problems.append(f"the merge failed: {merge.stdout}{merge.stderr}")
    if twice:
        problems.append(f"ids used twice: {twice}")
    texts = {e.text for e in entries}
    if not {"Works at TechCorp as a staff engineer", THEIR_TEXT} <= texts:
        problems.append(f"a side's text was lost: {sorted(texts)}")
    return problems


# ---------------------------------------------------------------------- findings 10, 14, 17

SESSION = "5b0d8c3e-7a41-4c6f-9f0e-2d7e5c1a9b10"
STATEMENT = "Remember that I always use tabs for indentation."
KNOWN = "- Deploys go out on Fridays <!-- id=mdeploy -->\n"
DEPTH = 100_000


def _line(role: str, text: str) -> str:
    import json

    return json.dumps({"type": role, "message": {"role": role, "content": text}}) + "\n"


#: lines a transcript must survive: (name, the line without its newline)
BAD_LINES = {
    "a deep array": "[" * DEPTH + "]" * DEPTH,
    "a deep object": '{"a":' * DEPTH + "1" + "}" * DEPTH,
    "deep content": '{"type": "user", "message": {"role": "user", "content": '
    + "[" * DEPTH + "]" * DEPTH + "}}",
    "not JSON": '{"type": "user", "message": {"content": "cut',
}


def _workspace(scratch: Path) -> Path:
    root = scratch / "ws"
    root.mkdir(parents=True)
    (root / "memory.md").write_text(MEMORY + KNOWN, encoding="utf-8")
    (root / "learnings.md").write_text("# Learnings\n", encoding="utf-8")
    return root


def _hook(event: str, root: Path, transcript: Path, env: dict[str, str] | None = None,
          timeout: float = 30) -> subprocess.CompletedProcess:
    import json

    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(root),
               "hook_event_name": event, "prompt": "when do deploys go out?"}
    return subprocess.run(
        [sys.executable, "-m", "memcli", "hook", event, "--timeout", str(timeout)],
        input=json.dumps(payload), env=dict(env or ENV, MEMCLI_NO_DAEMON="1"),
        capture_output=True, text=True, timeout=timeout + 60,
    )


def _offset(root: Path) -> int | None:
    import json

    try:
        state = json.loads((root / ".memcli" / "hooks.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return state["sessions"].get(SESSION, {}).get("offset")


def bad_transcript_line(scratch: Path, kind: str = "deep content") -> list[str]:
    """A transcript with one line that cannot be read (nested too deeply, not JSON) then a
    statement: the Stop hook remembers the statement, moves past the line and names it
    once; the prompt hook still injects."""
    root = _workspace(scratch)
    transcript = scratch / f"{SESSION}.jsonl"
    transcript.write_text(
        _line("user", "hello there") + BAD_LINES[kind] + "\n" + _line("user", STATEMENT),
        encoding="utf-8",
    )
    problems = []
    stop = _hook("stop", root, transcript)
    if stop.returncode != 0 or "Traceback" in stop.stderr or "nothing was added" in stop.stderr:
        problems.append(f"stop failed: {stop.stderr.strip()[-300:]}")
    if "tabs for indentation" not in (root / "memory.md").read_text(encoding="utf-8"):
        problems.append("the statement after the line was not remembered")
    if _offset(root) != transcript.stat().st_size:
        problems.append(f"the position stayed at {_offset(root)}")
    if f"{transcript}:2: skipped a line" not in stop.stderr:
        problems.append(f"no note naming line 2: {stop.stderr.strip()[-300:]}")
    again = _hook("stop", root, transcript)
    if "skipped" in again.stderr:
        problems.append("the line was named again on the next Stop")
    prompt = _hook("user-prompt-submit", root, transcript)
    if "Deploys go out on Fridays" not in prompt.stdout:
        problems.append(f"the prompt got no memory: {prompt.stderr.strip()[-300:]}")
    return problems


#: runs its arguments as a child, then says the child's peak resident memory (KB)
_MEASURED = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "sys.stderr.write(f'\\npeak_kb={peak}\\n')\n"
    "sys.exit(code)\n"
)


def _peak_rss_kb(
    args: list[str], stdin: str, env: dict[str, str]
) -> tuple[int, subprocess.CompletedProcess]:
    """Run a process to its end; (its peak resident memory in KB, its result)."""
    done = subprocess.run([sys.executable, "-c", _MEASURED, *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=300)
    head, _, peak = done.stderr.rpartition("\npeak_kb=")
    done.stderr = head
    return int(peak), done


def long_line_memory(scratch: Path, megabytes: int = 40, limit_mb: float = 1.0) -> list[str]:
    """A transcript line of `megabytes` MB (one huge message) with the line limit lowered
    to `limit_mb`: the Stop hook holds no more than the limit and a chunk of it (peak
    memory against the same hook on a short transcript), moves past it, names it once,
    and still remembers the statement after it."""
    import json

    root = _workspace(scratch)
    transcript = scratch / f"{SESSION}.jsonl"
    big = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * (megabytes << 20)}})
    transcript.write_text(_line("user", "hello there") + big + "\n" + _line("user", STATEMENT))
    small = scratch / "small.jsonl"
    small.write_text(_line("user", "hello there") + _line("user", STATEMENT))
    env = dict(ENV, MEMCLI_NO_DAEMON="1", MEMCLI_MAX_TRANSCRIPT_LINE_MB=str(limit_mb))
    payload = {"session_id": SESSION, "cwd": str(root), "hook_event_name": "Stop"}
    args = [sys.executable, "-m", "memcli", "hook", "stop", "--timeout", "120"]
    base_peak, _ = _peak_rss_kb(
        args, json.dumps(dict(payload, session_id="small", transcript_path=str(small))), env
    )
    peak, stop = _peak_rss_kb(args, json.dumps(dict(payload, transcript_path=str(transcript))), env)
    problems = []
    grown = (peak - base_peak) / 1024
    if grown > 4 * limit_mb + 16:  # the limit, a chunk, their decoding: not the line
        problems.append(f"the hook held {grown:.0f} MB more for a {megabytes} MB line")
    if stop.returncode != 0 or f"{transcript}:2: skipped a line longer than" not in stop.stderr:
        problems.append(f"no note naming line 2: {stop.stderr.strip()[-300:]}")
    if _offset(root) != transcript.stat().st_size:
        problems.append(f"the position stayed at {_offset(root)}")
    return problems


def fifo_transcript(scratch: Path, event: str = "user-prompt-submit") -> list[str]:
    """A FIFO (nobody writing) as `transcript_path`: the hook must not wait on it (the
    prompt gets its memory; no `no answer within`, no index started) and says why it
    was not read. --timeout is long: a stall shows as that message, not as a time."""
    root = _workspace(scratch)
    fifo = scratch / "session.jsonl"
    os.mkfifo(fifo)
    done = _hook(event, root, fifo, timeout=20)
    problems = []
    if "no answer within" in done.stderr or "background" in done.stderr:
        problems.append(f"the hook waited on the FIFO: {done.stderr.strip()}")
    if "a FIFO, not a transcript file" not in done.stderr:
        problems.append(f"no note saying the transcript is a FIFO: {done.stderr.strip()}")
    if event == "user-prompt-submit" and "Deploys go out on Fridays" not in done.stdout:
        problems.append("the prompt got no memory")
    return problems


#: malformed inputs of the CLI's readers: (name, file name, text, the line to name or a
#: text the error must hold)
DEEP = "[" * DEPTH + "]" * DEPTH


def _chatgpt(mapping: dict, current: object = "missing") -> str:
    import json

    return json.dumps([{"title": "t", "mapping": mapping, "current_node": current}])


CLI_INPUTS = [
    ("extract --messages, JSON", ["extract", "--messages"], "t.json", DEEP, ":1:"),
    ("extract --messages, JSONL", ["extract", "--messages"], "t.jsonl",
     _line("user", "hi") + DEEP + "\n", ":2:"),
    ("inject --messages", ["inject", "--messages"], "t.jsonl",
     _line("user", "hi") + _line("user", "x") + DEEP + "\n", ":3:"),
    ("extract --messages, pretty JSON", ["extract", "--messages"], "t.json",
     "[\n" + _line("user", "hi").strip() + ",\n" + DEEP + "\n]\n", ":3:"),
    ("import --conversation", ["import", "--conversation"], "c.json", DEEP, ":1:"),
    ("import, JSONL", ["import"], "m.jsonl", '{"text": "a"}\n' + DEEP + "\n", ":2:"),
    ("import --conversation, children loop", ["import", "--conversation"], "c.json",
     _chatgpt({"a": {"parent": None, "children": ["b"], "message": None},
               "b": {"parent": "a", "children": ["a"], "message": None}}),
     "node 'a': its children lead back to it"),
    ("import --conversation, parents loop", ["import", "--conversation"], "c.json",
     _chatgpt({"a": {"parent": "b", "children": [], "message": None},
               "b": {"parent": "a", "children": [], "message": None}}, "a"),
     "its parents lead back to it"),
    ("import --conversation, a node that is a list", ["import", "--conversation"], "c.json",
     _chatgpt({"a": [1, 2]}), "node 'a' is a list"),
    ("import --conversation, children not a list", ["import", "--conversation"], "c.json",
     _chatgpt({"a": {"parent": None, "children": 5}}), "node 'a': 'children' is a int"),
    ("import --conversation, a child that is a list", ["import", "--conversation"], "c.json",
     _chatgpt({"a": {"parent": None, "children": [["b"]]}}), "node 'a': a child is not an id"),
    ("import --conversation, current node a list", ["import", "--conversation"], "c.json",
     _chatgpt({"a": {"parent": None, "children": [], "message": {"author": {"role": "user"},
               "content": {"parts": ["hi"]}}}}, ["a"]), None),
    ("import --conversation, message a string", ["import", "--conversation"], "c.json",
     _chatgpt({"a": {"parent": None, "children": [], "message": "hi"}}),
     "node 'a': 'message' is a str"),
    ("import --conversation, author a string", ["import", "--conversation"], "c.json",
     _chatgpt({"a": {"parent": None, "children": [], "message": {"author": "me"}}}),
     "message 'author' is not an object"),
    ("import --conversation, LoCoMo session a number", ["import", "--conversation"], "c.json",
     '{"conversation": {"speaker_a": "A", "session_1": 5}}', "session_1 is a int"),
]


#: the first DEEP_INPUTS of CLI_INPUTS are JSON nested too deeply (finding 10)
DEEP_INPUTS = 6


def cli_reader(scratch: Path, number: int) -> list[str]:
    """One malformed input (CLI_INPUTS[number]) given to the command that reads it: a
    clear error naming the file and the place (file:line or the node; exit 1, no
    traceback, memory.md unchanged), or, for a file memcli can read, a clean import;
    never a hang, never a traceback."""
    name, command, filename, text, expected = CLI_INPUTS[number]
    root = _workspace(scratch)
    given = scratch / filename
    given.write_text(text, encoding="utf-8")
    before = (root / "memory.md").read_bytes()
    try:
        done = memcli("-w", str(root), *command, str(given), "--dry-run"
                      if command[0] == "extract" else "--json", timeout=60)
    except subprocess.TimeoutExpired:
        return [f"{name}: still running after 60 s"]
    problems = []
    if "Traceback" in done.stderr or "RecursionError" in done.stderr:
        problems.append(f"{name}: a traceback: {done.stderr.strip()[-300:]}")
    if expected is None:
        if done.returncode != 0:
            problems.append(f"{name}: refused a file it can read: {done.stderr.strip()}")
        return problems
    if done.returncode == 0:
        problems.append(f"{name}: accepted")
    place = f"{given.name}{expected}" if expected.startswith(":") else expected
    if place not in done.stderr + done.stdout:
        problems.append(f"{name}: the error does not name {place!r}: {done.stderr.strip()[-300:]}")
    if (root / "memory.md").read_bytes() != before:
        problems.append(f"{name}: memory.md changed")
    return problems


# ---------------------------------------------------------------------- the scenarios


def _count(attack: Callable[[Path], list[str]], variants: int) -> Callable[[Path], tuple[int, int]]:
    def run(scratch: Path) -> tuple[int, int]:
        harmless = 0
        for number in range(variants):
            place = scratch / f"attempt-{number}"
            place.mkdir(parents=True)
            harmless += not attack(place, number)  # type: ignore[call-arg]
        return variants, harmless

    return run


def _http(scratch: Path) -> tuple[int, int]:
    """Each kind of half-sent request is an attempt; all fail if the server died or no
    longer answered."""
    problems = half_sent_requests(scratch)
    if any(problem.split(":")[0] not in HALF_REQUESTS for problem in problems):
        return len(HALF_REQUESTS), 0
    return len(HALF_REQUESTS), len(HALF_REQUESTS) - len(problems)


def scenarios() -> list[tuple[str, Callable[[Path], tuple[int, int]]]]:
    """One scenario per finding fixed: (name, run(scratch) -> (attempts, harmless))."""
    return [
        ("MCP over HTTP: 200 half-sent requests at a 128-descriptor limit (#3)", _http),
        (
            "MCP over HTTP: the descriptor limit lowered to 128 under the server (#3)",
            _count(lambda p, n: descriptors_lowered(p), 1),
        ),
        (
            "post-merge hook: shell syntax in the workspace path (#7)",
            _count(lambda p, n: hook_injection(p, HOSTILE_NAMES[n]), len(HOSTILE_NAMES)),
        ),
        (
            "merge driver: `%A` and `$(…)` in memcli's own path (#7)",
            _count(lambda p, n: driver_injection(p), 1),
        ),
        (
            "merge driver: the write of %A cut off part way (#9)",
            _count(lambda p, n: driver_write_cut(p, (0.0, 0.3, 0.7, 0.999, 1.0)[n]), 5),
        ),
        (
            "merge driver: a planted <id>-<sha6> entry (#17)",
            _count(lambda p, n: planted_conflict_id(p, *PLANTS[n]), len(PLANTS)),
        ),
        (
            "transcript: a line nested too deeply or not JSON, Stop and prompt hooks (#10)",
            _count(lambda p, n: bad_transcript_line(p, list(BAD_LINES)[n]), len(BAD_LINES)),
        ),
        (
            "CLI readers: JSON nested too deeply (#10)",
            _count(lambda p, n: cli_reader(p, n), DEEP_INPUTS),
        ),
        (
            "import --conversation: ChatGPT nodes that loop or are malformed (#11)",
            _count(lambda p, n: cli_reader(p, DEEP_INPUTS + n), len(CLI_INPUTS) - DEEP_INPUTS),
        ),
        (
            "Stop hook: a 40 MB transcript line, memory bounded (#14)",
            _count(lambda p, n: long_line_memory(p, 40, 1.0), 1),
        ),
        (
            "hooks: a FIFO as transcript_path (#17)",
            _count(lambda p, n: fifo_transcript(p, ("user-prompt-submit", "stop")[n]), 2),
        ),
        (
            ".gitattributes: a docs/memory.md conflict reported by git (#8)",
            _count(lambda p, n: unanchored_attributes(p, migrate=bool(n % 2)), 2),
        ),
    ]

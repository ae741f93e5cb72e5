"""With no LLM configured, no memcli command opens a network connection: not the CLI,
not the watch daemon (which lives long enough for onnxruntime's native telemetry to
report, ≈ 9 s after start), not the MCP server. Python-level attempts are caught by an
audit hook (sitecustomize in every child process); native ones (onnxruntime's C++) by
strace, where it is available."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HOOK = """
import os, sys

_LOG = os.environ.get("NETWORK_AUDIT_LOG")

def _record(event, detail):
    with open(_LOG, "a") as handle:
        handle.write(f"{os.getpid()} {event} {detail!r}\\n")

def _hook(event, args):
    if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
        sock = args[0]
        if int(getattr(sock, "family", 1)) != 1:  # anything but AF_UNIX
            _record(event, args[1:])
    elif event in ("socket.getaddrinfo", "socket.gethostbyname", "urllib.Request"):
        _record(event, args[:2])

if _LOG:
    sys.addaudithook(_hook)
"""

#: a telemetry or network switch the user did not set: memcli must not depend on it
SWITCHES = (
    "ORT_DISABLE_TELEMETRY",
    "HF_HUB_DISABLE_TELEMETRY",
    "DO_NOT_TRACK",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN",
)

DRIVER = """
import json, os, signal, subprocess, sys, time

ws = sys.argv[1]
memcli = [sys.executable, "-m", "memcli", "-w", ws]
results = {}

def run(name, *args, stdin=None):
    done = subprocess.run(memcli + list(args), input=stdin, capture_output=True, text=True,
                          timeout=120)
    results[name] = [done.returncode, done.stdout, done.stderr[-2000:]]

run("index", "index")
run("add", "add", "Deploys with blue-green rollouts on Kubernetes")
run("search", "search", "python tests", "--json", "--no-touch")
run("inject", "inject", "-q", "How should I write Python tests?", "--max-tokens", "200")

mcp = subprocess.Popen(memcli + ["mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
def send(message):
    mcp.stdin.write(json.dumps(message) + "\\n"); mcp.stdin.flush()
def answer(wanted):
    while True:
        line = mcp.stdout.readline()
        if not line:
            return None
        data = json.loads(line)
        if data.get("id") == wanted:
            return data
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "network-test", "version": "1"}}})
results["mcp_init"] = answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
    "name": "search_memories", "arguments": {"query": "python tests", "limit": 2}}})
results["mcp_search"] = answer(2)
mcp.stdin.close()
mcp.wait(timeout=30)

watch = subprocess.Popen(memcli + ["watch"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
started = time.time()
while subprocess.run(memcli + ["watch", "--status"], capture_output=True).returncode:
    if time.time() - started > 120 or watch.poll() is not None:
        break
    time.sleep(0.3)
run("served_search", "search", "pytest fixtures", "--json", "--no-touch")
status = subprocess.run(memcli + ["watch", "--status", "--json"], capture_output=True, text=True)
results["status"] = json.loads(status.stdout or '{"data": {}}')["data"]
time.sleep(max(0.0, 12.0 - (time.time() - started)))  # past onnxruntime's first report
watch.send_signal(signal.SIGINT)
try:
    watch.wait(timeout=15)
except subprocess.TimeoutExpired:
    watch.kill()
print(json.dumps(results))
"""


@pytest.mark.slow
def test_no_command_opens_a_network_connection(workspace: Path, tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(textwrap.dedent(HOOK))
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    audit = tmp_path / "audit.log"
    audit.write_text("")
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    root = Path(__file__).resolve().parents[2]
    env.update(PYTHONPATH=os.pathsep.join([str(hooks), str(root)]), NETWORK_AUDIT_LOG=str(audit))
    command = [sys.executable, str(driver), str(workspace)]
    trace = tmp_path / "strace.log"
    strace = shutil.which("strace")
    if strace and _strace_works(strace):
        command = [
            strace,
            "-f",
            "-qq",
            "--seccomp-bpf",
            "-e",
            "trace=connect,sendto,sendmsg",
            "-o",
            str(trace),
        ]
        command += [sys.executable, str(driver), str(workspace)]
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    for name in ("index", "add", "search", "inject", "served_search"):
        assert results[name][0] == 0, (name, results[name])
    assert json.loads(results["search"][1])["data"]["hits"][0]["id"] == "m8f3a2c1"
    assert "pytest" in results["inject"][1]
    assert results["mcp_init"]["result"]["serverInfo"]
    assert not results["mcp_search"]["result"].get("isError"), results["mcp_search"]
    assert results["status"]["requests"] >= 1  # the served search went through the daemon
    assert audit.read_text() == ""  # no Python-level connection, lookup or request
    if trace.exists():
        attempts = [
            line
            for line in trace.read_text().splitlines()
            if re.search(r"sa_family=AF_INET6?\b", line) or "htons(53)" in line
        ]
        assert attempts == [], attempts[:5]  # nothing native either (onnxruntime telemetry)
    else:
        pytest.skip("strace unavailable: native connections were not checked")


def _strace_works(strace: str) -> bool:
    try:
        probe = subprocess.run(
            [strace, "-f", "-qq", "--seccomp-bpf", "-e", "trace=connect", "true"],
            capture_output=True,
        )
    except OSError:
        return False
    return probe.returncode == 0


def test_memcli_switches_dependency_telemetry_off() -> None:
    env = {k: v for k, v in os.environ.items() if k not in SWITCHES}
    code = (
        "import json, os, memcli\n"
        "print(json.dumps({k: os.environ.get(k) for k in "
        f"{list(SWITCHES[:3])!r} + ['HF_HUB_DISABLE_IMPLICIT_TOKEN']}}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert set(json.loads(done.stdout).values()) == {"1"}
    # a user's explicit choice stands
    env["DO_NOT_TRACK"] = "0"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert json.loads(done.stdout)["DO_NOT_TRACK"] == "0"


def test_onnxruntime_reads_the_switch_memcli_sets() -> None:
    """The switch is the one the installed onnxruntime's native library reads."""
    import onnxruntime

    library = Path(onnxruntime.__file__).parent / "capi"
    names = [*library.glob("*.so*"), *library.glob("*.dll")]
    if not names:
        pytest.skip("no onnxruntime shared library found")
    blobs = b"".join(p.read_bytes() for p in names)
    if b"events.data.microsoft.com" not in blobs:
        pytest.skip("this onnxruntime build has no telemetry uploader")
    assert b"ORT_DISABLE_TELEMETRY" in blobs

"""Latency of `memcli hook` as Claude Code runs it: one process per hook, the host's
JSON on stdin, through the `memcli` console script.

    python bench/hooks.py [--size 1000] [--runs 40] [--json]

On a generated workspace (and the transcript fixture of the tests as the session's
transcript): `hook user-prompt-submit` and `hook session-start` with `memcli watch`
running (the daemon answers the inject request), the same without a watcher (in-process),
and `hook stop` on a transcript that grows by one turn between runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from bench.perf import pct, start_watch  # noqa: E402
from tests.support.generate import contexts, generate  # noqa: E402

PROMPTS = contexts(50, seed=11)
FIXTURE = ROOT / "tests" / "fixtures" / "claude_code_session.jsonl"
MEMCLI = str(Path(sys.executable).parent / "memcli")


def payload(event: str, ws: Path, transcript: Path, prompt: str) -> str:
    data = {
        "session_id": "5b0d8c3e-7a41-4c6f-9f0e-2d7e5c1a9b10",
        "transcript_path": str(transcript),
        "cwd": str(ws),
        "permission_mode": "default",
        "hook_event_name": event,
    }
    if event == "UserPromptSubmit":
        data["prompt"] = prompt
    if event == "SessionStart":
        data["source"] = "resume"
    if event == "Stop":
        data["stop_hook_active"] = False
    return json.dumps(data)


def timed(event: str, ws: Path, transcript: Path, runs: int, env: dict[str, str]) -> dict:
    arg = {
        "UserPromptSubmit": "user-prompt-submit",
        "SessionStart": "session-start",
        "Stop": "stop",
    }[event]
    walls, injected = [], 0
    for i in range(runs):
        if event == "Stop":  # one new turn for each Stop
            with transcript.open("a") as handle:
                handle.write(json.dumps(_turn(i)) + "\n")
        stdin = payload(event, ws, transcript, PROMPTS[i % len(PROMPTS)])
        started = time.perf_counter()
        result = subprocess.run(
            [MEMCLI, "hook", arg], input=stdin, capture_output=True, text=True, env=env, cwd=ws
        )
        walls.append((time.perf_counter() - started) * 1000)
        if result.returncode != 0 or "nothing was added" in result.stderr:
            raise RuntimeError(f"hook {arg} failed: {result.stderr}")
        injected += bool(result.stdout.strip())
    return {
        "p50_ms": round(pct(walls, 0.5), 1),
        "p95_ms": round(pct(walls, 0.95), 1),
        "max_ms": round(max(walls), 1),
        "answered_with_a_block": injected,
        "runs": runs,
    }


def _turn(i: int) -> dict:
    return {
        "type": "user",
        "sessionId": "5b0d8c3e-7a41-4c6f-9f0e-2d7e5c1a9b10",
        "message": {"role": "user", "content": f"Remember that build {i} of the app is green."},
        "uuid": f"00000000-0000-4000-8000-{i:012d}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="entries in the workspace")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        generate(ws, args.size, seed=3)
        transcript = Path(tmp) / "session.jsonl"
        shutil.copy(FIXTURE, transcript)
        # no watcher started by the hooks measured without one (memcli.surfaces.daemon.autostart)
        env = dict(os.environ, XDG_CACHE_HOME=str(Path(tmp) / "cache"), MEMCLI_WATCH_AUTOSTART="0")
        env.pop("MEMCLI_WORKSPACE", None)
        subprocess.run([MEMCLI, "-w", str(ws), "index"], env=env, capture_output=True, check=True)
        result: dict[str, object] = {"entries": args.size}
        proc = start_watch(ws, env)
        try:
            for event in ("UserPromptSubmit", "SessionStart"):
                result[f"{event}_watcher"] = timed(event, ws, transcript, args.runs, env)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        few = max(5, args.runs // 4)
        result["UserPromptSubmit_no_watcher"] = timed("UserPromptSubmit", ws, transcript, few, env)
        result["Stop_no_watcher"] = timed("Stop", ws, transcript, few, env)
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"workspace of {args.size} entries")
        for name, value in result.items():
            if isinstance(value, dict):
                print(
                    f"{name:30} p50 {value['p50_ms']:7.1f} ms  p95 {value['p95_ms']:7.1f} ms  "
                    f"max {value['max_ms']:7.1f} ms  ({value['answered_with_a_block']}/"
                    f"{value['runs']} with a block)"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

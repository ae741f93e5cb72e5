"""Generated workspaces for benchmarks: N entries over every type, realistic lengths,
English with some Chinese and code, deterministic for a seed."""

from __future__ import annotations

import random
from pathlib import Path

SUBJECTS = [
    "Python",
    "React",
    "Docker",
    "Postgres",
    "Kubernetes",
    "Redis",
    "the CI pipeline",
    "the billing service",
    "Next.js",
    "FastAPI",
    "Terraform",
    "the search API",
    "Celery",
    "the mobile app",
    "GraphQL",
    "the data warehouse",
    "Rust",
    "Go services",
    "nginx",
]
VERBS = [
    "prefers",
    "uses",
    "avoids",
    "migrated",
    "benchmarks",
    "deploys",
    "reviews",
    "debugs",
    "documents",
    "monitors",
    "refactors",
    "tests",
    "profiles",
    "caches",
    "pins",
]
DETAILS = [
    "with strict type checks",
    "behind a feature flag",
    "on Friday afternoons",
    "after the incident in March",
    "in the staging cluster",
    "with a 5 second timeout",
    "using structured logging",
    "because the old approach leaked memory",
    "with blue-green deploys",
    "for the EU region",
    "to cut p95 latency in half",
    "since the upgrade to version 3",
    "with property-based tests",
    "in a nightly job",
]
CHINESE = [
    "喜欢在周五前完成代码评审",
    "数据库迁移要先在预发环境验证",
    "线上问题先看日志和监控",
    "团队每周三开架构评审会",
    "发布前必须跑完整测试",
]
CODE = [
    "`pytest -x -q`",
    "`docker compose up -d db`",
    "`kubectl rollout status`",
    "`EXPLAIN ANALYZE`",
    "`git bisect run`",
]
SECTIONS = {
    "memory.md": ["Preferences", "Facts", "Patterns", "Reflections", "Corrections"],
    "learnings.md": ["Skills", "Lessons"],
}


def sentence(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(CHINESE) + f"（{rng.choice(SUBJECTS)}）"
    text = f"{rng.choice(['Team', 'User', 'Alex', 'The platform group'])} {rng.choice(VERBS)} "
    text += f"{rng.choice(SUBJECTS)} {rng.choice(DETAILS)}"
    if roll > 0.85:
        text += f"; run {rng.choice(CODE)} first"
    if roll > 0.95:
        text += f"\n  Also {rng.choice(VERBS)} {rng.choice(SUBJECTS)} {rng.choice(DETAILS)}."
    return text


def generate(path: Path, count: int, seed: int = 1) -> Path:
    """Write memory.md and learnings.md with `count` entries in total under `path`."""
    rng = random.Random(seed)
    path.mkdir(parents=True, exist_ok=True)
    buckets: dict[tuple[str, str], list[str]] = {}
    for i in range(count):
        name = "memory.md" if rng.random() < 0.7 else "learnings.md"
        section = rng.choice(SECTIONS[name])
        day = 1 + (i * 7) % 28
        month = 1 + (i // 97) % 11
        importance = rng.choice(["0.3", "0.5", "0.7", "0.9"])
        meta = f"id=g{i:06d} imp={importance} created=2026-{month:02d}-{day:02d}"
        if rng.random() < 0.01:
            meta += " pin=true"
        text = f"{sentence(rng)} (ticket OPS-{i})"  # every text unique: no free cache hits
        buckets.setdefault((name, section), []).append(f"- {text} <!-- {meta} -->")
    for name, sections in SECTIONS.items():
        lines = [f"# {name[:-3].title()}", ""]
        for section in sections:
            lines += [f"## {section}", *buckets.get((name, section), []), ""]
        (path / name).write_text("\n".join(lines), encoding="utf-8")
    return path


def contexts(count: int, seed: int = 2) -> list[str]:
    """Query contexts like an agent would send (questions, short chats)."""
    rng = random.Random(seed)
    result = []
    for _ in range(count):
        subject = rng.choice(SUBJECTS)
        kind = rng.random()
        if kind < 0.5:
            result.append(f"How should I set up {subject} {rng.choice(DETAILS)}?")
        elif kind < 0.8:
            result.append(f"We are having trouble with {subject}. What did we learn last time?")
        elif kind < 0.9:
            result.append(rng.choice(CHINESE))
        else:
            result.append(f"Remind me what the team {rng.choice(VERBS)} for {subject}.")
    return result

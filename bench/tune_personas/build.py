#!/usr/bin/env python3
"""Build a persona folder (ws/memory.md, ws/learnings.md, queries.jsonl) from its source.

    python build.py SOURCE.txt OUT_DIR [--check]

The source is hand-written; this script only assigns stable ids, writes the files and
checks the labels (every relevant key exists, counts per kind, language mix, paraphrase
queries sharing words with their primary answer). Standard library only.

Source format (lines; `#` starts a comment line):
    @persona NAME
    == memory.md Preferences          a section (file, heading)
    KEY | YYYY-MM-DD | TEXT            an entry
    ?? KIND | LANG | QUERY | KEY KEY   a query; relevant keys, most important first
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

KINDS = ("lexical", "paraphrase", "zh", "cross", "temporal", "agent", "offtopic")
MINIMA = {"paraphrase": 40, "zh": 28, "cross": 10, "temporal": 10, "agent": 16,
          "lexical": 10, "offtopic": 28}
HEAD = {"memory.md": "# Memory\n\nWhat memcli remembers about me and my work.\n",
        "learnings.md": "# Learnings\n\nWhat worked, what failed, and how to do things here.\n"}
ORDER = {"memory.md": ["Preferences", "Facts", "Corrections", "Patterns"],
         "learnings.md": ["Skills", "Lessons"]}
CJK = re.compile(r"[\u4e00-\u9fff]")
STOP = set(["a", "an", "the", "of", "to", "in", "on", "at", "for", "by", "with", "from", "and", "or", "not", "no", "is", "are", "was", "were", "be", "been", "do", "does", "did", "i", "me", "my", "we", "our", "us", "you", "your", "it", "its", "this", "that", "these", "those", "what", "which", "who", "whom", "how", "when", "where", "why", "there", "here", "any", "some", "all", "about", "into", "than", "then", "so", "if", "as", "can", "could", "should", "would", "will", "shall", "may", "might", "must", "have", "has", "had", "get", "got", "use", "used", "using", "one", "only", "via", "per", "new", "now", "just", "before", "after", "again", "also"])


def parse(src: str):
    persona, entries, queries = None, {}, []
    file = section = None
    for n, raw in enumerate(src.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@persona"):
            persona = line.split(None, 1)[1]
        elif line.startswith("=="):
            file, section = line[2:].split()
        elif line.startswith("??"):
            parts = [p.strip() for p in line[2:].split("|")]
            if len(parts) != 4:
                raise SystemExit(f"line {n}: query needs 4 fields: {line}")
            kind, lang, query, keys = parts
            queries.append((n, kind, lang, query, keys.split()))
        else:
            parts = [p.strip() for p in line.split("|", 2)]
            if len(parts) != 3:
                raise SystemExit(f"line {n}: entry needs KEY | DATE | TEXT: {line}")
            key, date, text = parts
            if key in entries:
                raise SystemExit(f"line {n}: duplicate key {key}")
            entries[key] = {"file": file, "section": section, "date": date, "text": text}
    return persona, entries, queries


def entry_id(persona: str, key: str, file: str) -> str:
    h = hashlib.sha256(f"{persona}:{key}".encode()).hexdigest()
    return ("m" if file == "memory.md" else "l") + h[:10]


def stamp(persona: str, key: str, date: str) -> str:
    h = int(hashlib.sha256(f"t:{persona}:{key}".encode()).hexdigest(), 16)
    return f"{date}T{h % 14 + 7:02d}:{h // 14 % 60:02d}:{h // 840 % 60:02d}Z"


def lang_of(text: str) -> str:
    cjk = len(CJK.findall(text))
    latin_words = re.findall(r"[A-Za-z][A-Za-z'.-]+", re.sub(r"`[^`]*`", "", text))
    if cjk == 0:
        return "en"
    if cjk >= 2 * len(" ".join(latin_words)) / 4:  # mostly Chinese; tech terms allowed
        return "zh"
    return "mixed"


def words(text: str) -> set[str]:
    toks = re.findall(r"[a-z0-9]+", text.lower())
    out = set()
    for t in toks:
        if t in STOP or len(t) < 3:
            continue
        out.add(t[:5])  # crude stem: share of the first 5 letters
    return out


def main() -> int:
    src_path, out = Path(sys.argv[1]), Path(sys.argv[2])
    persona, entries, queries = parse(src_path.read_text(encoding="utf-8"))
    ids = {k: entry_id(persona, k, e["file"]) for k, e in entries.items()}
    assert len(set(ids.values())) == len(ids), "id collision"
    problems = []

    # Workspace files.
    (out / "ws").mkdir(parents=True, exist_ok=True)
    for file, sections in ORDER.items():
        lines = ["---", "memcli: 1", "---", HEAD[file]]
        for sec in sections:
            lines.append(f"## {sec}")
            for k, e in entries.items():
                if e["file"] == file and e["section"] == sec:
                    if not re.fullmatch(r"20(24|25|26)-\d\d-\d\d", e["date"]):
                        problems.append(f"bad date {k}")
                    if not "2024-01-01" <= e["date"] <= "2026-11-30":
                        problems.append(f"date out of range {k}")
                    lines.append(f"- {e['text']} <!-- id={ids[k]} "
                                 f"created={stamp(persona, k, e['date'])} -->")
            lines.append("")
        (out / "ws" / file).write_text("\n".join(lines), encoding="utf-8")
    for k, e in entries.items():
        if e["section"] not in ORDER.get(e["file"], []):
            problems.append(f"unknown section for {k}: {e['file']} {e['section']}")

    # Queries.
    rows, used = [], Counter()
    for i, (n, kind, lang, query, keys) in enumerate(queries, 1):
        if kind not in KINDS:
            problems.append(f"line {n}: kind {kind}")
        if lang not in ("en", "zh", "mixed"):
            problems.append(f"line {n}: lang {lang}")
        for k in keys:
            if k not in entries:
                problems.append(f"line {n}: unknown key {k}")
            used[k] += 1
        if kind == "offtopic" and keys:
            problems.append(f"line {n}: offtopic with labels")
        if kind != "offtopic" and not keys:
            problems.append(f"line {n}: no labels")
        if len(set(keys)) != len(keys):
            problems.append(f"line {n}: repeated key")
        if kind == "paraphrase" and keys and keys[0] in entries:
            shared = words(query) & words(entries[keys[0]]["text"])
            if shared:
                problems.append(f"line {n}: paraphrase shares {sorted(shared)}: {query}")
        if kind == "zh" and keys and keys[0] in entries and not (
                CJK.search(query) and lang_of(entries[keys[0]]["text"]) != "en"):
            problems.append(f"line {n}: zh query/answer not Chinese: {query}")
        if kind == "cross" and keys and keys[0] in entries:
            ql = "zh" if CJK.search(query) else "en"
            al = "zh" if lang_of(entries[keys[0]]["text"]) == "zh" else "en"
            if ql == al:
                problems.append(f"line {n}: cross query and answer share language: {query}")
        rel = [ids[k] for k in keys if k in ids]
        rows.append({"id": f"q{i:03d}", "query": query, "lang": lang, "kind": kind,
                     "relevant": rel, "primary": rel[0] if rel else None})
    with (out / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")

    # Report.
    kinds = Counter(r["kind"] for r in rows)
    langs = Counter(r["lang"] for r in rows)
    elangs = Counter(lang_of(e["text"]) for e in entries.values())
    files = Counter(e["file"] for e in entries.values())
    years = Counter(e["date"][:4] for e in entries.values())
    print(f"persona {persona}: {len(entries)} entries {dict(files)}; languages {dict(elangs)} "
          f"({', '.join(f'{k} {100 * v / len(entries):.0f}%' for k, v in elangs.items())}); "
          f"years {dict(sorted(years.items()))}")
    print(f"{len(rows)} queries: {dict(kinds)}; langs {dict(langs)}")
    print(f"entries never labelled: {sum(1 for k in entries if not used[k])}")
    if not 130 <= len(entries) <= 280:
        problems.append(f"{len(entries)} entries, want 130-280")
    if not 140 <= len(rows) <= 200:
        problems.append(f"{len(rows)} queries, want 140-200")
    for k, v in MINIMA.items():
        if kinds[k] < v:
            problems.append(f"{kinds[k]} {k} queries, want >= {v}")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

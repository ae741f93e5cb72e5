"""docs/reference/modules.md: every module of the package by layer, with the first
sentence of its docstring (read with `ast`, nothing imported). Citations of documents
outside the repository (the design notes and the issue tracker the code was written
against) are left out of the page."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from memcli.surfaces.docgen.markdown import HEADER, REGENERATE, escape

#: the layers, lowest first, as tests/unit/test_architecture.py checks them
LAYERS = ("core", "store", "index", "adapters", "logic", "services", "surfaces")
#: a citation of an outside document: "DESIGN §5.1", "seed 002 phase four", "issue 14 §6"
_CITE = (
    r"(?:DESIGN\s*§[\d.,\-–§ ]*\d"
    r"|seed\s*0\d\d(?:\s*§[\d.]+)?(?:\s*phase\s+\w+)?(?::[^,;)]*)?"
    r"|issues?\s*\d+(?:\s*§[\d.\-–]+)?)"
)
_PART = re.compile(rf"^\s*(?:{_CITE}|§[\d.\-–]+)\s*$")
_PAREN = re.compile(r"\s*\(([^()]*)\)")
_LOOSE = re.compile(rf"\s*\b{_CITE}")


def _scrub(text: str) -> str:
    """`text` without citations of outside documents."""

    def paren(match: re.Match[str]) -> str:
        parts = [p for p in match.group(1).split(",") if not _PART.match(p)]
        kept = ",".join(parts).strip()
        return f" ({kept})" if kept else ""

    text = _PAREN.sub(paren, text)
    text = _LOOSE.sub("", text).replace(" of (", " (")  # "the rule of seed 000 (…)"
    return re.sub(r"\s+([,.:;])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


def first_sentence(docstring: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    paragraph = " ".join(docstring.strip().split("\n\n")[0].split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z`(])", paragraph)
    return paragraph[: match.start()] if match else paragraph


def modules_page(package: Path | None = None) -> str:
    package = package or Path(__file__).resolve().parents[2]
    lines = [
        "# Module map",
        "",
        HEADER.format(cmd=REGENERATE).rstrip(),
        "",
        "Every module of `memcli/`, by layer (lowest first; a module imports only from its",
        "own layer and the ones above it in this list), with the first sentence of its",
        "docstring. See [Architecture](../architecture.md).",
        "",
    ]
    for layer in LAYERS:
        lines += [f"## {layer}", "", "| module | what it is |", "|---|---|"]
        for path in sorted((package / layer).rglob("*.py")):
            doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
            name = path.relative_to(package.parent).as_posix()
            lines.append(f"| `{name}` | {escape(_scrub(first_sentence(doc)))} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"

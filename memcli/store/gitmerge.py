"""A git merge driver for the curated files (memory.md, learnings.md and those `[files]`
adds: the workspace's registry), archive.md and the logs that merges by entry id.

`merge=union` (or git's line merge) treats an entry list as lines: an entry edited on
both machines comes out twice, or as a conflict. This driver merges the three versions
(base, ours, theirs) entry by entry:

- the file's layout and prose merge as text, with each entry standing in as one line
  (its id), so entries added on both sides are both kept, in order;
- an entry changed on one side takes that change; changed the same way on both, once;
- changed differently on both sides: merged field by field (text, each metadata key);
  where both changed the text, ours stays and theirs is kept beside it under a new id
  with `conflict=<id>` (which `memcli doctor` reports) — never a duplicate id, never a
  lost edit;
- removed on one side: removed, unless the other side changed it (an edit outlives a
  removal; `forget` left a copy in archive.md anyway);
- an agent's proposal (`review=`, memcli.core.review) one side reviewed and the other
  changed: the reviewed version stays, the changed one beside it, still pending, with
  `conflict=<id>` — a confirmation never lands on a text the person did not see;
- a version holding a NUL byte is left to git (exit 1): no memcli file holds one.

`memcli git setup` registers it (`.gitattributes` plus `git config merge.memcli.*`) and a
post-merge hook that re-indexes. The attributes are anchored to the workspace
(`/memory.md`: a `docs/memory.md` further down is not ours); the commands git runs
through the shell quote every path (shlex), and the driver's `%` as git wants it (`%%`).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from memcli.core.errors import MemcliError
from memcli.core.models import Entry
from memcli.core.registry import BUILTIN, Registry
from memcli.core.review import REVIEW_KEY
from memcli.store.atomic import atomic_write, read_bounded
from memcli.store.markdown import Document, EntryBlock, parse, render_entry_lines
from memcli.store.merge import merge_lines


def attributes(files: Registry = BUILTIN) -> list[str]:
    """The .gitattributes lines for a workspace with registry `files`: its curated
    files, archive.md and the ordered logs (both machines' notes of one day kept)."""
    return [f"/{name} merge=memcli" for name in files.merged]


#: the lines of a workspace without `[files]`
ATTRIBUTES = attributes()
#: what earlier versions wrote (unanchored: it matched a memory.md in any folder)
OLD_ATTRIBUTES = {line[1:]: line for line in ATTRIBUTES}
TOKEN = "\x00memcli-entry:"
HOOK_MARK = "# memcli: re-index after a merge"
MAX_ID_CHARS = 64  # memcli.core.models.is_valid_id


@dataclass
class MergeOutcome:
    text: str
    conflicts: int  # entries whose text both sides changed (kept both ways)


def merge_entries(
    base: str, ours: str, theirs: str, filename: str, files: Registry = BUILTIN
) -> MergeOutcome:
    """Merge three versions of an entry file by entry id (see the module docstring);
    `files`: the workspace's registry (the file's default type and headings)."""
    for text, side in zip((base, ours, theirs), ("base", "ours", "theirs"), strict=True):
        if "\x00" in text:  # no memcli file holds one: every command would refuse it
            raise ValueError(f"{side} version of {filename} holds a NUL byte")
    docs = [parse(text, filename, files) for text in (base, ours, theirs)]
    for doc, side in zip(docs, ("base", "ours", "theirs"), strict=True):
        blocking = [p for p in doc.problems if p.blocks_writes]
        if blocking:
            raise ValueError(f"{side} version of {filename}: {blocking[0]}")
        ids = [e.id for e in doc.entries()]
        if len(ids) != len(set(ids)):  # which one an id means is unclear: git decides
            twice = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"{side} version of {filename} uses id {twice[0]} twice")
    o, a, b = ({blk.entry.id: blk for blk in d.entry_blocks()} for d in docs)
    eol = docs[1].eol
    merged_tokens, _ = merge_lines(*(_tokens(d) for d in docs))
    chosen: dict[str, list[str] | None] = {}
    extra: dict[str, list[str]] = {}  # theirs' text of a both-sides text change
    conflicts = 0
    taken = {*o, *a, *b}  # a conflict copy's new id is none of these (nor another copy's)
    for entry_id in dict.fromkeys([*o, *a, *b]):
        lines, other = _decide(o.get(entry_id), a.get(entry_id), b.get(entry_id), eol, taken)
        chosen[entry_id] = lines
        if other is not None:
            extra[entry_id] = other
            conflicts += 1
    out: list[str] = []
    emitted: set[str] = set()
    for token in merged_tokens:
        if not token.startswith(TOKEN):
            out.append(token)
            continue
        entry_id = token[len(TOKEN) :].rstrip("\n")
        lines = chosen.get(entry_id)
        if lines is None or entry_id in emitted:
            continue
        emitted.add(entry_id)
        out.extend(lines)
        out.extend(extra.get(entry_id, []))
    text = "".join(out)
    missing = [i for i, lines in chosen.items() if lines is not None and i not in emitted]
    if missing:  # removed from the layout by one side, kept by the decision (edited)
        doc = parse(text, filename, files)
        for entry_id in missing:
            block = a.get(entry_id) or b.get(entry_id)
            assert block is not None
            entry = parse("".join(chosen[entry_id] or []), filename, files).entries()
            doc.insert_entry(replace(entry[0], type=block.entry.type) if entry else block.entry)
            for extra_entry in parse("".join(extra.get(entry_id, [])), filename, files).entries():
                doc.insert_entry(replace(extra_entry, type=block.entry.type))
        text = doc.serialize()
    return MergeOutcome(docs[1].bom + text, conflicts)  # the layout's lines carry no BOM


def _tokens(doc: Document) -> list[str]:
    """The file as lines, each entry block replaced by one line naming its id."""
    out: list[str] = []
    for block in doc.blocks:
        if isinstance(block, EntryBlock):
            out.append(f"{TOKEN}{block.entry.id}\n")
        else:
            out.extend(block.lines)
    return out


def _decide(
    o: EntryBlock | None, a: EntryBlock | None, b: EntryBlock | None, eol: str, taken: set[str]
) -> tuple[list[str] | None, list[str] | None]:
    """(the entry's lines in the result or None when it goes, theirs' lines to keep
    beside it when both sides changed its text differently)."""
    if o is None:
        if a is None or b is None:
            return ((a or b).lines if (a or b) else None), None  # added on one side
        if a.lines == b.lines:
            return a.lines, None
        return _merge_changed(None, a, b, eol, taken)
    if a is None and b is None:
        return None, None
    if a is None:  # ours removed it
        return (None if b.lines == o.lines else b.lines), None  # type: ignore[union-attr]
    if b is None:  # theirs removed it
        return (None if a.lines == o.lines else a.lines), None
    if b.lines == o.lines or a.lines == b.lines:
        return a.lines, None
    if a.lines == o.lines:
        return b.lines, None
    return _merge_changed(o, a, b, eol, taken)


def _merge_changed(
    o: EntryBlock | None, a: EntryBlock, b: EntryBlock, eol: str, taken: set[str]
) -> tuple[list[str], list[str] | None]:
    """Both sides changed one entry: field by field; a text both changed is kept twice,
    and so is a proposal one side reviewed while the other changed it (`_reviewed_apart`)."""
    base = o.entry if o is not None else None
    apart = _reviewed_apart(base, a, b)
    if apart is not None:
        kept, pending = apart
        their_meta = {**pending.entry.meta, "conflict": kept.entry.id}
        their_meta["id"] = _conflict_id(kept.entry.id, pending.entry.text, taken)
        return kept.lines, render_entry_lines(pending.entry.text, their_meta, eol, a.marker)
    meta = dict(a.entry.meta)
    for key in dict.fromkeys([*a.entry.meta, *b.entry.meta]):
        was = base.meta.get(key) if base else None
        ours, theirs = a.entry.meta.get(key), b.entry.meta.get(key)
        if ours == was and theirs != was:  # only theirs changed this key
            if theirs is None:
                meta.pop(key, None)
            else:
                meta[key] = theirs
    base_text = base.text if base else None
    if a.entry.text == b.entry.text or b.entry.text == base_text:
        text, other = a.entry.text, None
    elif a.entry.text == base_text:
        text, other = b.entry.text, None
    else:
        text, other = a.entry.text, b.entry
    lines = render_entry_lines(text, meta, eol, a.marker)
    if other is None:
        return lines, None
    their_meta = dict(other.meta)
    their_meta["id"] = _conflict_id(a.entry.id, other.text, taken)
    their_meta["conflict"] = a.entry.id
    return lines, render_entry_lines(other.text, their_meta, eol, a.marker)


def _reviewed_apart(
    base: Entry | None, a: EntryBlock, b: EntryBlock
) -> tuple[EntryBlock, EntryBlock] | None:
    """A proposal (memcli.core.review: `review=` set in base) that one side reviewed (its
    `review=` gone: confirmed, or its request dropped) while the other changed it (its
    text or what it asks for): (the reviewed version, kept as it is; the changed one,
    kept beside it still pending), else None. Merged field by field, the person's
    confirmation would land on a text they never saw."""
    if base is None or REVIEW_KEY not in base.meta:
        return None

    def reviewed(e: Entry) -> bool:
        return REVIEW_KEY not in e.meta

    def changed(e: Entry) -> bool:
        return REVIEW_KEY in e.meta and (
            e.text != base.text or e.meta[REVIEW_KEY] != base.meta[REVIEW_KEY]
        )

    if reviewed(a.entry) and changed(b.entry):
        return a, b
    if reviewed(b.entry) and changed(a.entry):
        return b, a
    return None


def _conflict_id(entry_id: str, text: str, taken: set[str]) -> str:
    """`<id>-<6 hex digits of the text>`, more digits (then numbered) where a version
    already uses that id (a planted entry may); at most 64 characters, as every id. The
    new id joins `taken`."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()

    def joined(suffix: str) -> str:
        return f"{entry_id[: MAX_ID_CHARS - 1 - len(suffix)]}-{suffix}"

    for digits in range(6, max(6, MAX_ID_CHARS - 1 - len(entry_id)) + 1):
        found = joined(digest[:digits])
        if found not in taken:
            break
    number = 2
    while found in taken:
        found = joined(f"{digest[:6]}-{number}")
        number += 1
    taken.add(found)
    return found


# ---------------------------------------------------------------------- git plumbing


def run_driver(base: Path, ours: Path, theirs: Path, pathname: str | None) -> int:
    """What git runs: merge into `ours` (replaced in one rename, keeping its mode); 0
    when merged (always, unless a version cannot be read or parsed or the result cannot
    be written, when git's conflict handling takes over: 1)."""
    filename = os.path.basename(pathname or str(ours))
    folder = os.path.dirname(pathname or "")
    files = _registry(folder)
    if files.is_log(f"{os.path.basename(folder)}/{filename}"):  # its own defaults
        filename = f"{os.path.basename(folder)}/{filename}"
        folder = os.path.dirname(folder)
        files = _registry(folder)
    elif not files.is_entry_file(filename):
        filename = files.primary
    try:
        # a regular file each, no link, within the size limit (memcli.store.links' rule)
        texts = [read_bounded(p).decode("utf-8") for p in (base, ours, theirs)]
        outcome = merge_entries(*texts, filename=filename, files=files)
    except (OSError, UnicodeDecodeError, ValueError, MemcliError) as exc:
        sys.stderr.write(f"memcli merge-driver: {pathname or ours}: {exc}; left to git\n")
        return 1
    try:  # a temp file renamed over %A: killed mid-write, %A is still ours, whole
        atomic_write(ours, outcome.text)
    except MemcliError as exc:
        sys.stderr.write(f"memcli merge-driver: {pathname or ours}: {exc}; left to git\n")
        return 1
    if outcome.conflicts:
        sys.stderr.write(
            f"memcli merge-driver: {pathname or ours}: {outcome.conflicts} entr(ies) edited "
            "on both sides; both texts kept (`memcli doctor` lists them)\n"
        )
    return 0


def setup(root: Path) -> list[str]:
    """Register the driver for the git repository holding `root`: .gitattributes in
    `root`, `git config merge.memcli.*` and a post-merge hook. Returns what it did."""
    from memcli.store.config_files import load_registry
    from memcli.store.links import follow

    # a cloned repository's `.gitattributes -> ~/.bashrc` is refused (the link rule)
    done = _write_attributes(follow(root, ".gitattributes"), attributes(load_registry(root)))
    git_dir = _git(root, "rev-parse", "--git-dir")
    if git_dir is None:
        return done  # not in a repository (yet): the attributes wait for `git init`
    # git runs the driver through the shell after replacing %O %A %B %P (quoted) itself
    program = shlex.join([sys.executable, "-m", "memcli", "merge-driver"])
    command = program.replace("%", "%%") + " %O %A %B %P"
    if _git(root, "config", "--local", "merge.memcli.driver") != command:
        _git(root, "config", "--local", "merge.memcli.name", "memcli: merge entries by id")
        _git(root, "config", "--local", "merge.memcli.driver", command)
        done.append("git config merge.memcli.driver")
    hooks = Path(git_dir) if os.path.isabs(git_dir) else root / git_dir
    hook = hooks / "hooks" / "post-merge"
    bad = next((c for c in str(root) if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:  # quoted it would span lines, which a later setup cannot replace
        done.append(
            f"{hook}: not written: the workspace path holds a control character "
            f"({bad!r}); run `memcli index` after a merge"
        )
        return done
    current = hook.read_text(encoding="utf-8") if hook.exists() else ""
    index = shlex.join([sys.executable, "-m", "memcli", "-w", str(root), "index"])
    line = f"{index} >/dev/null 2>&1 || true  {HOOK_MARK}\n"
    if line not in current:
        hook.parent.mkdir(parents=True, exist_ok=True)
        body = current or "#!/bin/sh\n"
        if not body.endswith("\n"):
            body += "\n"
        # an earlier line of ours (paths in double quotes, open to `$(...)`) is replaced
        kept = [old for old in body.splitlines(keepends=True) if HOOK_MARK not in old]
        hook.write_text("".join(kept) + line, encoding="utf-8")
        hook.chmod(0o755)
        done.append(f"{hook}: re-index after a merge")
    return done


def _write_attributes(path: Path, wanted_lines: list[str]) -> list[str]:
    """Add the anchored driver lines to .gitattributes, replacing the unanchored ones
    earlier versions wrote; what it did."""
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    lines: list[str] = []
    for line in existing.splitlines():
        line = OLD_ATTRIBUTES.get(line.strip(), line)
        if not (line in wanted_lines and line in lines):  # the old and the new line: once
            lines.append(line)
    migrated = lines != existing.splitlines()
    wanted = [line for line in wanted_lines if line not in lines]
    if not wanted and not migrated:
        return []
    text = "".join(f"{line}\n" for line in lines + wanted)
    atomic_write(path, text)  # to the target `follow` allowed, never through a link
    what = ", ".join(wanted) if wanted else "anchored to the workspace"
    return [f"{path}: {what}"]


def _registry(folder: str) -> Registry:
    """The registry of the workspace in `folder` (relative to the repository's top,
    where git runs the driver); the built-in one when its `[files]` is bad."""
    from memcli.core.errors import ConfigError
    from memcli.store.config_files import load_registry

    try:
        return load_registry(Path(folder or "."))
    except ConfigError:
        return BUILTIN


def _git(root: Path, *args: str) -> str | None:
    try:
        result = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def conflict_entries(entries: list[Entry]) -> list[Entry]:
    """Entries a merge kept both ways (`conflict=` names the entry they compete with)."""
    return [e for e in entries if e.meta.get("conflict")]

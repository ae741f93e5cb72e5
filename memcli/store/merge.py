"""Three-way merge of Markdown text that never drops a line either side wrote.

Used where two writers changed one file from a common version and both changes must
survive: an editor's bytes that landed in a file memcli had already replaced, and
`memcli undo` on a file that changed after the operation it reverts. Lines are merged
with `merge3` (the 3-way merge of Bazaar/Breezy); where both sides changed the same
region differently, both sides' lines are kept (ours first, then the lines of theirs
that ours lacks), since for a list of memories keeping both is right and losing either
is not.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MergeResult:
    text: str
    conflicts: int  # regions both sides changed differently (kept both ways)


def merge_text(base: str, ours: str, theirs: str) -> MergeResult:
    """Merge `theirs` into `ours`, both derived from `base`."""
    if ours == theirs or theirs == base:
        return MergeResult(ours, 0)
    if ours == base:
        return MergeResult(theirs, 0)
    from merge3 import Merge3

    base_lines = base.splitlines(keepends=True)
    our_lines = ours.splitlines(keepends=True)
    their_lines = theirs.splitlines(keepends=True)
    _terminate(base_lines, our_lines, their_lines)
    merger = Merge3(base_lines, our_lines, their_lines)
    out: list[str] = []
    conflicts = 0
    for region in merger.merge_regions():
        kind = region[0]
        if kind == "unchanged":
            out.extend(base_lines[region[1] : region[2]])
        elif kind in ("a", "same"):
            out.extend(our_lines[region[1] : region[2]])
        elif kind == "b":
            out.extend(their_lines[region[1] : region[2]])
        else:  # conflict: (kind, base_start, base_end, a_start, a_end, b_start, b_end)
            conflicts += 1
            mine = our_lines[region[3] : region[4]]
            seen = set(mine)
            out.extend(mine)
            out.extend(line for line in their_lines[region[5] : region[6]] if line not in seen)
    text = "".join(out)
    if not ours.endswith(("\n", "\r")) and not theirs.endswith(("\n", "\r")):
        text = text.rstrip("\r\n")  # neither side ended with a newline: neither does this
    return MergeResult(text, conflicts)


def _terminate(*versions: list[str]) -> None:
    """Give every version's last line a newline, so a missing final newline on one
    side does not make its last line differ from the same line on the other."""
    eol = "\n"
    for lines in versions:
        for line in lines:
            if line.endswith("\r\n"):
                eol = "\r\n"
                break
    for lines in versions:
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += eol

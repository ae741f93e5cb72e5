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
    base_lines = base.splitlines(keepends=True)
    our_lines = ours.splitlines(keepends=True)
    their_lines = theirs.splitlines(keepends=True)
    _terminate(base_lines, our_lines, their_lines)
    lines, conflicts = merge_lines(base_lines, our_lines, their_lines)
    text = "".join(lines)
    if not ours.endswith(("\n", "\r")) and not theirs.endswith(("\n", "\r")):
        text = text.rstrip("\r\n")  # neither side ended with a newline: neither does this
    return MergeResult(text, conflicts)


def merge_lines(
    base: list[str], ours: list[str], theirs: list[str]
) -> tuple[list[str], int]:
    """Three-way merge of line lists (each line with its end of line); a region both
    sides changed differently keeps ours, then the lines of theirs ours lacks. Returns
    the lines and the number of such regions."""
    from merge3 import Merge3

    out: list[str] = []
    conflicts = 0
    for region in Merge3(base, ours, theirs).merge_regions():
        kind = region[0]
        if kind == "unchanged":
            out.extend(base[region[1] : region[2]])
        elif kind in ("a", "same"):
            out.extend(ours[region[1] : region[2]])
        elif kind == "b":
            out.extend(theirs[region[1] : region[2]])
        else:  # conflict: (kind, base_start, base_end, a_start, a_end, b_start, b_end)
            conflicts += 1
            mine = ours[region[3] : region[4]]
            seen = set(mine)
            out.extend(mine)
            out.extend(line for line in theirs[region[5] : region[6]] if line not in seen)
    return out, conflicts


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

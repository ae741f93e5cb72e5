"""`memcli doctor` in a workspace that reads other layers (docs/layers.md): besides the
workspace's own report, one per other layer (its files parse, its index is current, its
settings, its trust, its git merge driver) and one per layer `[layers] read` names that
cannot be read, each naming its layer.

Another layer's files are only looked at: bytes an editor wrote late into one are listed
(`late_writes`), not merged back (its own doctor, or a write there, does that).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from memcli.services.health import Check, config_check, index_check, merge_driver_check
from memcli.services.layers import HERE, NO_WORKSPACE, USER, Layer, unreadable


def doctor(layers: Sequence[Layer], own: dict[str, Any]) -> dict[str, Any]:
    """`own` (the workspace's report, Memory.doctor) with `layer` and `layers`: the
    reports of the other layers read and of those named but not read; `ok` only when
    every one is, `own_ok` whether the workspace itself is (a problem in the user layer
    is that layer's, not the project's). `own` as it is when there are none."""
    found = [layer_report(layer) for layer in layers[1:]]
    found += unread(layers)
    if not found:
        return own
    ok = own["ok"] and all(report["ok"] for report in found)
    return {**own, "layer": HERE, "layers": found, "ok": ok, "own_ok": own["ok"]}


def layer_report(layer: Layer) -> dict[str, Any]:
    """One other layer's report: Memory.doctor's files and checks, with its trust."""
    from memcli.services.recovery import diagnose

    rt = layer.memory.runtime
    report = diagnose(rt.require(), merge=False)
    checks = [config_check(rt.settings), index_check(rt.index_manager), trust_check(layer)]
    git = merge_driver_check(rt.root)
    checks += [git] if git is not None else []
    report["checks"] = [c.to_dict() for c in checks]
    report["ok"] = report["ok"] and all(c.ok for c in checks)
    return {"layer": layer.name, **report}


def trust_check(layer: Layer) -> Check:
    """Whether the layer's own memcli.toml applies in full: the per-user workspace is
    the person's own; another is once `memcli trust` approved it as it is now."""
    from memcli.store.trust import is_trusted

    root = layer.memory.root
    if layer.name == USER:
        return Check("trust", True, "your own workspace: its settings apply as they are")
    if is_trusted(root):
        return Check("trust", True, "trusted (`memcli trust`): its memcli.toml applies in full")
    withheld = layer.memory.settings.ignored
    if not withheld:
        return Check("trust", True, "not trusted; its memcli.toml sets nothing that needs it")
    return Check(
        "trust",
        True,
        f"not trusted: {', '.join(withheld)} of its memcli.toml not applied "
        f"(`memcli trust {root}` applies them)",
    )


def unread(layers: Sequence[Layer]) -> list[dict[str, Any]]:
    """A report for each layer the workspace's `[layers] read` names that is not read
    (not a workspace, or failing the walk up's ownership check); a per-user workspace
    that does not exist is no finding (most people have none)."""
    from memcli.services.layers import _names  # noqa: PLC2701 - its own parser
    from memcli.store.workspace import default_workspace

    mem = layers[0].memory
    read = {os.path.realpath(layer.memory.root) for layer in layers}
    found = []
    for name in _names(mem.settings.layers.read):
        if name == USER:
            path = os.path.realpath(default_workspace(mem.runtime.env))
        else:
            path = os.path.realpath(mem.root / os.path.expanduser(name))
        problem = None if path in read else unreadable(path)
        if problem is None or (name == USER and problem == NO_WORKSPACE):
            continue
        check = Check("layer", False, f"not read: {problem}")
        found.append({**_EMPTY, "layer": name, "workspace": path, "checks": [check.to_dict()]})
    return found


#: the keys of a report of a layer that could not be looked at
_EMPTY: dict[str, Any] = {
    "problems": [],
    "duplicate_ids": [],
    "in_both": [],
    "removed_entries": [],
    "deleted_entries": [],
    "merged_late_writes": [],
    "late_writes": [],
    "merge_conflicts": [],
    "ok": False,
}

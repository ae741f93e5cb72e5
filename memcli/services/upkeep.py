"""The Memory facade's upkeep half, its base class: what keeps a workspace in shape
rather than reads or adds to it. Compress and reflect (memcli.services.maintain), forget
and restore (.archive), history, removed entries and undo (.recovery), and doctor
(.recovery and .health). Each method hands the workspace's Runtime to the service that
does the work; memcli.services.memory.Memory is the class to use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

# the services each method calls are imported by that method: a read through the Memory
# facade (search, inject, get) imports none of them
if TYPE_CHECKING:
    from memcli.core.models import Entry
    from memcli.logic.reflect import Trigger
    from memcli.services.review import Outcome
    from memcli.services.runtime import Runtime
    from memcli.store.changes import Applied, Plan


class Upkeep:
    """Compress, reflect, forget, restore, history, undo and doctor of one workspace."""

    runtime: Runtime

    # ------------------------------------------------------------------ compress, reflect

    def plan_compress(self, *, target_tokens: int | None = None) -> Plan:
        """What compress would do (docs/maintenance.md); nothing is written. An LLM, when
        configured, writes the consolidated entries; its failure raises LLMError."""
        from memcli.services import maintain

        return maintain.plan_compress(self.runtime, target_tokens=target_tokens)

    def diff(self, plan: Plan) -> str:
        """A plan as a unified diff of the files it would change."""
        from memcli.services import maintain

        return maintain.diff(self.runtime, plan)

    def apply(self, plan: Plan) -> Applied:
        """Write a plan: archive copies first, entries that changed meanwhile left alone;
        access counts of merged entries are added to the entry that replaced them."""
        from memcli.services import maintain

        return maintain.apply(self.runtime, plan)

    def compress(self, *, target_tokens: int | None = None, dry_run: bool = False) -> Plan:
        """Plan and (unless dry_run) apply compress; returns the plan."""
        from memcli.services import maintain

        return maintain.compress(self.runtime, target_tokens=target_tokens, dry_run=dry_run)

    def plan_reflect(self, *, force: bool = False) -> tuple[Trigger, Plan]:
        """Whether reflection is due, and the insights it would write."""
        from memcli.services import maintain

        return maintain.plan_reflect(self.runtime, force=force)

    def reflect(self, *, force: bool = False, dry_run: bool = False) -> tuple[Trigger, Plan]:
        """Plan and (unless dry_run) write reflections; returns the trigger and plan."""
        from memcli.services import maintain

        return maintain.reflect(self.runtime, force=force, dry_run=dry_run)

    def after_write(self) -> list[str]:
        """The automatic reflect / compress of memcli.toml ([reflect] auto, [compress]
        auto) after add or extract; returns what they did. Failures become notices."""
        from memcli.services import maintain

        return maintain.after_write(self.runtime)

    # ------------------------------------------------------------------ forget, restore

    def forget(self, entry_id: str, *, reason: str | None = None, by: str = "agent") -> Outcome:
        """Forget an entry; `.archived` says whether it moved to archive.md (restorable,
        archived first, then removed: a crash in between leaves a copy in both places).

        `by` says who asks, as for `add`: "agent" (the default: a program through the
        API, as MCP forget_memory) archives at once only what a program wrote and nobody
        confirmed; an entry the person stands behind stays as it is and waits for them in
        `memcli review` (docs/agents.md). "person" (`memcli forget`) archives at once.
        `reason` is kept in archive.md ("forgotten"; an agent's "forgotten by an agent:
        REASON")."""
        from memcli.services import archive
        from memcli.services.review import Outcome, agent_forget

        if by == "person":
            why = "forgotten" if reason is None else reason
            found = archive.forget(self.runtime, entry_id, reason=why)
            return Outcome(found, True)
        return agent_forget(self.runtime, entry_id, reason=reason)

    def restore(self, entry_id: str) -> Entry:
        """Bring an archived entry back to the file and section it came from."""
        from memcli.services import archive

        return archive.restore(self.runtime, entry_id)

    # ------------------------------------------------------------------ history

    def history(
        self, entry_id: str | None = None, *, file: str | None = None, limit: int = 20
    ) -> list[Any]:
        """Past versions of the files, newest first (`memcli.services.recovery.Version`);
        with `entry_id`, the versions in which that entry changed."""
        from memcli.services.recovery import versions

        return versions(self.runtime.require(), entry_id=entry_id, file=file, limit=limit)

    def history_damage(self) -> list[str]:
        """What this process found damaged in the history while reading it (a line per
        object: where and what), for `history` to say why versions are missing."""
        objects = self.runtime.store.history.objects
        return [f"{objects.path(sha)}: {why}" for sha, why in sorted(objects.damaged.items())]

    def removed(self) -> list[dict[str, Any]]:
        """Entries in no file now whose text the history holds (deleted by hand, by a
        stale editor save, ...; `memcli.services.removed`); `restore ID` brings one back."""
        from memcli.services.recovery import removed_entries

        return removed_entries(self.runtime.require())

    def plan_undo(self) -> Any:
        """The undo of the newest change not yet undone, memcli's or a save by hand
        (`memcli.services.undo.UndoPlan`)."""
        from memcli.services.recovery import plan_undo

        return plan_undo(self.runtime.require())

    def undo(self, plan: Any) -> None:
        """Write an undo planned by `plan_undo`."""
        from memcli.services.recovery import apply_undo

        apply_undo(self.runtime.require(), plan)

    def doctor(self, extra: Sequence[Any] = ()) -> dict[str, Any]:
        """What needs attention in the workspace: the files
        (`memcli.services.recovery.diagnose`) and what surrounds them
        (`memcli.services.health`: model, ONNX export, index, git merge driver, and the
        surfaces' `extra` checks such as the watcher's)."""
        from memcli.services.health import checks
        from memcli.services.recovery import diagnose

        rt = self.runtime
        report = diagnose(rt.require())
        texts = [e.text for e in rt.require().entries(False)]
        found = checks(rt.root, rt.settings, rt.index_manager, extra, texts)
        report["checks"] = [c.to_dict() for c in found]
        report["ok"] = report["ok"] and all(c.ok for c in found)
        return report

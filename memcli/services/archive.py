"""archive.md: forgetting an entry (restorable), restoring one, and keeping a copy of
an entry an update supersedes. Archive first, then remove: a crash in between leaves a
copy in both places, never in neither."""

from __future__ import annotations

from dataclasses import replace

from memcli.core.errors import NotFoundError, ValidationError
from memcli.core.models import ARCHIVE_FILE, Entry, format_time, new_id, utc_now
from memcli.core.validate import check_meta_value, check_type
from memcli.services.entries import all_entries, find
from memcli.services.runtime import Runtime, operation
from memcli.store.markdown import Document, id_prefix_for


@operation("forget")
def forget(
    rt: Runtime, entry_id: str, *, reason: str = "forgotten", replaced_by: str | None = None
) -> Entry:
    """Move an entry to archive.md (restorable); returns it as it was."""
    from memcli.store.changes import add_to_archive, archived_copy

    check_meta_value("--reason", reason)
    if not reason or not reason.strip():
        raise ValidationError("--reason is empty", hint="say why, or leave it out")
    found = find(rt, entry_id)
    now = format_time(utc_now())
    rt.store.update(ARCHIVE_FILE, add_to_archive([archived_copy(found, reason, replaced_by, now)]))

    def remove(doc: Document) -> Entry:
        if doc.find(found.id) is None:
            return found
        return doc.remove_entry(found.id)

    rt.store.update(found.file, remove)
    return found


@operation("restore")
def restore(rt: Runtime, entry_id: str) -> Entry:
    """Bring an archived entry back to the file and section it came from (or any entry
    that is in no file but whose text the history holds, its last version:
    memcli.services.removed.restore_removed)."""
    archive = rt.require().load(ARCHIVE_FILE)
    block = archive.find(entry_id.strip())
    if block is None:
        from memcli.services.recovery import restore_removed

        back = restore_removed(rt.store, entry_id.strip())  # deleted, the history has it?
        if back is not None:
            return back
        raise NotFoundError(
            f"no archived entry with id {entry_id!r} in {rt.root / ARCHIVE_FILE}",
            hint="`memcli list --include-archived --type archived` shows archived ids; "
            "`memcli history --removed` the entries that left the files",
        )
    old = block.entry
    restored = as_it_was(rt, old)

    def put_back(doc: Document) -> Entry:
        if doc.find(old.id) is not None:
            return doc.find(old.id).entry  # type: ignore[union-attr]
        return doc.insert_entry(restored)

    result = rt.store.update(restored.file, put_back)  # the destination first: a kill
    rt.store.update(ARCHIVE_FILE, lambda doc: doc.find(old.id) and doc.remove_entry(old.id))
    return result  # between the two writes leaves it in both (doctor says so), never in neither


def as_it_was(rt: Runtime, old: Entry) -> Entry:
    """An archived entry as it read before it was archived: its type, its file (`from=`)
    and its metadata without the archive's keys. ValidationError when its `type=` or
    `from=` is not one this workspace can take back; nothing is changed."""
    from memcli.store.changes import ARCHIVE_KEYS

    meta = {k: v for k, v in old.meta.items() if k not in ARCHIVE_KEYS}
    try:
        entry_type = check_type(old.meta.get("type") or "fact")
    except ValidationError:
        raise ValidationError(
            f"{ARCHIVE_FILE}:{old.line}: archived entry {old.id} has type="
            f"{old.meta.get('type')!r}, which is not a usable type; nothing was changed",
            hint="fix or remove type= in that entry's <!-- ... --> comment",
        ) from None
    files = rt.store.files
    target = old.meta.get("from") or files.file_for_type(entry_type)
    if not files.is_own_file(target, rt.store.entry_files()):
        raise ValidationError(
            f"{ARCHIVE_FILE}:{old.line}: archived entry {old.id} names from={target!r}, "
            f"which is not one of this workspace's entry files ({', '.join(files.names)}, "
            "episodes/YYYY-MM-DD.md); nothing was changed",
            hint="fix or remove from= in that entry's <!-- ... --> comment (without it, "
            f"restore puts the entry in {files.file_for_type(entry_type)})",
        )
    if "/" in target:  # an episode file: its folder may be gone (or a link)
        rt.store.make_folder(target.rsplit("/", 1)[0])
    return replace(old, type=entry_type, file=target, meta=meta, id_explicit=True)


def archive_superseded(rt: Runtime, entry: Entry) -> str:
    """A copy of `entry` as it reads now, put in archive.md under a fresh id as superseded
    by the entry (a program's rewrite of its own entry, a confirmed proposal's text in
    place of the person's); returns the copy's id, which `memcli restore` takes."""
    from memcli.store.changes import add_to_archive, archived_copy

    old_id = new_id(all_entries(rt, include_archived=True), id_prefix_for(entry.file))
    old = replace(entry, id=old_id, meta={**entry.meta, "id": old_id})
    copy = archived_copy(old, f"superseded by {entry.id}", entry.id, format_time(utc_now()))
    rt.store.update(ARCHIVE_FILE, add_to_archive([copy]))
    return old_id

"""`edit`: an entry's text and metadata changed in place, and what an edit asks for.

`Changes` is one edit's request (None: left as it is), checked before anything is
written; `edit` writes it for a person (everything applies) or for a program whose entry
it is (a pin or an importance ≥ 0.9 it asks for waits in `review=`). An agent's edit of
an entry the person stands behind is a proposal beside it that waits for them:
memcli.services.review.agent_edit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memcli.core.errors import NotFoundError
from memcli.core.models import BY_KEY, Entry, fmt_unit, format_time, utc_now
from memcli.core.review import Held, asking, beyond, hold
from memcli.core.validate import (
    check_keywords,
    check_meta_value,
    check_secret,
    check_unit,
    clean_keywords,
    clean_text,
)
from memcli.logic.keywords import recomputed_keywords
from memcli.services.entries import find
from memcli.services.runtime import Runtime, operation
from memcli.store.markdown import Document


@dataclass(frozen=True)
class Changes:
    """What an edit changes: None leaves it as it is; `allow_secret` lets text that looks
    like a credential in and marks the entry `secret=ok`."""

    text: str | None = None
    importance: float | None = None
    confidence: float | None = None
    keywords: Sequence[str] | None = None
    source: str | None = None
    pin: bool | None = None
    allow_secret: bool = False

    def checked(self) -> Changes:
        """These changes with the text cleaned; ValidationError naming what is wrong."""
        text = self.text
        if text is not None:
            text = clean_text(text)
            check_secret(text, self.allow_secret)
        check_unit("importance", self.importance)
        check_unit("confidence", self.confidence)
        check_meta_value("--source", self.source)
        check_keywords("--keywords", self.keywords)
        return replace(self, text=text)

    def split(self, entry: Entry) -> tuple[Changes, Held]:
        """An agent's changes to `entry`: what applies now, and what waits for a person
        (a pin, an importance ≥ 0.9 above the entry's: memcli.core.review)."""
        _, _, _, asked = hold(entry.type, self.importance, bool(self.pin))
        now = replace(
            self,
            importance=None if asked.importance is not None else self.importance,
            pin=None if asked.pin else self.pin,
        )
        return now, beyond(entry, asked)

    def applied(self, entry: Entry, now: str) -> Entry:
        """`entry` with these changes, `updated` stamped; who wrote it as it was. New text
        without `keywords` recomputes the automatic keywords (recomputed_keywords)."""
        meta = dict(entry.meta)
        meta["id"] = entry.id
        if self.importance is not None:
            meta["imp"] = fmt_unit(self.importance)
        if self.confidence is not None:
            meta["conf"] = fmt_unit(self.confidence)
        kws = None
        if self.keywords is not None:
            kws = clean_keywords(self.keywords)
        elif self.text is not None:
            kws = recomputed_keywords(entry.keywords, entry.text, self.text)
        if kws:
            meta["kw"] = ",".join(kws)
        elif kws is not None:
            meta.pop("kw", None)
        if self.source is not None:
            meta["src"] = self.source
        if self.pin:
            meta["pin"] = "true"
        elif self.pin is not None:
            meta.pop("pin", None)
        if self.allow_secret:
            meta["secret"] = "ok"
        meta["updated"] = now
        text = self.text if self.text is not None else entry.text
        return replace(entry, text=text, meta=meta, id_explicit=True)


@operation("edit")
def edit(rt: Runtime, entry_id: str, changes: Changes, *, by: str | None) -> Entry:
    """Change an entry's text and/or metadata in place (Memory.edit). `by`: "person"
    (everything applies, the entry is the person's), a program (the entry is the
    program's, its pin or importance ≥ 0.9 waits in `review=`), None (who wrote it stays;
    a program's request alone on an entry the person stands behind)."""
    changes = changes.checked()
    found = find(rt, entry_id)
    now = format_time(utc_now())

    def change(doc: Document) -> Entry:
        block = doc.find(found.id)
        if block is None:
            raise NotFoundError(
                f"entry {found.id} changed or disappeared in {found.file} during the edit",
                hint="run `memcli list` and try again",
            )
        asked, held = changes, Held()
        if by != "person":  # an agent's pin or high importance waits for a person
            asked, held = changes.split(block.entry)
        new = asked.applied(block.entry, now)
        meta = asking(dict(new.meta), held, block.entry)
        if by is not None:
            meta[BY_KEY] = by
        return doc.replace_entry(found.id, replace(new, meta=meta))

    return rt.store.update(found.file, change)

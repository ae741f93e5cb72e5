"""Imported conversations (`memcli import --conversation`): each one becomes an ordered
log `conversations/<name>.md`, one entry per turn ("<speaker>: <text>") with the turn's
time as `created=`, the conversation as `src=` and the turn's own id as `turn=`.

Only what people said is kept: an assistant's replies are left out of the log (they are
not the person's memories). `extract_conversations` is the other way in (`memcli import
conversations.json`): the user's messages go through the same extract decisions as a
transcript, and nothing of the assistant's is read.

An ordered log is a sequence (docs/search.md): a search lets a turn borrow relevance from the
turns next to it, which a curated memory.md never does. A conversation is a record, so
compress never merges, supersedes or fades its turns (provenance "conversation");
`memcli forget ID` or removing the file does. A file that already exists is never
overwritten: importing the same conversation twice is refused, naming the file, and
nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from memcli.adapters.conversations import Conversation, Turn
from memcli.core.errors import ValidationError
from memcli.core.models import CONVERSATIONS_DIR, Entry, format_time, new_id
from memcli.core.validate import check_meta_value, clean_text
from memcli.services.runtime import Runtime, operation
from memcli.store.markdown import Document, id_prefix_for, parse, render_entry_lines

if TYPE_CHECKING:
    from memcli.logic.extract import Decision

#: speakers whose turns are never kept or remembered (what a model said)
ASSISTANT_ROLES = frozenset({"assistant", "model", "ai"})
#: speakers whose statements are the user's own
USER_ROLES = frozenset({"user", "human"})


@dataclass(frozen=True)
class ImportedConversation:
    """What an import wrote (or, in a dry run, would write)."""

    file: str
    title: str
    turns: int
    first: str | None  # the first turn's time (ISO), if known
    last: str | None

    def to_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "title": self.title,
            "turns": self.turns,
            "first": self.first,
            "last": self.last,
        }


def render_conversation(conversation: Conversation, name: str, ids: list[str]) -> str:
    """The Markdown of one conversation log (front matter, a title, the sessions as plain
    lines, one list item per turn). `ids`: one entry id per turn."""
    title = " ".join(conversation.title.split()) or conversation.name
    lines = [
        "---\n",
        "memcli: 1\n",
        "type: turn\n",
        f"title: {_yaml_string(title)}\n",
        "---\n",
        f"# {title}\n",
    ]
    session = None
    for turn, entry_id in zip(conversation.turns, ids, strict=True):
        if turn.session != session:
            session = turn.session
            day = f" · {turn.created:%Y-%m-%d}" if turn.created else ""
            label = session.replace("_", " ").capitalize() if session else "Conversation"
            lines += ["\n", f"{label}{day}\n", "\n"]
        meta = {"id": entry_id}
        if turn.created is not None:
            meta["created"] = format_time(turn.created)
        meta["src"] = conversation.name
        if turn.source_id:
            meta["turn"] = turn.source_id
        speaker = " ".join(turn.speaker.split())
        text = clean_text(f"{speaker}: {turn.text}" if speaker else turn.text)
        lines += render_entry_lines(text, meta, "\n")
    return "".join(lines)


@dataclass(frozen=True)
class Found:
    """What a conversations file holds: for `memcli import` to say what it found."""

    conversations: int
    user_messages: int
    assistant_replies: int

    def to_dict(self) -> dict[str, int]:
        return {
            "conversations": self.conversations,
            "user_messages": self.user_messages,
            "assistant_replies": self.assistant_replies,
        }


def found_in(conversations: list[Conversation]) -> Found:
    turns = [t for c in conversations for t in c.turns]
    return Found(
        len(conversations),
        sum(t.speaker.lower() in USER_ROLES for t in turns),
        sum(t.speaker.lower() in ASSISTANT_ROLES for t in turns),
    )


def extract_conversations(
    rt: Runtime, conversations: list[Conversation], *, source: str, dry_run: bool = False
) -> list[Decision]:
    """The user's messages of `conversations` through extract (ADD / UPDATE / NOOP / SKIP
    per statement, as for a transcript; with dry_run nothing is written); the assistant's
    replies are not read."""
    from memcli.services import intake

    messages = [
        {"role": "user", "content": turn.text}
        for conversation in conversations
        for turn in conversation.turns
        if turn.speaker.lower() in USER_ROLES
    ]
    return intake.extract(rt, messages, source=source, dry_run=dry_run) if messages else []


def people_only(conversation: Conversation) -> Conversation:
    """The conversation without the assistant's replies."""
    turns: list[Turn] = [t for t in conversation.turns if t.speaker.lower() not in ASSISTANT_ROLES]
    return replace(conversation, turns=turns)


@operation("import")
def import_conversations(
    rt: Runtime, conversations: list[Conversation], *, dry_run: bool = False
) -> list[ImportedConversation]:
    """Write each conversation as conversations/<name>.md (checked in full first: a bad
    turn or an existing file refuses the whole import, nothing written)."""
    store = rt.require()
    conversations = [c for c in map(people_only, conversations) if c.turns]
    if not conversations:
        raise ValidationError(
            "the file holds no turn of a person's, only an assistant's replies",
            hint="nothing was written",
        )
    taken: list[Entry] = list(store.entries(include_archived=True))
    planned: list[tuple[str, str, ImportedConversation]] = []
    names = set()
    for conversation in conversations:
        name = f"{CONVERSATIONS_DIR}/{conversation.name}.md"
        if (rt.root / name).exists() or name in names:
            raise ValidationError(
                f"{name} already exists: this conversation was imported before",
                hint="remove or rename that file to import it again; nothing was written",
            )
        names.add(name)
        for turn in conversation.turns:
            if turn.source_id:
                check_meta_value("turn id", turn.source_id)
        check_meta_value("conversation name", conversation.name)
        ids = fresh_ids(taken, id_prefix_for(name), len(conversation.turns))
        taken += [Entry(i, "", "turn", name, 0) for i in ids]
        text = render_conversation(conversation, name, ids)
        parse(text, name)  # what is written must read back (raises ParseError otherwise)
        times = [format_time(t.created) for t in conversation.turns if t.created]
        planned.append(
            (
                name,
                text,
                ImportedConversation(
                    name,
                    conversation.title,
                    len(conversation.turns),
                    min(times) if times else None,
                    max(times) if times else None,
                ),
            )
        )
    if dry_run:
        return [summary for _, _, summary in planned]
    rt.store.make_folder(CONVERSATIONS_DIR)  # a link only where allowed
    for name, text, _ in planned:

        def create(doc: Document, name: str = name, text: str = text) -> None:
            if doc.blocks:  # written meanwhile by someone else: never overwrite it
                raise ValidationError(f"{name} appeared while importing; nothing more was written")
            doc.blocks = parse(text, name).blocks

        store.update(name, create)
    return [summary for _, _, summary in planned]


def fresh_ids(existing: list[Entry], prefix: str, count: int) -> list[str]:
    """`count` new ids unused by `existing` and by each other."""
    ids: list[str] = []
    taken = {e.id for e in existing}
    while len(ids) < count:
        candidate = new_id((), prefix)  # random; checked against the set here, once
        if candidate not in taken:
            taken.add(candidate)
            ids.append(candidate)
    return ids


def _yaml_string(text: str) -> str:
    """A one-line YAML double-quoted string."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'

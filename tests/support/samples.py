"""Sample inputs several tests read: two short conversations (OpenAI message format) —
English with system, assistant and tool turns around the user's statements, Chinese with
a correction later on — and a CLAUDE.md to import."""

from __future__ import annotations

EN = [
    {"role": "system", "content": "You are helpful"},
    {
        "role": "user",
        "content": "Please remember that the staging database lives on db-stage-2. "
        "I prefer pytest over unittest for Python tests.",
    },
    {"role": "assistant", "content": "Noted. I prefer nothing."},
    {"role": "user", "content": "My favourite editor is Helix. Maybe I like tabs, not sure."},
    {"role": "tool", "content": "I prefer tool output"},
    {
        "role": "user",
        "content": [{"type": "text", "text": "Actually, the on-call rotation is one week long."}],
    },
]
ZH = [
    {"role": "user", "content": "记住：周五下午不发布。我喜欢用中文讨论架构设计，代码注释用英文。"},
    {"role": "assistant", "content": "好的"},
    {"role": "user", "content": "不对，应该是周四下午以后不发布。我可能喜欢深色主题。"},
]

CLAUDE_MD = """# Project notes

Some prose that is not a memory.

## Preferences
- Prefers pytest over unittest
- Uses ruff for linting <!-- a comment the author left -->

## Code style
- Four spaces, never tabs
  (the CI checks it)
- Run the tests with:
  ```
  make test
  ```

1. Numbered items count too
"""

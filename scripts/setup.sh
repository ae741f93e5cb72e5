#!/usr/bin/env bash
# Set up .venv with memcli and its dependencies (idempotent; fast when already done).
# torch goes first as the CPU build: an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=".venv/.memcli-setup"
want="$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip show torch >/dev/null 2>&1 || .venv/bin/python -m pip install -q torch==2.13.0
# compat: a path in a .pth file, no import-hook finder in every process (start-up time);
# setuptools calls that mode transitional in a 14-line warning that is not the user's business
PYTHONWARNINGS="ignore:Compat editable installs" \
  .venv/bin/python -m pip install -q -e '.[dev]' --config-settings editable_mode=compat
.venv/bin/python -m compileall -q memcli >/dev/null  # bytecode once, as an installed package has it
echo "$want" > "$stamp"

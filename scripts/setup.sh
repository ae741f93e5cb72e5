#!/usr/bin/env bash
# Set up .venv with memcli and its dependencies (idempotent: silent and fast when done).
# torch goes first, the CPU build from the PyTorch CPU index where it answers (else the
# default index, said so): an unpinned torch from PyPI would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
stamp=".venv/.memcli-setup"
want="$(cat pyproject.toml scripts/setup.sh scripts/torch_source.py | sha256sum | cut -d" " -f1)"
if [ -x .venv/bin/python ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
say() { echo "setup: $*"; }
# pip says nothing but errors (-qq): its warnings here are about this machine's pip
# settings (an extra index that lacks a package), not about memcli
pip() { .venv/bin/python -m pip -qq "$@"; }
if [ ! -x .venv/bin/python ]; then
  say "creating .venv ($("$PY" --version 2>&1))"
  "$PY" -m venv .venv
fi
pip install --upgrade pip
if ! .venv/bin/python -m pip show torch >/dev/null 2>&1; then
  # the CPU index when it answers (MEMCLI_TORCH_INDEX overrides it), else the default
  # index with one line saying so (scripts/torch_source.py)
  { read -r said; read -r index_args; } < <(.venv/bin/python scripts/torch_source.py choose)
  say "installing torch 2.13.0: $said"
  # shellcheck disable=SC2086 - index_args is empty or two words
  pip install torch==2.13.0 $index_args
fi
say "$(.venv/bin/python scripts/torch_source.py report)"
say "installing memcli (editable) and its dependencies into .venv (minutes the first time)"
# compat: a path in a .pth file, no import-hook finder in every process (start-up time);
# setuptools calls that mode transitional in a 14-line warning that is not the user's business
PYTHONWARNINGS="ignore:Compat editable installs" pip install -e '.[dev]' --config-settings editable_mode=compat
.venv/bin/python -m compileall -q memcli >/dev/null  # bytecode once, as an installed package has it
echo "$want" > "$stamp"
say "done: .venv/bin/memcli (on your PATH after \`source .venv/bin/activate\`)"

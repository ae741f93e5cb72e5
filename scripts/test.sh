#!/usr/bin/env bash
# Set up, then run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# bytecode for memcli and the tests, written once: the suite's hundreds of memcli
# processes then load it instead of compiling every module again (where the environment
# sets PYTHONDONTWRITEBYTECODE, nothing else would write it)
unset PYTHONDONTWRITEBYTECODE
.venv/bin/python -m compileall -q memcli tests bench > /dev/null
.venv/bin/python -m ruff check memcli tests bench
.venv/bin/python -m pytest "$@"

#!/usr/bin/env bash
# Set up, then run memcli on the sample workspace/ (a copy, so the sample stays clean).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
demo="$(mktemp -d)/workspace"
cp -r workspace "$demo"
memcli() { .venv/bin/memcli -w "$demo" "$@"; }
set -x
memcli stats
memcli list --type preference
memcli search "How should I write Python tests?" --limit 5
memcli search "数据库迁移" --limit 3
memcli inject -q "How to optimize my Next.js app?" --max-tokens 200
memcli log "Deploy of v2.3 failed: the migration locked the users table; next time run it on staging first"
memcli reflect --force --dry-run
memcli compress --dry-run

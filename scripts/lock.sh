#!/usr/bin/env bash
# Rewrite scripts/lock.txt from the installed .venv: every distribution's exact version, so a fresh install
# resolves what the figures in docs/decisions.md were measured with (decision 125). To move to newer
# releases: GUARD_NO_LOCK=1 bash scripts/install.sh in a fresh .venv, re-measure, then run this.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${GUARD_VENV:-$(pwd)/.venv}
{
  echo "# Written by scripts/lock.sh from a working install (Python $("$VENV/bin/python" -c 'import platform; print(platform.python_version())')); install.sh reads it as constraints."
  echo "# torch is pinned in constraints.txt (the CPU wheel)."
  "$VENV/bin/python" -m pip freeze --disable-pip-version-check --exclude-editable 2>/dev/null \
    | grep -viE '^(torch|pip|setuptools|wheel)==' | LC_ALL=C sort -f
} > scripts/lock.txt
echo "scripts/lock.txt: $(grep -vc '^#' scripts/lock.txt) distributions"

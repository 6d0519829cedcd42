#!/usr/bin/env bash
# Installs the Python module as a user would, offline, and runs its tests there (issue 22):
#   python3 -m venv --system-site-packages VENV      (Debian's numpy, torch, pytest, setuptools)
#   VENV/bin/pip install --no-build-isolation ./python
# then checks zepp.__version__ against the package metadata and `zepp --version`, and runs
# python/tests against the installed package (not the source tree). Usage:
#   bash scripts/pip-check.sh [VENV_DIR] [ZEPP_BINARY]
# VENV_DIR defaults to a fresh temporary folder (removed afterwards); ZEPP_BINARY defaults to
# build/zepp (the CLI tests use it). ZEPP_CMAKE_BUILD_DIR keeps the extension's CMake build between
# runs (python/setup.py); ccache (CMAKE_CXX_COMPILER_LAUNCHER=ccache) makes a fresh one cheap.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-}
binary=${2:-$repo/build/zepp}
if [ -z "$venv" ]; then
  venv=$(mktemp -d)/venv
  trap 'rm -rf "$(dirname "$venv")"' EXIT
fi
[ -e "$venv" ] && { echo "pip-check: $venv exists; give a new folder" >&2; exit 2; }
/usr/bin/python3 -m venv --system-site-packages "$venv"
start=$(date +%s)
"$venv/bin/pip" install --no-build-isolation --no-index --quiet "$repo/python"
echo "pip-check: pip install took $(( $(date +%s) - start )) s"
cd "$(mktemp -d)"   # away from the source tree: `import zepp` must find the installed package
"$venv/bin/python" - "$binary" <<'PY'
import importlib.metadata, pathlib, subprocess, sys
import zepp
where = pathlib.Path(zepp.__file__).resolve()
assert "site-packages" in where.parts, f"zepp imported from {where}, not the venv"
meta = importlib.metadata.version("zepp")
assert zepp.__version__ == meta, (zepp.__version__, meta)
cli = subprocess.run([sys.argv[1], "--version"], capture_output=True, text=True)
if cli.returncode == 0:
    assert zepp.__version__ in cli.stdout.split(), (zepp.__version__, cli.stdout)
    print(f"pip-check: zepp.__version__ {zepp.__version__} == metadata == `zepp --version`: {cli.stdout.strip()}")
else:
    print(f"pip-check: zepp.__version__ {zepp.__version__} == metadata; {sys.argv[1]} has no --version yet")
PY
ZEPP_BINARY=$binary ZEPP_SHARED_DIR=${ZEPP_SHARED_DIR:-$repo/../shared} \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/python/tests"

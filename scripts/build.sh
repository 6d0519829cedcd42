#!/usr/bin/env bash
# Configures and builds Zepp (Release) into build/: every target, or only the named ones
# (`bash scripts/build.sh zepp`). Ninja shows its progress on the terminal.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
if [ "$#" -gt 0 ]; then
  cmake --build build -j "$(nproc)" --target "$@"
else
  cmake --build build -j "$(nproc)"
fi

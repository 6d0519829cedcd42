#!/usr/bin/env bash
# Installs, builds, and runs the main job: `zepp simulate` on the built-in synthetic workload
# (Kimi-K2 shape, power-law expert popularity, 4 nodes x 4 A100).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
./build/zepp simulate "$@"

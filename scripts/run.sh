#!/usr/bin/env bash
# Installs, builds only the `zepp` program (not the tests and benchmarks; scripts/test.sh builds
# everything), and runs the main job: `zepp simulate` on the built-in synthetic workload
# (Kimi-K2 shape, power-law expert popularity, 4 nodes x 4 A100).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
echo "zepp: building the zepp program (a few minutes on a fresh machine)..." >&2
bash scripts/build.sh zepp
./build/zepp simulate "$@"

#!/bin/sh
# a2av vs zepp under real MPI execution (issue 4): the same trace, 8 ranks (2 nodes x 4 GPUs),
# both strategies in one `zepp run`, once unpaced and once with inter-node sends paced to
# NIC_GBPS (the inter-node link as the bottleneck, as on a cluster). Prints the wall-time and
# inter-node-byte ratios a2av / zepp; correctness is checked inside `zepp run` (exit 3 if not).
# Usage: bench/mpi_run.sh [BUILD_DIR] (env: TRACE, MODEL, HIDDEN, FFN, SIZE_MB, NIC_GBPS, REPEAT)
set -eu
BUILD=${1:-build}
SHARED=$(cd "$(dirname "$0")/../.." && pwd)/shared
TRACE=${TRACE:-$SHARED/data/traces/deepseek-v2-lite-puffin}
MODEL=${MODEL:-deepseek-v2-lite}
HIDDEN=${HIDDEN:-512}
FFN=${FFN:-352}
SIZE_MB=${SIZE_MB:-0.25}
NIC_GBPS=${NIC_GBPS:-0.02}
REPEAT=${REPEAT:-3}
export OPENBLAS_NUM_THREADS=1
[ -e "$TRACE" ] || { echo "trace $TRACE absent" >&2; exit 1; }
for pacing in "" "--nic-gbps $NIC_GBPS"; do
  # shellcheck disable=SC2086
  mpirun --allow-run-as-root --oversubscribe -np 8 "$BUILD/zepp" run --trace "$TRACE" --model "$MODEL" \
    --gpus-per-node 4 --hidden "$HIDDEN" --ffn "$FFN" --size-mb "$SIZE_MB" --strategy a2av,zepp \
    --repeat "$REPEAT" --format json $pacing |
    /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
s = {x["strategy"]: x for x in d["strategies"]}
a, z = s["a2av"], s["zepp"]
pace = "unpaced" if d["nic_gbps"] is None else "NIC paced to %g GB/s" % d["nic_gbps"]
print("%s, %d ranks = %d nodes x %d, %d tokens/GPU, hidden %d, ffn %d:" % (pace, d["ranks"], d["nodes"], d["gpus_per_node"], d["tokens_per_gpu"], d["hidden"], d["ffn"]))
for x in (a, z):
    print("  %-5s wall %8.3f ms  NIC %10.0f B  NVLink %10.0f B  max rel err %.1e" % (x["strategy"], x["wall_s"] * 1e3, x["nic_bytes"], x["nvlink_bytes"], x["max_rel_error"]))
nic = "n/a" if z["nic_bytes"] == 0 else "%.3f" % (a["nic_bytes"] / z["nic_bytes"])
print("  a2av / zepp: wall %.3fx, inter-node bytes %s" % (a["wall_s"] / z["wall_s"], nic))
'
done

#!/usr/bin/env bash
# Reliability checks beyond the test suite (README, "Checks"). Run after scripts/install-deps.sh.
#   bash scripts/check.sh sanitize         every C++ test under AddressSanitizer + UBSan (build-sanitize/)
#   bash scripts/check.sh sanitize-ci      only the reader, routing and fuzz-replay tests (what CI runs)
#   bash scripts/check.sh fuzz [SECONDS]   each libFuzzer harness for SECONDS (default 60), clang (build-fuzz/)
#   bash scripts/check.sh ci [SECONDS]     CI's short mode: sanitize-ci, then fuzz SECONDS (default 60) per harness
# Exit status non-zero on any test failure, sanitizer report or fuzzer crash. Fuzzing needs clang
# and is not part of CI (apt-get install clang); crashes land in build-fuzz/crashes/<harness>/:
# copy each into tests/fuzz/crashes/<harness>/ with its fix, and test_fuzz replays it from then on.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
jobs=$(nproc)
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# Open MPI and SimGrid keep allocations until exit; leaks are not what these checks look for.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

configure_sanitized() {
  cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" -DZEPP_SANITIZE=address,undefined -DZEPP_BUILD_BENCH=OFF \
    -DZEPP_BUILD_PYTHON=OFF -DPython3_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" >/dev/null
}

case "$mode" in
  sanitize)
    configure_sanitized
    cmake --build build-sanitize -j "$jobs"
    # The Python module is left out: loading ASan into /usr/bin/python3 needs LD_PRELOAD games.
    ctest --test-dir build-sanitize --output-on-failure -j "$jobs" --timeout 1200
    ;;
  sanitize-ci)
    start=$(date +%s)
    configure_sanitized
    cmake --build build-sanitize -j "$jobs" --target test_trace test_formats test_routing test_fuzz
    ctest --test-dir build-sanitize --output-on-failure -j "$jobs" --timeout 1200 -L '^(trace|formats|routing|fuzz)$'
    echo "sanitized reader and routing tests: $(( $(date +%s) - start )) s including the build"
    ;;
  fuzz)
    seconds=${2:-60}
    [[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "check.sh fuzz: SECONDS must be a positive integer, got '$seconds'" >&2; exit 2; }
    command -v clang++ >/dev/null || { echo "check.sh fuzz: needs clang (apt-get install clang)" >&2; exit 2; }
    cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DZEPP_FUZZ=ON -DZEPP_SANITIZE=address,undefined \
      -DZEPP_BUILD_BENCH=OFF -DZEPP_BUILD_PYTHON=OFF "${launcher[@]}" >/dev/null
    harnesses=()
    for h in tests/fuzz/harnesses/*.cpp; do harnesses+=("$(basename "$h" .cpp)"); done
    cmake --build build-fuzz -j "$jobs" --target "${harnesses[@]/#/fuzz_}"
    shared=../shared/data
    failed=0
    for h in "${harnesses[@]}"; do
      corpus=build-fuzz/corpus/$h crashes=build-fuzz/crashes/$h
      mkdir -p "$corpus" "$crashes"
      cp tests/fuzz/seeds/"$h"/* "$corpus"/ 2>/dev/null || true
      # Seeds from the real files: the first 4 KiB behind the byte that picks the reader.
      case "$h" in
        trace)
          for d in "$shared"/traces/*/; do
            [[ -d "$d" ]] || continue
            f=$(find "$d" -type f ! -name '*.md' | sort | head -1)
            case "$f" in
              *.jsonl) b='\001' ;; *.json) b='\000' ;;
              *) if head -c 6 "$f" | grep -q '^Layer,'; then b='\003'; else b='\002'; fi ;;
            esac
            { printf "$b"; head -c 4095 "$f"; } > "$corpus/real-$(basename "$d")"
          done ;;
        eplb_json)
          [[ -f "$shared/eplb/readme-example.json" ]] && { printf '\001'; cat "$shared/eplb/readme-example.json"; } > "$corpus/real-readme-example" ;;
      esac
      echo "fuzz_$h: $seconds s from $(ls "$corpus" | wc -l) seeds"
      root=$PWD
      if ! (cd "$crashes" && "$root"/build-fuzz/tests/fuzz_"$h" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
              -rss_limit_mb=4096 -print_final_stats=1 "$root/$corpus" > "$root"/build-fuzz/fuzz-"$h".log 2>&1); then
        echo "fuzz_$h: CRASH, see build-fuzz/fuzz-$h.log and $crashes/"; failed=1
      fi
      grep -E '^stat::number_of_executed_units|^#[0-9]+ +DONE' build-fuzz/fuzz-"$h".log | tail -2 || true
    done
    exit $failed
    ;;
  ci)
    # Each part timed on its own: README "Checks" keeps the figures seen on CI's 2 cores.
    seconds=${2:-60}
    start=$(date +%s)
    bash "$0" sanitize-ci
    mid=$(date +%s)
    bash "$0" fuzz "$seconds"
    end=$(date +%s)
    echo "check.sh ci: sanitize-ci $(( mid - start )) s, fuzz $(( end - mid )) s, total $(( end - start )) s" \
         "(load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
    ;;
  *)
    echo "usage: scripts/check.sh sanitize | sanitize-ci | fuzz [SECONDS] | ci [SECONDS]" >&2
    exit 2
    ;;
esac

#!/usr/bin/env bash
# Builds Depot's fuzz targets with libFuzzer and AddressSanitizer and runs each for SECONDS (default 30) on a
# scratch copy of its seed corpus (Corpus/<target>, committed). Fails on any crash, leak report or timeout; the
# input that failed is kept under Tests/Fuzz/.build/findings/ (replay: `<binary> <file>`).
# Usage: Tests/Fuzz/run.sh [seconds] [target...]
set -euo pipefail
cd "$(dirname "$0")"
EACH="${1:-30}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(FuzzRequestHead FuzzChunkedDecoder FuzzRangesAndConditions FuzzSignedData FuzzReceiptJSON)

# lld: gold fails on the sanitizer runtime's objects.
FLAGS=(-c release -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld)
swift build "${FLAGS[@]}" 2>&1 | grep -v "Cannot export local symbol" | tail -3
BIN="$(swift build "${FLAGS[@]}" --show-bin-path)"

max_len() {
  case "$1" in
    FuzzSignedData | FuzzReceiptJSON) echo 32768 ;;
    *) echo 4096 ;;
  esac
}

# A finding prints its stack through the sanitizer (Swift's own backtracer would wait on a terminal).
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-handle_sigill=1:handle_sigtrap=1:detect_leaks=1}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
FINDINGS="$PWD/.build/findings"
mkdir -p "$FINDINGS"
failed=()
for target in "${TARGETS[@]}"; do
  mkdir -p "$WORK/$target"
  log="$WORK/$target.log"
  # -timeout: one input running over 10 s is a finding; -rss_limit_mb: so is a blow-up of memory.
  if "$BIN/$target" -max_total_time="$EACH" -timeout=10 -rss_limit_mb=2048 -max_len="$(max_len "$target")" \
      -print_final_stats=1 -artifact_prefix="$FINDINGS/$target-" "$WORK/$target" "Corpus/$target" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "$target: ${runs:-?} inputs in ${EACH}s, no finding"
  else
    failed+=("$target")
    echo "$target: FAILED" >&2
    grep -E "ERROR|WARNING|SUMMARY|invariant|Fatal|==[0-9]+==" "$log" | head -20 >&2 || true
    ls "$FINDINGS"/"$target"-* 2>/dev/null | sed 's/^/  finding: /' >&2 || true
    tail -40 "$log" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzzing found problems in: ${failed[*]}" >&2
  exit 1
fi

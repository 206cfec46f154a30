#!/usr/bin/env bash
# Client download benchmark (issue 6): `depot fetch` (the reference client: unlock with a receipt, manifest,
# 1 MiB chunks with Range + If-Range, SHA-256 per chunk, journal) of a 256 MiB pack against `curl` of the
# same file with a token from the same receipt; same run, alternating, a fresh output directory each time.
# The simulated App Store answers at once (depot-bench appstore --delay-ms 0). Target: fetch >= 0.9x curl (issue 12).
# Max RSS of fetch for the 256 MiB pack vs a 32 MiB pack (/usr/bin/time -v): flat in the pack size.
# Usage: Tests/Benchmarks/fetch.sh [rounds] [file-MiB] [small-file-MiB]
# FETCH_CLIENT_B=/path/to/another/depot adds a third timing to every round: `depot fetch` by that binary against the
# same server (an A/B of the client in one run; the three take turns leading the round).
source "$(dirname "$0")/lib.sh"
ROUNDS="${1:-3}"
FILE_MIB="${2:-256}"
SMALL_MIB="${3:-32}"
need_tools curl /usr/bin/time
build_release
build_bench

BIG="$OUT/pack-${FILE_MIB}m.bin"
SMALL="$OUT/pack-${SMALL_MIB}m.bin"
random_file "$BIG" "$FILE_MIB"
random_file "$SMALL" "$SMALL_MIB"
bench_tree fetch-tree
publish_file "$TREE" fetchbig "$BIG"
publish_file "$TREE" fetchsmall "$SMALL"
STORE="$OUT/appstore-fetch"
start_appstore "$STORE" 0 10 com.example.depot.fetchbig,com.example.depot.fetchsmall
rm -rf "$OUT/fetch-var"
start_depot --catalog "$TREE/catalog" --content "$TREE/content" --data "$OUT/fetch-var" --token-secret "$TOKEN_SECRET" \
  --apple-verify-url "$APPSTORE_URL" --apple-sandbox-verify-url "$APPSTORE_SANDBOX_URL"
RECEIPT="$STORE/receipt.txt"
head -n 1 "$STORE/receipts.txt" >"$RECEIPT"
DOWNLOADS="$OUT/fetch-downloads"
# Each download is compared with its source (after the timing).
declare -A SOURCE=([fetchbig]="$BIG" [fetchsmall]="$SMALL")
TEMP_PATHS+=("$DOWNLOADS")

# The token the receipt unlocks and the file's URL, as a client would find them.
read -r TOKEN FILE_PATH <<<"$(curl -s -X POST -H 'Content-Type: application/json' -d "{\"receipt\": \"$(cat "$RECEIPT")\"}" \
  "$DEPOT_URL/v1/receipts" | python3 -c '
import json, sys
e = next(e for e in json.load(sys.stdin)["entitlements"] if e["pack"] == "fetchbig")
print(e["token"], e["manifest"])')"
MANIFEST=$(curl -sL -H "Authorization: Bearer $TOKEN" "$DEPOT_URL$FILE_PATH")
FILE_URL="$DEPOT_URL$(echo "$MANIFEST" | python3 -c 'import json, sys; print(json.load(sys.stdin)["files"][0]["url"])')"

# fetch_timed PACK [CLIENT]: sets TIMED to "seconds max_rss_kb cpu_seconds" of one `depot fetch` (by CLIENT, this
# tree's depot by default) into a fresh directory.
fetch_timed() {
  rm -rf "$DOWNLOADS"; mkdir -p "$DOWNLOADS"; sync
  local start=$EPOCHREALTIME
  /usr/bin/time -v -o "$OUT/fetch-time.txt" "${2:-$DEPOT}" fetch --server "$DEPOT_URL" --receipt "$RECEIPT" --pack "$1" \
    --out "$DOWNLOADS/$1" >"$OUT/fetch.stdout" 2>&1 || { echo "depot fetch failed:" >&2; cat "$OUT/fetch.stdout" >&2; exit 1; }
  local end=$EPOCHREALTIME
  TIMED=$(python3 - "$start" "$end" "$OUT/fetch-time.txt" <<'PY'
import re, sys
text = open(sys.argv[3]).read()
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)
cpu = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1)) + float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f} {rss} {cpu:.2f}")
PY
)
  cmp -s "${SOURCE[$1]}" "$DOWNLOADS/$1/$(basename "${SOURCE[$1]}")" || { echo "depot fetch wrote different bytes" >&2; exit 1; }
}

# curl_timed: sets TIMED to the seconds of one curl of the file (to disk, like fetch) into a fresh directory.
curl_timed() {
  rm -rf "$DOWNLOADS"; mkdir -p "$DOWNLOADS"; sync
  local start=$EPOCHREALTIME
  curl -sf -H "Authorization: Bearer $TOKEN" -o "$DOWNLOADS/file.bin" "$FILE_URL"
  TIMED=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$start" "$EPOCHREALTIME")
  cmp -s "$BIG" "$DOWNLOADS/file.bin" || { echo "curl wrote different bytes" >&2; exit 1; }
}

fetch_timed fetchsmall; read -r _ SMALL_RSS _ <<<"$TIMED"

FETCH=(); CURL=(); RSS=(); CPU=(); FETCH_B=()
: >"$OUT/fetch-rounds.txt"
time_b() { [ -n "${FETCH_CLIENT_B:-}" ] || return 0; fetch_timed fetchbig "$FETCH_CLIENT_B"; FETCH_B+=("${TIMED%% *}"); }
for round in $(seq 1 "$ROUNDS"); do
  case $((round % 3)) in
    1) fetch_timed fetchbig; read -r seconds rss cpu <<<"$TIMED"; curl_timed; CURL+=("$TIMED"); time_b ;;
    2) curl_timed; CURL+=("$TIMED"); time_b; fetch_timed fetchbig; read -r seconds rss cpu <<<"$TIMED" ;;
    0) time_b; fetch_timed fetchbig; read -r seconds rss cpu <<<"$TIMED"; curl_timed; CURL+=("$TIMED") ;;
  esac
  FETCH+=("$seconds"); RSS+=("$rss"); CPU+=("$cpu")
  echo "round $round: fetch $seconds s (max RSS $rss KB, CPU $cpu s), curl ${CURL[-1]} s${FETCH_CLIENT_B:+, client B ${FETCH_B[-1]:-} s}" \
    >>"$OUT/fetch-rounds.txt"
done

fetch_s=$(median "${FETCH[@]}"); curl_s=$(median "${CURL[@]}")
fetch_rate=$(python3 -c "print(f'{$FILE_MIB / $fetch_s:.0f}')"); curl_rate=$(python3 -c "print(f'{$FILE_MIB / $curl_s:.0f}')")
printf "\n%-30s | %9s | %8s | %10s | %8s\n" "download (${FILE_MIB} MiB pack)" "seconds" "MiB/s" "max RSS MB" "CPU s"
printf "%-30s | %9.3f | %8s | %10s | %8s\n" "depot fetch" "$fetch_s" "$fetch_rate" "$(python3 -c "print(round($(median "${RSS[@]}") / 1024, 1))")" "$(median "${CPU[@]}")"
printf "%-30s | %9.3f | %8s | %10s | %8s\n" "curl (same token)" "$curl_s" "$curl_rate" "" ""
echo
if [ -n "${FETCH_CLIENT_B:-}" ]; then
  b_s=$(median "${FETCH_B[@]}")
  printf "%-30s | %9.3f | %8s | %10s | %8s\n" "depot fetch, client B" "$b_s" "$(python3 -c "print(f'{$FILE_MIB / $b_s:.0f}')")" "" ""
  echo "client B: $FETCH_CLIENT_B; this tree's fetch is $(python3 -c "print(f'{$b_s / $fetch_s:.2f}')")x as fast as client B's"
fi
echo "fetch / curl: $(ratio "$fetch_rate" "$curl_rate")x (target >= 0.9x, issue 12); fetch includes the unlock (receipt, Apple +0 ms) and the manifest"
echo "fetch max RSS: $(python3 -c "print(round($(median "${RSS[@]}") / 1024, 1))") MB for ${FILE_MIB} MiB, $(python3 -c "print(round($SMALL_RSS / 1024, 1))") MB for ${SMALL_MIB} MiB — flat in the pack size"
echo "medians of $ROUNDS alternating rounds, each into a fresh directory"

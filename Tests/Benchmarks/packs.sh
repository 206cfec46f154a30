#!/usr/bin/env bash
# Pack download benchmark (issue 3): Depot and nginx serving the same file side by side, alternating rounds.
# Rows: random 1 MiB Range requests (206; aligned or arbitrary offsets, a coin toss per request) at 8 and 64
# connections (wrk + range.lua), full downloads of the whole file by 1 and by 4 parallel curls (MiB/s).
# Then 1,000 slow readers of the full file on Depot (connections.py slow): errors and RSS growth.
# Targets: every ratio >= 0.95; Depot's peak RSS <= 50 MB whatever the file size; <= ~50 KB per slow reader.
# Mode `recording` (issue 14): the same range and full rows, Depot with `--delivery-record on` against Depot with
# `--delivery-record off` (alternating rounds, one run), each with a token from /v1/receipts for a purchase
# made in a simulated App Store (only purchase-bound tokens are recorded); afterwards the `on` server's ledger
# must show the purchase's delivery and the `off` server's none. Target: every on/off ratio >= 0.97.
# Environment for that mode: DUEL=1 loads both servers at once in every row (the machine's slow spells hit both
# alike); FLUSH_WAIT=S pauses S seconds after each row (default 1.5) so the once-a-second write falls in its window.
# Usage: Tests/Benchmarks/packs.sh [seconds-per-round] [rounds] [slow-reader-seconds] [file-MiB] [nginx|recording]
source "$(dirname "$0")/lib.sh"
SECONDS_PER_ROUND="${1:-5}"
ROUNDS="${2:-3}"
SLOW_SECONDS="${3:-12}"
FILE_MIB="${4:-256}"
MODE="${5:-nginx}"
SLOW_READERS="${SLOW_READERS:-1000}"
case "$MODE" in nginx | recording) ;; *) echo "the mode is nginx or recording, not $MODE" >&2; exit 64 ;; esac
if [ "$MODE" = nginx ]; then need_tools wrk nginx curl; else need_tools wrk curl; fi
build_release
raise_fd_limit

# The file, published into a temporary copy of catalog/ and content/ (so Depot has its manifest);
# nginx's root is the same version directory.
FILE="$OUT/pack-${FILE_MIB}m.bin"
random_file "$FILE" "$FILE_MIB"
SIZE=$(stat -c %s "$FILE")
NAME=$(basename "$FILE")
bench_tree packs-tree
publish_file "$TREE" bench "$FILE"
VERSION=$(cat "$TREE/content/bench/current")
if [ "$MODE" = recording ]; then source "$BENCH/packs-recording.sh"; exit 0; fi
rm -rf "$OUT/packs-var"
start_depot --catalog "$TREE/catalog" --content "$TREE/content" --data "$OUT/packs-var" --token-secret "$TOKEN_SECRET"
TOKEN=$("$DEPOT" token --pack bench --ttl 86400 --token-secret "$TOKEN_SECRET" --content "$TREE/content")
start_nginx "$TREE/content/bench/$VERSION"
DEPOT_FILE="$DEPOT_URL/v1/packs/bench/$VERSION/files/$NAME"
NGINX_FILE="$NGINX_URL/$NAME"
AUTH="Authorization: Bearer $TOKEN"

# Both serve the same bytes for the same range.
range_sum() { curl -sf -r 1000-1049575 "$@" | sha256sum | cut -c1-64; }
[ "$(range_sum -H "$AUTH" "$DEPOT_FILE")" = "$(range_sum "$NGINX_FILE")" ] || { echo "depot and nginx disagree on a range" >&2; exit 1; }
[ "$(curl -s -o /dev/null -w '%{http_code}' -r 0-1048575 -H "$AUTH" "$DEPOT_FILE")" = 206 ] || { echo "depot: no 206" >&2; exit 1; }

declare -A RESULTS
for round in $(seq 1 "$ROUNDS"); do
  # Alternate which server goes first, so neither always runs on a warmer machine.
  servers=(depot nginx); [ $((round % 2)) = 0 ] && servers=(nginx depot)
  for connections in 8 64; do
    for server in "${servers[@]}"; do
      if [ "$server" = depot ]; then url=$DEPOT_FILE; args=(-H "$AUTH"); else url=$NGINX_FILE; args=(); fi
      RESULTS["range|$connections|$server"]+="$(WRK_SCRIPT_ARGS="$SIZE mixed" run_wrk "$url" "$connections" "$SECONDS_PER_ROUND" -s "$BENCH/range.lua" "${args[@]}");"
    done
  done
  for clients in 1 4; do
    for server in "${servers[@]}"; do
      if [ "$server" = depot ]; then url=$DEPOT_FILE; args=(-H "$AUTH"); else url=$NGINX_FILE; args=(); fi
      RESULTS["full|$clients|$server"]+="$(download_rate "$url" "$clients" "${args[@]}");"
    done
  done
done
PEAK_BEFORE_SLOW=$(peak_rss_mb "$DEPOT_PID")

# 1,000 slow readers of the full file.
python3 "$BENCH/connections.py" slow "$DEPOT_FILE" --count "$SLOW_READERS" --pid "$DEPOT_PID" --seconds "$SLOW_SECONDS" \
  --header "$AUTH" >"$OUT/slow.json"
SLOW=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
kinds = ",".join(f"{k}:{v}" for k, v in r["error_kinds"].items()) or "-"
print(r["connections"], r["errors"], kinds, r["rss_before_kb"], r["rss_open_kb"], r["rss_max_kb"], r["rss_after_close_kb"],
      r["growth_per_connection_kb"], round(r["bytes_read"] / 1048576, 1))' "$OUT/slow.json")
read -r S_CONNS S_ERRORS S_KINDS S_BEFORE S_OPEN S_MAX S_AFTER S_GROWTH S_READ <<<"$SLOW"

printf "\n%-22s %5s | %10s %10s %6s | %10s %10s | %8s %8s %6s | %6s\n" "row" "conns" "depot" "nginx" "ratio" "depot MiB/s" "nginx MiB/s" "p99 d" "p99 n" "ratio" "errors"
for connections in 8 64; do
  d=${RESULTS["range|$connections|depot"]}; n=${RESULTS["range|$connections|nginx"]}
  d_rps=$(column_median "$d" 1); n_rps=$(column_median "$n" 1)
  d_p99=$(column_median "$d" 3); n_p99=$(column_median "$n" 3)
  printf "%-22s %5s | %8.0f/s %8.0f/s %5sx | %11.0f %11.0f | %8s %8s %5sx | %s/%s\n" "range 1 MiB (206)" "$connections" \
    "$d_rps" "$n_rps" "$(ratio "$d_rps" "$n_rps")" "$d_rps" "$n_rps" "$d_p99" "$n_p99" "$(ratio "$d_p99" "$n_p99")" \
    "$(column_sum "$d" 4)" "$(column_sum "$n" 4)"
done
for clients in 1 4; do
  d=${RESULTS["full|$clients|depot"]}; n=${RESULTS["full|$clients|nginx"]}
  d_mib=$(column_median "$d" 1); n_mib=$(column_median "$n" 1)
  printf "%-22s %5s | %10s %10s %5sx | %11.0f %11.0f | %8s %8s %6s | %s/%s\n" "full ${FILE_MIB} MiB (200)" "$clients" \
    "" "" "$(ratio "$d_mib" "$n_mib")" "$d_mib" "$n_mib" "" "" "" "$(column_sum "$d" 2)" "$(column_sum "$n" 2)"
done
echo
echo "medians of $ROUNDS alternating rounds of ${SECONDS_PER_ROUND}s; latencies in ms; ratios are depot/nginx (target >= 0.95x on r/s and MiB/s)"
echo "errors: non-2xx responses and socket errors (range), failed or short downloads (full), depot/nginx, summed over rounds"
echo "depot peak RSS: $PEAK_BEFORE_SLOW MB before the slow readers, $(peak_rss_mb "$DEPOT_PID") MB overall (target <= 50 MB)"
echo
echo "slow readers: $S_CONNS of $SLOW_READERS connections reading ${FILE_MIB} MiB slowly for ${SLOW_SECONDS}s ($S_READ MiB read in all)"
echo "  errors: $S_ERRORS ($S_KINDS)"
echo "  depot RSS: ${S_BEFORE} KB before, ${S_OPEN} KB all open, ${S_MAX} KB max, ${S_AFTER} KB after closing"
echo "  growth per connection: ${S_GROWTH} KB (target <= ~50 KB)"

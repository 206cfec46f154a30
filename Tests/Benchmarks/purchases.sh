#!/usr/bin/env bash
# Purchase validation benchmark (issue 4). A simulated App Store (depot-bench appstore) answers verifyReceipt
# after 100 ms; 200 concurrent clients post distinct receipts (wrk + receipts.lua). In the same rounds, small
# wrk runs (4 connections) of /products_v1.json conditional 304s and 1 MiB pack ranges, first unloaded, then
# while the receipt load runs: their p99 under load vs unloaded (target within 2x).
# Also: the CPU cost of one JWS verification (depot-bench jws, target <= 1 ms) and the server's CPU per
# /v1/receipts round trip with one StoreKit 2 transaction (cached chain), from /proc/PID/stat.
# Usage: Tests/Benchmarks/purchases.sh [seconds-per-round] [rounds] [apple-delay-ms]
source "$(dirname "$0")/lib.sh"
SECONDS_PER_ROUND="${1:-5}"
ROUNDS="${2:-3}"
DELAY_MS="${3:-100}"
RECEIPT_CLIENTS="${RECEIPT_CLIENTS:-200}"
RECEIPTS="${RECEIPTS:-60000}"
SIDE_CONNECTIONS=4
need_tools wrk curl
build_release
build_bench
raise_fd_limit

STORE="$OUT/appstore-purchases"
start_appstore "$STORE" "$DELAY_MS" "$RECEIPTS" com.example.depot.level2
rm -rf "$OUT/purchases-var"
start_depot --catalog "$ROOT/catalog" --content "$ROOT/content" --data "$OUT/purchases-var" --token-secret "$TOKEN_SECRET" \
  --apple-verify-url "$APPSTORE_URL" --apple-sandbox-verify-url "$APPSTORE_SANDBOX_URL" --apple-root-certs "$STORE/root.pem"

# One of each by hand first: both kinds of purchase must unlock level2.
post() { curl -s -X POST -H 'Content-Type: application/json' -d "$1" "$DEPOT_URL/v1/receipts"; }
post "{\"receipt\": \"$(tail -n 1 "$STORE/receipts.txt")\"}" | grep -q '"token"' || { echo "a receipt did not unlock:" >&2; post "{\"receipt\": \"$(tail -n 1 "$STORE/receipts.txt")\"}" >&2; exit 1; }
post "{\"transactions\": [\"$(head -n 1 "$STORE/transactions.txt")\"]}" | grep -q '"token"' || { echo "a transaction did not unlock" >&2; exit 1; }

ETAG=$(curl -sI "$DEPOT_URL/products_v1.json" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag" {print $2}')
TOKEN=$("$DEPOT" token --pack level2 --ttl 86400 --token-secret "$TOKEN_SECRET" --content "$ROOT/content")
PACK_FILE="$DEPOT_URL/v1/packs/level2/1/files/stages.bin"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" -r 0-1048575 "$PACK_FILE")" = 206 ] || { echo "no 206 from the pack" >&2; exit 1; }

# side_rows PHASE: the 304 row and the range row, one after the other.
side_rows() {
  RESULTS["304|$1"]+="$(WRK_TXT="$OUT/wrk-304.txt" run_wrk "$DEPOT_URL/products_v1.json" "$SIDE_CONNECTIONS" "$SECONDS_PER_ROUND" -H "If-None-Match: $ETAG");"
  RESULTS["range|$1"]+="$(WRK_TXT="$OUT/wrk-range.txt" run_wrk "$PACK_FILE" "$SIDE_CONNECTIONS" "$SECONDS_PER_ROUND" \
    -H "Authorization: Bearer $TOKEN" -H 'Range: bytes=0-1048575');"
}

declare -A RESULTS
USED=0   # receipts the earlier rounds posted (per wrk thread): the next round starts after them
for round in $(seq 1 "$ROUNDS"); do
  side_rows unloaded
  # The receipt load covers both side rows with a second to spare at each end.
  WRK_TXT="$OUT/wrk-receipts.txt" WRK_SCRIPT_ARGS="$STORE/receipts.txt receipt 2 $USED" \
    run_wrk "$DEPOT_URL/v1/receipts" "$RECEIPT_CLIENTS" $((2 * SECONDS_PER_ROUND + 2)) -s "$BENCH/receipts.lua" >"$OUT/receipts.summary" &
  load=$!
  sleep 1
  side_rows loaded
  wait "$load"
  RESULTS["receipts"]+="$(cat "$OUT/receipts.summary");"
  USED=$((USED + $(wrk_requests "$OUT/wrk-receipts.txt") / 2 + 200))
  [ $((USED * 2)) -lt "$RECEIPTS" ] || echo "warning: the receipts ran out; later ones may be answered from the cache (raise RECEIPTS)" >&2
done

# Server CPU per /v1/receipts round trip with one StoreKit 2 transaction (the chain is cached after the first).
CLK_TCK=$(getconf CLK_TCK)
before=$(cpu_ticks "$DEPOT_PID")
JWS_ROW=$(WRK_TXT="$OUT/wrk-jws.txt" WRK_SCRIPT_ARGS="$STORE/transactions.txt transactions 2" \
  run_wrk "$DEPOT_URL/v1/receipts" 8 "$SECONDS_PER_ROUND" -s "$BENCH/receipts.lua")
after=$(cpu_ticks "$DEPOT_PID")
JWS_REQUESTS=$(wrk_requests "$OUT/wrk-jws.txt")
JWS_CPU_MS=$(python3 -c "print(f'{($after - $before) / $CLK_TCK / max($JWS_REQUESTS, 1) * 1000:.3f}')")
JWS_LINE=$("$DEPOT_BENCH" jws --iterations 2000)

printf "\n%-26s %5s | %12s %12s | %10s %10s %6s | %6s\n" "row" "conns" "r/s unloaded" "r/s loaded" "p99 unl." "p99 load" "ratio" "errors"
for row in "304|products_v1.json 304" "range|pack 1 MiB range 206"; do
  IFS='|' read -r key label <<<"$row"
  u=${RESULTS["$key|unloaded"]}; l=${RESULTS["$key|loaded"]}
  u_p99=$(column_median "$u" 3); l_p99=$(column_median "$l" 3)
  printf "%-26s %5s | %12.0f %12.0f | %10s %10s %5sx | %s/%s\n" "$label" "$SIDE_CONNECTIONS" "$(column_median "$u" 1)" "$(column_median "$l" 1)" \
    "$u_p99" "$l_p99" "$(ratio "$l_p99" "$u_p99")" "$(column_sum "$u" 4)" "$(column_sum "$l" 4)"
done
r=${RESULTS["receipts"]}
echo
printf "%-26s %5s | %12s | %10s %10s | %6s\n" "row" "conns" "receipts/s" "p50" "p99" "errors"
printf "%-26s %5s | %12.0f | %10s %10s | %6s\n" "receipts (Apple +${DELAY_MS} ms)" "$RECEIPT_CLIENTS" "$(column_median "$r" 1)" \
  "$(column_median "$r" 2)" "$(column_median "$r" 3)" "$(column_sum "$r" 4)"
read -r j_rps j_p50 j_p99 j_errors <<<"$JWS_ROW"
printf "%-26s %5s | %12.0f | %10s %10s | %6s\n" "transactions (1 JWS)" 8 "$j_rps" "$j_p50" "$j_p99" "$j_errors"
echo
echo "medians of $ROUNDS rounds of ${SECONDS_PER_ROUND}s per side row; latencies in ms; ratio = p99 under the receipt load / unloaded (target <= 2x)"
echo "errors: non-2xx responses and socket errors, summed over rounds (unloaded/loaded)"
echo "$JWS_LINE (target <= 1 ms)"
echo "depot CPU per /v1/receipts round trip with one JWS: $JWS_CPU_MS ms ($((after - before)) ticks at $CLK_TCK/s over $JWS_REQUESTS requests)"
echo "depot peak RSS: $(peak_rss_mb "$DEPOT_PID") MB"

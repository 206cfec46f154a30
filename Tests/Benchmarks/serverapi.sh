#!/usr/bin/env bash
# App Store Server API benchmark (issue 13). One simulated App Store (depot-bench appstore) answers both
# verifyReceipt and the App Store Server API after 100 ms. Two Depot servers: one validates receipts through
# verifyReceipt, the other through the Server API (app receipts minted by the store, read locally for a
# transaction ID, then Get Transaction History, every signed transaction verified). Alternating rounds, the
# same load on each: 200 clients posting distinct receipts (wrk + receipts.lua). Per path: receipts/s,
# p50/p99, Depot's CPU per receipt (/proc/PID/stat over the round). Target: the Server API path at >= 0.9x
# the verifyReceipt path's rate. Also the CPU of signing one API token (depot-bench jwt; target <= 0.2 ms, or
# reuse) and how many tokens the Server API server signed during the whole run.
# Usage: Tests/Benchmarks/serverapi.sh [seconds-per-round] [rounds] [apple-delay-ms]
source "$(dirname "$0")/lib.sh"
SECONDS_PER_ROUND="${1:-5}"
ROUNDS="${2:-3}"
DELAY_MS="${3:-100}"
RECEIPT_CLIENTS="${RECEIPT_CLIENTS:-200}"
RECEIPTS="${RECEIPTS:-12000}"
need_tools wrk curl
build_release
build_bench
raise_fd_limit

STORE="$OUT/appstore-serverapi"
echo "starting the simulated App Store ($RECEIPTS receipts of each kind)" >&2
MINT_START=$(date +%s)
start_appstore "$STORE" "$DELAY_MS" "$RECEIPTS" com.example.depot.level2 "$RECEIPTS"
echo "the simulated App Store was ready after $(( $(date +%s) - MINT_START )) s" >&2
read -r KEY_ID ISSUER <"$STORE/api-key.txt"
COMMON=(--catalog "$ROOT/catalog" --content "$ROOT/content" --token-secret "$TOKEN_SECRET")
rm -rf "$OUT/serverapi-var-verifyreceipt" "$OUT/serverapi-var-api"
DEPOT_NAME=depot-verifyreceipt start_depot "${COMMON[@]}" --data "$OUT/serverapi-var-verifyreceipt" \
  --apple-verify-url "$APPSTORE_URL" --apple-sandbox-verify-url "$APPSTORE_SANDBOX_URL" --apple-root-certs "$STORE/root.pem"
LEGACY_URL="$DEPOT_URL"; LEGACY_PID="$DEPOT_PID"
DEPOT_NAME=depot-serverapi start_depot "${COMMON[@]}" --data "$OUT/serverapi-var-api" --receipt-validation server-api \
  --apple-api-key "$STORE/api-key.p8" --apple-api-key-id "$KEY_ID" --apple-api-issuer "$ISSUER" \
  --apple-api-url "$APPSTORE_API_URL" --apple-api-sandbox-url "$APPSTORE_API_SANDBOX_URL" --apple-root-certs "$STORE/api-root.pem" \
  --notification-sync 0
API_URL="$DEPOT_URL"; API_PID="$DEPOT_PID"

# One of each by hand first (the last line of each file, which the rounds reach last): both must unlock level2.
post() { curl -s -X POST -H 'Content-Type: application/json' -d "$2" "$1/v1/receipts"; }
for pair in "$LEGACY_URL|$STORE/receipts.txt" "$API_URL|$STORE/api-receipts.txt"; do
  IFS='|' read -r url file <<<"$pair"
  post "$url" "{\"receipt\": \"$(tail -n 1 "$file")\"}" | grep -q '"pack": "level2"' \
    || { echo "a receipt did not unlock level2 at $url:" >&2; post "$url" "{\"receipt\": \"$(tail -n 1 "$file")\"}" >&2; exit 1; }
done

CLK_TCK=$(getconf CLK_TCK)
declare -A RESULTS
USED=0   # receipts the earlier rounds posted (per wrk thread): each round starts after them, in both files
for round in $(seq 1 "$ROUNDS"); do
  used_now=0
  for path in verifyreceipt api; do
    if [ "$path" = api ]; then url="$API_URL"; pid="$API_PID"; file="$STORE/api-receipts.txt"
    else url="$LEGACY_URL"; pid="$LEGACY_PID"; file="$STORE/receipts.txt"; fi
    before=$(cpu_ticks "$pid")
    row=$(WRK_TXT="$OUT/wrk-$path.txt" WRK_SCRIPT_ARGS="$file receipt 2 $USED" \
      run_wrk "$url/v1/receipts" "$RECEIPT_CLIENTS" "$SECONDS_PER_ROUND" -s "$BENCH/receipts.lua")
    after=$(cpu_ticks "$pid")
    requests=$(wrk_requests "$OUT/wrk-$path.txt")
    cpu=$(python3 -c "print(f'{($after - $before) / $CLK_TCK / max($requests, 1) * 1000:.3f}')")
    RESULTS["$path"]+="$row $cpu;"
    [ "$((requests / 2 + 200))" -gt "$used_now" ] && used_now=$((requests / 2 + 200))
  done
  USED=$((USED + used_now))
  [ $((USED * 2)) -lt "$RECEIPTS" ] || echo "warning: the receipts ran out; later ones may be answered from the cache (raise RECEIPTS)" >&2
done

JWT_LINE=$("$DEPOT_BENCH" jwt --iterations 2000)
METRICS=$(curl -s "$API_URL/metrics")
SIGNED=$(echo "$METRICS" | awk '/^depot_apple_api_tokens_signed_total/ { print $2 }')
HISTORY_CALLS=$(echo "$METRICS" | awk -F' ' '/^depot_apple_api_requests_total\{endpoint="transaction_history",outcome="http_200"\}/ { print $2 }')

printf "\n%-34s %5s | %10s | %8s %8s | %6s | %12s\n" "path (Apple +${DELAY_MS} ms)" "conns" "receipts/s" "p50" "p99" "errors" "CPU/receipt"
for row in "verifyreceipt|verifyReceipt" "api|App Store Server API"; do
  IFS='|' read -r key label <<<"$row"
  r=${RESULTS["$key"]}
  printf "%-34s %5s | %10.0f | %8s %8s | %6s | %9s ms\n" "$label" "$RECEIPT_CLIENTS" "$(column_median "$r" 1)" \
    "$(column_median "$r" 2)" "$(column_median "$r" 3)" "$(column_sum "$r" 4)" "$(column_median "$r" 5)"
done
echo
echo "Server API / verifyReceipt rate: $(ratio "$(column_median "${RESULTS[api]}" 1)" "$(column_median "${RESULTS[verifyreceipt]}" 1)")x (target >= 0.9x)"
echo "medians of $ROUNDS alternating rounds of ${SECONDS_PER_ROUND}s; latencies in ms; errors: non-2xx and socket errors, summed"
echo "$JWT_LINE (target <= 200 µs, or reuse)"
echo "API tokens the Server API server signed during the run: $SIGNED, for $HISTORY_CALLS successful Get Transaction History calls"
echo "depot peak RSS: verifyReceipt $(peak_rss_mb "$LEGACY_PID") MB, Server API $(peak_rss_mb "$API_PID") MB"

#!/usr/bin/env bash
# Scale-out benchmark (issue 10). A private PostgreSQL cluster (start_postgres: as the `postgres` user, fsync on)
# and, in four parts, one run:
#  1. One instance on SQLite and one on PostgreSQL, alternating rounds, the same load on each: POST /v1/receipts
#     with one StoreKit 2 JWS (a distinct purchase each request), then POST /v1/notifications/appstore with the
#     signed V2 REFUND of those purchases (wrk + receipts.lua): requests/s, p50/p99, Depot's CPU per request
#     (and PostgreSQL's). Target: PostgreSQL at >= 0.7x SQLite's rate.
#  2. Three instances on one PostgreSQL database: REVOCATIONS purchases through the first, each refunded through
#     the first; the delay from the refund's acknowledgement until the other two refuse the old token
#     (propagation.py, polling every 2 ms): p50/p99/max. Target: p99 <= 1 s.
#  3. nginx with the configuration `depot edge-config nginx` prints, in front of the three, its cache warmed by
#     one full download: a FILE_MIB MiB file downloaded whole (1 curl) and random 1 MiB ranges (8 connections,
#     range.lua), edge vs the first instance direct, alternating rounds. Target: the edge >= 0.9x direct.
#  4. A fresh instance on that database, its pool opened by a second of purchases, under product-list load
#     (/products_v1.json at 8 and 64 connections): its RSS sampled during that load. Target: <= 45 MB.
# Purchases and notifications are signed by a run-time test PKI the instances trust (depot-bench signed).
# PARTS=1 runs part 1 alone. BASELINE_DEPOT=PATH (another build of depot, e.g. main's before a change) adds a third
# instance to part 1, on PostgreSQL with that binary and its own database, in the same alternating rounds.
# Usage: [PARTS=1] [BASELINE_DEPOT=PATH] Tests/Benchmarks/scaleout.sh [seconds-per-round] [rounds] [file-MiB]
source "$(dirname "$0")/lib.sh"
SECONDS_PER_ROUND="${1:-5}"
ROUNDS="${2:-3}"
FILE_MIB="${3:-256}"
RATE_CLIENTS="${RATE_CLIENTS:-16}"
SIGNED="${SIGNED:-20000}"
REVOCATIONS="${REVOCATIONS:-200}"
EDGE_SECRET="depot-benchmark-edge-secret-0123456789abcdef"
PARTS="${PARTS:-all}"
BASELINE_DEPOT="${BASELINE_DEPOT:-}"
[ "$PARTS" = all ] || [ "$PARTS" = 1 ] || { echo "PARTS is all or 1" >&2; exit 64; }
[ -z "$BASELINE_DEPOT" ] || [ -x "$BASELINE_DEPOT" ] || { echo "BASELINE_DEPOT is not an executable: $BASELINE_DEPOT" >&2; exit 64; }
need_tools wrk nginx curl
build_release
build_bench
raise_fd_limit
CLK_TCK=$(getconf CLK_TCK)
loads() { LOADS+=("$1: $(cut -d' ' -f1-3 /proc/loadavg)"); }
LOADS=()

SIGNED_DIR="$OUT/scaleout-signed"; mkdir -p "$SIGNED_DIR"
echo "signing $SIGNED purchases and their refunds" >&2
"$DEPOT_BENCH" signed --count "$SIGNED" --out "$SIGNED_DIR" >/dev/null
FILE="$OUT/pack-${FILE_MIB}m.bin"
random_file "$FILE" "$FILE_MIB"
SIZE=$(stat -c %s "$FILE")
bench_tree scaleout-tree
publish_file "$TREE" bench "$FILE"
VERSION=$(cat "$TREE/content/bench/current")
start_postgres
COMMON=(--catalog "$TREE/catalog" --content "$TREE/content" --apple-root-certs "$SIGNED_DIR/root.pem")
rm -rf "$OUT"/scaleout-var-*

# checked POST: one purchase and its refund by hand on each server before the load (the files' last lines).
check_server() {
  local url="$1" last; last=$(tail -n 1 "$SIGNED_DIR/transactions.txt")
  curl -s -X POST -H 'Content-Type: application/json' -d "{\"transactions\": [\"$last\"]}" "$url/v1/receipts" | grep -q '"pack": "level2"' \
    || { echo "a signed purchase did not unlock level2 at $url" >&2; exit 1; }
  [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        -d "{\"signedPayload\": \"$(tail -n 1 "$SIGNED_DIR/refunds.txt")\"}" "$url/v1/notifications/appstore")" = 200 ] \
    || { echo "a signed REFUND was not acknowledged at $url" >&2; exit 1; }
}

# --- 1. SQLite vs PostgreSQL on one instance each (and the baseline binary on PostgreSQL)
loads "part 1 start"
declare -A URLS SERVER_PIDS LABELS=([sqlite]=SQLite [postgres]=PostgreSQL [baseline]="PostgreSQL, baseline")
BACKENDS=(sqlite postgres)
DEPOT_NAME=scaleout-sqlite start_depot "${COMMON[@]}" --data "$OUT/scaleout-var-sqlite"
URLS[sqlite]="$DEPOT_URL"; SERVER_PIDS[sqlite]="$DEPOT_PID"
DEPOT_NAME=scaleout-postgres start_depot "${COMMON[@]}" --data "$OUT/scaleout-var-postgres" --ledger "$(pg_database rates)"
URLS[postgres]="$DEPOT_URL"; SERVER_PIDS[postgres]="$DEPOT_PID"
if [ -n "$BASELINE_DEPOT" ]; then
  DEPOT="$BASELINE_DEPOT" DEPOT_NAME=scaleout-baseline start_depot "${COMMON[@]}" --data "$OUT/scaleout-var-baseline" \
    --ledger "$(pg_database rates_baseline)"
  URLS[baseline]="$DEPOT_URL"; SERVER_PIDS[baseline]="$DEPOT_PID"; BACKENDS+=(baseline)
fi
for backend in "${BACKENDS[@]}"; do check_server "${URLS[$backend]}"; done

postgres_ticks() { local sum=0 pid; for pid in $(postgres_pids); do sum=$((sum + $(cpu_ticks "$pid" 2>/dev/null || echo 0))); done; echo "$sum"; }
declare -A RESULTS
USED=0   # lines the earlier rounds posted (per wrk thread): each round starts after them, on every server
for round in $(seq 1 "$ROUNDS"); do
  used_now=0
  backends=("${BACKENDS[@]}")   # odd rounds in order, even rounds reversed
  [ $((round % 2)) = 0 ] && for ((i = ${#BACKENDS[@]} - 1, j = 0; i >= 0; i--, j++)); do backends[j]="${BACKENDS[i]}"; done
  for backend in "${backends[@]}"; do
    url="${URLS[$backend]}"; pid="${SERVER_PIDS[$backend]}"
    for kind in receipts notifications; do
      if [ "$kind" = receipts ]; then path=/v1/receipts; file="$SIGNED_DIR/transactions.txt"; field=transactions
      else path=/v1/notifications/appstore; file="$SIGNED_DIR/refunds.txt"; field=notifications; fi
      before=$(cpu_ticks "$pid"); pg_before=$(postgres_ticks)
      row=$(WRK_TXT="$OUT/wrk-scaleout-$backend.txt" WRK_SCRIPT_ARGS="$file $field 2 $USED" \
        run_wrk "$url$path" "$RATE_CLIENTS" "$SECONDS_PER_ROUND" -s "$BENCH/receipts.lua")
      after=$(cpu_ticks "$pid"); pg_after=$(postgres_ticks)
      requests=$(wrk_requests "$OUT/wrk-scaleout-$backend.txt")
      cpu=$(python3 -c "print(f'{($after - $before) / $CLK_TCK / max($requests, 1) * 1000:.3f}')")
      pg_cpu=$(python3 -c "print(f'{($pg_after - $pg_before) / $CLK_TCK / max($requests, 1) * 1000:.3f}')")
      RESULTS["$kind|$backend"]+="$row $cpu $pg_cpu;"
      [ "$((requests / 2 + 100))" -gt "$used_now" ] && used_now=$((requests / 2 + 100))
    done
  done
  USED=$((USED + used_now))
  [ $((USED * 2)) -lt "$SIGNED" ] || echo "warning: the signed purchases ran out; later ones repeat (raise SIGNED)" >&2
done
RATE_RSS="$(for backend in "${BACKENDS[@]}"; do printf '%s MB %s, ' "$(peak_rss_mb "${SERVER_PIDS[$backend]}")" "${LABELS[$backend]}"; done)"
for backend in "${BACKENDS[@]}"; do kill "${SERVER_PIDS[$backend]}"; wait "${SERVER_PIDS[$backend]}" 2>/dev/null || true; done
loads "part 1 end"

med() { column_median "${RESULTS[$1]}" "$2"; }
print_rates() {
  printf "\n1. one instance, %s connections (wrk)     %10s %8s %8s %6s %12s %12s\n" "$RATE_CLIENTS" "req/s" "p50" "p99" "errors" "depot CPU" "pg CPU"
  local kind backend r
  for kind in receipts notifications; do
    for backend in "${BACKENDS[@]}"; do
      r=${RESULTS["$kind|$backend"]}
      printf "%-42s %10.0f %8s %8s %6s %9s ms %9s ms\n" "$kind ($backend)" "$(med "$kind|$backend" 1)" "$(med "$kind|$backend" 2)" \
        "$(med "$kind|$backend" 3)" "$(column_sum "$r" 4)" "$(med "$kind|$backend" 5)" "$(med "$kind|$backend" 6)"
    done
    echo "  $kind PostgreSQL / SQLite: $(ratio "$(med "$kind|postgres" 1)" "$(med "$kind|sqlite" 1)")x (target >= 0.7x)"
    [ -n "$BASELINE_DEPOT" ] && echo "  $kind PostgreSQL with the baseline ($BASELINE_DEPOT) / SQLite:" \
      "$(ratio "$(med "$kind|baseline" 1)" "$(med "$kind|sqlite" 1)")x; this build / the baseline:" \
      "$(ratio "$(med "$kind|postgres" 1)" "$(med "$kind|baseline" 1)")x"
  done
  echo "  peak RSS: ${RATE_RSS%, }"
}
if [ "$PARTS" = 1 ]; then
  print_rates
  echo
  echo "medians of $ROUNDS alternating rounds of ${SECONDS_PER_ROUND}s; latencies in ms; errors: non-2xx/3xx and socket errors, summed"
  printf '%s\n' "${LOADS[@]}" | sed 's/^/load averages at /'
  exit 0
fi

# --- 2. three instances on one database: revocation propagation
CLUSTER_LEDGER=$(pg_database cluster)
CLUSTER=(--ledger "$CLUSTER_LEDGER" --edge-secret "$EDGE_SECRET")
PORTS=(); INSTANCE_PIDS=()
for index in 0 1 2; do   # one at a time: the first creates the schema and the token key, the others find them
  DEPOT_NAME=scaleout-instance-$index start_depot "${COMMON[@]}" "${CLUSTER[@]}" --data "$OUT/scaleout-var-instance-$index"
  PORTS+=("${DEPOT_URL##*:}"); INSTANCE_PIDS+=("$DEPOT_PID")
done
DIRECT_URL="http://127.0.0.1:${PORTS[0]}"
loads "part 2 start"
python3 "$BENCH/propagation.py" --ports "$(IFS=,; echo "${PORTS[*]}")" --transactions "$SIGNED_DIR/transactions.txt" \
  --refunds "$SIGNED_DIR/refunds.txt" --start 0 --count "$REVOCATIONS" >"$OUT/propagation.json"
PROPAGATION=$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
problems = ",".join(f"{k}:{v}" for k, v in r["problems"].items()) or "none"
print(r["revocations"], len(r["delays_ms"]), r["p50_ms"], r["p99_ms"], r["max_ms"], r["refund_p50_ms"], problems)' "$OUT/propagation.json")
read -r P_COUNT P_DELAYS P_P50 P_P99 P_MAX P_REFUND P_PROBLEMS <<<"$PROPAGATION"
loads "part 2 end"

# --- 3. the edge (printed configuration, warm cache) vs one instance direct
EDGE_DIR="$OUT/scaleout-edge"; rm -rf "$EDGE_DIR"; mkdir -p "$EDGE_DIR/cache"; TEMP_PATHS+=("$EDGE_DIR")
EDGE_PORT=$(free_port)
"$DEPOT" edge-config nginx --upstream "$(printf '127.0.0.1:%s,' "${PORTS[@]}" | sed 's/,$//')" --listen "127.0.0.1:$EDGE_PORT" \
  --cache-dir "$EDGE_DIR/cache" --edge-secret "$EDGE_SECRET" >"$EDGE_DIR/nginx.conf"
nginx -t -q -c "$EDGE_DIR/nginx.conf" || { echo "nginx refused the printed configuration" >&2; exit 1; }
nginx -c "$EDGE_DIR/nginx.conf" -g 'daemon off;' 2>"$EDGE_DIR/error.log" &
PIDS+=($!)
EDGE_URL="http://127.0.0.1:$EDGE_PORT"
for _ in $(seq 1 100); do curl -s -o /dev/null "$EDGE_URL/products_v1.json" && break; sleep 0.1; done
TOKEN=$("$DEPOT" token --pack bench --ttl 86400 --ledger "$CLUSTER_LEDGER" --content "$TREE/content")
AUTH="Authorization: Bearer $TOKEN"
FILE_PATH="/v1/packs/bench/$VERSION/files/$(basename "$FILE")"
loads "part 3 start"
WANT=$(sha256sum "$FILE" | cut -c1-64)
for server in "$EDGE_URL" "$DIRECT_URL"; do   # the edge's first download fills its cache; both must give the file's bytes
  [ "$(curl -sf -H "$AUTH" "$server$FILE_PATH" | sha256sum | cut -c1-64)" = "$WANT" ] \
    || { echo "a full download through $server does not match the file" >&2; exit 1; }
done
CACHED_MIB=$(du -sm "$EDGE_DIR/cache/packs" | cut -f1)
for round in $(seq 1 "$ROUNDS"); do
  servers=(edge direct); [ $((round % 2)) = 0 ] && servers=(direct edge)
  for server in "${servers[@]}"; do
    if [ "$server" = edge ]; then base="$EDGE_URL"; else base="$DIRECT_URL"; fi
    RESULTS["full|$server"]+="$(download_rate "$base$FILE_PATH" 1 -H "$AUTH");"
    RESULTS["range|$server"]+="$(WRK_SCRIPT_ARGS="$SIZE mixed" run_wrk "$base$FILE_PATH" 8 "$SECONDS_PER_ROUND" -s "$BENCH/range.lua" -H "$AUTH");"
  done
done
CLUSTER_RSS="$(for pid in "${INSTANCE_PIDS[@]}"; do printf '%s ' "$(peak_rss_mb "$pid")"; done)"
loads "part 3 end"

# --- 4. a fresh instance with its pool open under product-list load
sessions() { "$PG_BIN/psql" -X -A -t -h "$PG_DIR" -p "$PG_PORT" -U depot -d postgres \
  -c "SELECT count(*) FROM pg_stat_activity WHERE datname = 'cluster'"; }
SESSIONS_BEFORE=$(sessions)
DEPOT_NAME=scaleout-instance-3 start_depot "${COMMON[@]}" "${CLUSTER[@]}" --data "$OUT/scaleout-var-instance-3"
LIST_PID="$DEPOT_PID"
# Its pool opens lazily: a second of concurrent purchases (lines no earlier part used) opens every connection.
WRK_TXT="$OUT/wrk-scaleout-pool.txt" WRK_SCRIPT_ARGS="$SIGNED_DIR/transactions.txt transactions 2 $((SIGNED / 4))" \
  run_wrk "$DEPOT_URL/v1/receipts" 16 1 -s "$BENCH/receipts.lua" >/dev/null
POOL=$(( $(sessions) - SESSIONS_BEFORE ))
OPEN_RSS=$(awk '{ printf "%.1f", $1 / 1024 }' <<<"$(rss_kb "$LIST_PID")")
loads "part 4 start"
( while kill -0 "$LIST_PID" 2>/dev/null; do rss_kb "$LIST_PID"; sleep 0.2; done ) >"$OUT/scaleout-rss.txt" 2>/dev/null &
SAMPLER=$!
for round in $(seq 1 "$ROUNDS"); do
  for connections in 8 64; do
    RESULTS["lists|$connections"]+="$(run_wrk "$DEPOT_URL/products_v1.json" "$connections" "$SECONDS_PER_ROUND");"
  done
done
kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null || true
LIST_RSS=$(awk 'NF { if ($1 > max) max = $1 } END { printf "%.1f", max / 1024 }' "$OUT/scaleout-rss.txt")
LIST_PEAK=$(peak_rss_mb "$LIST_PID")
loads "part 4 end"

# --- the table
print_rates
echo
echo "2. propagation over $P_COUNT revocations through one of three instances ($P_DELAYS delays, the other two each):"
echo "  p50 $P_P50 ms, p99 $P_P99 ms, max $P_MAX ms (target p99 <= 1000 ms); the refund itself p50 $P_REFUND ms; problems: $P_PROBLEMS"
echo
printf "3. edge (warm cache, %s MiB cached) vs direct   %10s %10s %6s | %8s %8s | %6s\n" "$CACHED_MIB" "edge" "direct" "ratio" "p99 e" "p99 d" "errors"
printf "%-46s %6.0f MiB/s %6.0f MiB/s %5sx | %8s %8s | %6s\n" "full download ${FILE_MIB} MiB, 1 client" "$(med full\|edge 1)" "$(med full\|direct 1)" \
  "$(ratio "$(med full\|edge 1)" "$(med full\|direct 1)")" "-" "-" "$(( $(column_sum "${RESULTS[full|edge]}" 2) + $(column_sum "${RESULTS[full|direct]}" 2) ))"
printf "%-46s %8.0f r/s %8.0f r/s %5sx | %8s %8s | %6s\n" "random 1 MiB ranges, 8 connections" "$(med range\|edge 1)" "$(med range\|direct 1)" \
  "$(ratio "$(med range\|edge 1)" "$(med range\|direct 1)")" "$(med range\|edge 3)" "$(med range\|direct 3)" \
  "$(( $(column_sum "${RESULTS[range|edge]}" 4) + $(column_sum "${RESULTS[range|direct]}" 4) ))"
echo "  target: the edge >= 0.9x direct; the three instances' peak RSS: ${CLUSTER_RSS}MB"
echo
echo "4. a fresh instance on PostgreSQL ($POOL sessions of its own open, --ledger-pool 8 and the change feed) under product-list load:"
for connections in 8 64; do
  echo "  /products_v1.json, $connections connections: $(med "lists|$connections" 1 | cut -d. -f1) r/s, p99 $(med "lists|$connections" 3) ms, errors $(column_sum "${RESULTS[lists|$connections]}" 4)"
done
echo "  RSS under that load: at most $LIST_RSS MB (sampled every 0.2 s; $OPEN_RSS MB with the pool just opened; target <= 45 MB)"
echo "  its peak RSS over its whole life (the purchases that opened the pool included): $LIST_PEAK MB"
echo
echo "medians of $ROUNDS alternating rounds of ${SECONDS_PER_ROUND}s; latencies in ms; errors: non-2xx/3xx and socket errors, summed"
printf '%s\n' "${LOADS[@]}" | sed 's/^/load averages at /'

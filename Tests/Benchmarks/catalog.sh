#!/usr/bin/env bash
# Product-list benchmark: Depot and nginx side by side on the same bytes, driven by wrk in alternating rounds.
# Rows: /products_v1.json 200, /products_v2.json gzip 200, conditional GET 304; at 8 and 64 connections.
# Then (issue 2) 1,000 idle keep-alive connections held open on Depot (connections.py idle): Depot's RSS growth
# per connection (target <= ~20 KB) and the v1 200 row at 8 connections with and without them.
# Usage: Tests/Benchmarks/catalog.sh [seconds-per-round] [rounds] [idle-connections (0: skip that part)]
source "$(dirname "$0")/lib.sh"
SECONDS_PER_ROUND="${1:-5}"
ROUNDS="${2:-3}"
IDLE_CONNECTIONS="${3:-1000}"
need_tools wrk nginx curl
build_release
raise_fd_limit

start_depot --catalog "$ROOT/catalog" --content "$ROOT/content" --data "$OUT/var"
# The same bytes for nginx: the identity lists and the precompressed gzip variant Depot serves.
WWW="$OUT/www"; rm -rf "$WWW"; mkdir -p "$WWW"
curl -s "$DEPOT_URL/products_v1.json" -o "$WWW/products_v1.json"
curl -s "$DEPOT_URL/products_v2.json" -o "$WWW/products_v2.json"
curl -s -H 'Accept-Encoding: gzip' "$DEPOT_URL/products_v2.json" -o "$WWW/products_v2.json.gz"
touch -r "$WWW/products_v2.json" "$WWW/products_v2.json.gz"
start_nginx "$WWW" 'location / { add_header Cache-Control "public, no-cache"; add_header Vary Accept-Encoding; }'

etag_of() { curl -sI "$1" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag" {print $2}'; }
DEPOT_ETAG=$(etag_of "$DEPOT_URL/products_v1.json")
NGINX_ETAG=$(etag_of "$NGINX_URL/products_v1.json")

declare -A RESULTS
rows=("v1 200|/products_v1.json|" "v2 gzip 200|/products_v2.json|gzip" "v1 304|/products_v1.json|inm")
for round in $(seq 1 "$ROUNDS"); do
  for connections in 8 64; do
    for row in "${rows[@]}"; do
      IFS='|' read -r label path mode <<<"$row"
      for server in depot nginx; do
        if [ $server = depot ]; then base=$DEPOT_URL; etag=$DEPOT_ETAG; else base=$NGINX_URL; etag=$NGINX_ETAG; fi
        args=()
        [ "$mode" = gzip ] && args=(-H 'Accept-Encoding: gzip')
        [ "$mode" = inm ] && args=(-H "If-None-Match: $etag")
        result=$(run_wrk "$base$path" "$connections" "$SECONDS_PER_ROUND" "${args[@]}")
        RESULTS["$label|$connections|$server"]+="$result;"
      done
    done
  done
done

printf "\n%-14s %5s | %10s %10s %6s | %8s %8s | %8s %8s %6s\n" "row" "conns" "depot r/s" "nginx r/s" "ratio" "p50 d" "p50 n" "p99 d" "p99 n" "ratio"
for connections in 8 64; do
  for row in "${rows[@]}"; do
    IFS='|' read -r label path mode <<<"$row"
    summarize() {
      local values="${RESULTS["$label|$connections|$1"]}" col="$2"
      median $(echo "$values" | tr ';' '\n' | awk -v c="$col" 'NF { print $c }')
    }
    d_rps=$(summarize depot 1); n_rps=$(summarize nginx 1)
    d_p50=$(summarize depot 2); n_p50=$(summarize nginx 2)
    d_p99=$(summarize depot 3); n_p99=$(summarize nginx 3)
    printf "%-14s %5s | %10.0f %10.0f %5.2fx | %8s %8s | %8s %8s %5.2fx\n" "$label" "$connections" "$d_rps" "$n_rps" \
      "$(python3 -c "print($d_rps/$n_rps)")" "$d_p50" "$n_p50" "$d_p99" "$n_p99" "$(python3 -c "print($d_p99/$n_p99)")"
  done
done
echo
echo "medians of $ROUNDS alternating rounds of ${SECONDS_PER_ROUND}s; latencies in ms; ratios are depot/nginx"
echo "depot peak RSS: $(peak_rss_mb "$DEPOT_PID") MB"

[ "$IDLE_CONNECTIONS" -gt 0 ] || exit 0
# Idle keep-alive connections: the v1 200 row at 8 connections without and with them, alternating.
IDLE=()
for round in $(seq 1 "$ROUNDS"); do
  RESULTS["idle|without"]+="$(run_wrk "$DEPOT_URL/products_v1.json" 8 "$SECONDS_PER_ROUND");"
  rm -f "$OUT/idle.ready"
  python3 "$BENCH/connections.py" idle "$DEPOT_URL/products_v1.json" --count "$IDLE_CONNECTIONS" --pid "$DEPOT_PID" \
    --hold $((SECONDS_PER_ROUND + 2)) --ready "$OUT/idle.ready" >"$OUT/idle.json" &
  holder=$!
  for _ in $(seq 1 300); do [ -f "$OUT/idle.ready" ] && break; sleep 0.1; done
  RESULTS["idle|with"]+="$(run_wrk "$DEPOT_URL/products_v1.json" 8 "$SECONDS_PER_ROUND");"
  wait "$holder"
  IDLE+=("$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["connections"], r["errors"], r["rss_before_kb"], r["rss_open_kb"], r["growth_per_connection_kb"],
      ",".join(f"{k}:{v}" for k, v in r["error_kinds"].items()) or "-")' "$OUT/idle.json")")
done
w=${RESULTS["idle|without"]}; h=${RESULTS["idle|with"]}
printf "\n%-30s %5s | %10s %10s %6s | %8s %8s %6s\n" "row" "conns" "without" "with" "ratio" "p99 w/o" "p99 with" "ratio"
w_rps=$(column_median "$w" 1); h_rps=$(column_median "$h" 1); w_p99=$(column_median "$w" 3); h_p99=$(column_median "$h" 3)
printf "%-30s %5s | %10.0f %10.0f %5sx | %8s %8s %5sx\n" "v1 200 beside $IDLE_CONNECTIONS idle" 8 "$w_rps" "$h_rps" \
  "$(ratio "$h_rps" "$w_rps")" "$w_p99" "$h_p99" "$(ratio "$h_p99" "$w_p99")"
echo
for line in "${IDLE[@]}"; do
  read -r conns errors before opened growth kinds <<<"$line"
  echo "idle connections: $conns of $IDLE_CONNECTIONS open, errors $errors ($kinds); depot RSS ${before} KB before, ${opened} KB with them open: ${growth} KB per connection (target <= ~20 KB)"
done
echo "errors (wrk, without/with): $(column_sum "$w" 4)/$(column_sum "$h" 4)"

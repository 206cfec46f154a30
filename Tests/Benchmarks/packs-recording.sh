# packs.sh's `recording` mode (sourced by packs.sh after the file is published into $TREE as pack `bench`,
# version $VERSION): the range and full rows on two Depot servers over the same tree, one with
# `--delivery-record on` and one with `off`, alternating which goes first in each round. Each server gets its
# own token from /v1/receipts for a receipt of the simulated App Store (a purchase-bound token: operator tokens
# from `depot token` record nothing, so they would measure nothing). Afterwards the `on` server's ledger must
# show the purchase's delivery (`depot purchases show`) and the `off` server's nothing, else the run fails.
# Besides the rates, each server's CPU time per request (ranges) and per GiB (full downloads) over all rounds,
# and the median of the per-round on/off ratios (each round's two rows ran seconds apart, so a slow spell of the
# machine that hits both cancels out). FLUSH_WAIT (default 1.5 s) is the pause after each row that lets the
# once-a-second write fall inside the row's CPU window; with FLUSH_WAIT=0 rows follow each other without pause
# (short rows, many rounds) and the whole run's CPU of each server is what tells recording's cost. DUEL=1 runs
# each row against both servers at once instead of one after the other (each server with its own load
# generator of the row's size): the machine's slow spells then hit both alike, and the ratio of their rates is
# what recording costs when both compete for the same two cores.
build_bench
STORE="$OUT/appstore-packs"
start_appstore "$STORE" 0 1 com.example.depot.bench
RECEIPT=$(head -n 1 "$STORE/receipts.txt")
declare -A FILE_URL AUTH_OF DATA_OF PURCHASE_OF PID_OF
for record in on off; do
  DATA_OF[$record]="$OUT/packs-var-record-$record"
  rm -rf "${DATA_OF[$record]}"
  DEPOT_NAME="depot-record-$record" start_depot --catalog "$TREE/catalog" --content "$TREE/content" --data "${DATA_OF[$record]}" \
    --token-secret "$TOKEN_SECRET" --apple-verify-url "$APPSTORE_URL" --apple-sandbox-verify-url "$APPSTORE_SANDBOX_URL" \
    --apple-root-certs "$STORE/root.pem" --delivery-record "$record"
  PID_OF[$record]=$DEPOT_PID
  answer=$(curl -s -X POST -H 'Content-Type: application/json' -d "{\"receipt\": \"$RECEIPT\"}" "$DEPOT_URL/v1/receipts")
  read -r token purchase < <(python3 -c '
import json, sys
entitlement = next(e for e in json.loads(sys.argv[1])["entitlements"] if e["pack"] == "bench")
print(entitlement["token"], entitlement["originalTransactionId"])' "$answer") \
    || { echo "the receipt did not unlock pack bench on the delivery-record $record server: $answer" >&2; exit 1; }
  FILE_URL[$record]="$DEPOT_URL/v1/packs/bench/$VERSION/files/$NAME"
  AUTH_OF[$record]="Authorization: Bearer $token"
  PURCHASE_OF[$record]=$purchase
  [ "$(curl -s -o /dev/null -w '%{http_code}' -r 0-1048575 -H "${AUTH_OF[$record]}" "${FILE_URL[$record]}")" = 206 ] \
    || { echo "delivery-record $record: no 206 with the purchase's token" >&2; exit 1; }
done

declare -A RESULTS TICKS UNITS START_TICKS
LOADS=()
for record in on off; do START_TICKS[$record]=$(cpu_ticks "${PID_OF[$record]}"); done
# measured KEY RECORD UNITS COMMAND...: runs COMMAND (its output is the row), then waits 1.5 s so the flush of
# what the row sent (once a second) falls inside the window, and adds the server's CPU ticks over the window
# and the row's UNITS (requests, or MiB) to TICKS[KEY] and UNITS[KEY]. UNITS "wrk" reads wrk's request count.
measured() {
  local key="$1" record="$2" units="$3"; shift 3
  local before after row
  before=$(cpu_ticks "${PID_OF[$record]}")
  row=$("$@")
  sleep "${FLUSH_WAIT:-1.5}"
  after=$(cpu_ticks "${PID_OF[$record]}")
  [ "$units" = wrk ] && units=$(wrk_requests "$OUT/wrk.txt")
  [ "$units" = moved ] && units=$(echo "$row" | cut -d' ' -f3)
  RESULTS["$key"]+="$row;"
  TICKS["$key"]=$(( ${TICKS["$key"]:-0} + after - before ))
  UNITS["$key"]=$(python3 -c "print(${UNITS["$key"]:-0} + $units)")
}
# duel KEY UNITS ROW-COMMAND...: runs the row against both servers at the same time (ROW-COMMAND is given the
# server, `on` or `off`, as its first argument), so whatever else slows the machine slows both alike; adds each
# server's row, CPU ticks and units like `measured`.
duel() {
  local key="$1" units="$2"; shift 2
  local record before_on before_off
  before_on=$(cpu_ticks "${PID_OF[on]}"); before_off=$(cpu_ticks "${PID_OF[off]}")
  local jobs=()
  for record in on off; do "$@" "$record" >"$OUT/duel-$record.row" & jobs+=($!); done
  wait "${jobs[@]}"
  sleep "${FLUSH_WAIT:-1.5}"
  TICKS["$key|on"]=$(( ${TICKS["$key|on"]:-0} + $(cpu_ticks "${PID_OF[on]}") - before_on ))
  TICKS["$key|off"]=$(( ${TICKS["$key|off"]:-0} + $(cpu_ticks "${PID_OF[off]}") - before_off ))
  for record in on off; do
    local row n
    row=$(cat "$OUT/duel-$record.row")
    if [ "$units" = wrk ]; then n=$(wrk_requests "$OUT/wrk-$record.txt"); else n=$(echo "$row" | cut -d' ' -f3); fi
    RESULTS["$key|$record"]+="$row;"
    UNITS["$key|$record"]=$(python3 -c "print(${UNITS["$key|$record"]:-0} + $n)")
  done
}
duel_range() { WRK_TXT="$OUT/wrk-$2.txt" WRK_SCRIPT_ARGS="$SIZE mixed" run_wrk "${FILE_URL[$2]}" "$1" "$SECONDS_PER_ROUND" -s "$BENCH/range.lua" -H "${AUTH_OF[$2]}"; }
duel_full() { DOWNLOAD_TAG="-$2" download_rate "${FILE_URL[$2]}" "$1" -H "${AUTH_OF[$2]}"; }
for round in $(seq 1 "$ROUNDS"); do
  if [ -n "${DUEL:-}" ]; then
    for connections in 8 64; do duel "range|$connections" wrk duel_range "$connections"; done
    for clients in 1 4; do duel "full|$clients" moved duel_full "$clients"; done
    LOADS+=("$(cut -d' ' -f1-3 /proc/loadavg)")
    continue
  fi
  servers=(on off); [ $((round % 2)) = 0 ] && servers=(off on)
  for connections in 8 64; do
    for record in "${servers[@]}"; do
      WRK_SCRIPT_ARGS="$SIZE mixed" measured "range|$connections|$record" "$record" wrk \
        run_wrk "${FILE_URL[$record]}" "$connections" "$SECONDS_PER_ROUND" -s "$BENCH/range.lua" -H "${AUTH_OF[$record]}"
    done
  done
  for clients in 1 4; do
    for record in "${servers[@]}"; do
      measured "full|$clients|$record" "$record" moved \
        download_rate "${FILE_URL[$record]}" "$clients" -H "${AUTH_OF[$record]}"
    done
  done
  LOADS+=("$(cut -d' ' -f1-3 /proc/loadavg)")
done

# The `on` server recorded the purchase's delivery (it writes once a second), the `off` server nothing.
shown() {
  "$DEPOT" purchases show --transaction "${PURCHASE_OF[$1]}" --data "${DATA_OF[$1]}" --catalog "$TREE/catalog" \
    --content "$TREE/content" | sed -n 's/^  delivered *//p'
}
RECORDED=""
for _ in $(seq 1 300); do
  RECORDED=$(shown on)
  case "$RECORDED" in *", complete"*) break ;; esac
  sleep 0.1
done
case "$RECORDED" in *", complete"*) ;; *) echo "the delivery-record on server did not record the downloads: ${RECORDED:-nothing}" >&2; exit 1 ;; esac
UNRECORDED=$(shown off)
[ "$UNRECORDED" = "nothing recorded" ] || { echo "the delivery-record off server recorded: $UNRECORDED" >&2; exit 1; }

printf "\n%-22s %5s | %10s %10s %6s | %8s %8s %6s | %6s\n" "row" "conns" "record on" "record off" "ratio" "p99 on" "p99 off" "ratio" "errors"
for connections in 8 64; do
  d=${RESULTS["range|$connections|on"]}; n=${RESULTS["range|$connections|off"]}
  d_rps=$(column_median "$d" 1); n_rps=$(column_median "$n" 1)
  d_p99=$(column_median "$d" 3); n_p99=$(column_median "$n" 3)
  printf "%-22s %5s | %8.0f/s %8.0f/s %5sx | %8s %8s %5sx | %s/%s\n" "range 1 MiB (206)" "$connections" \
    "$d_rps" "$n_rps" "$(ratio "$d_rps" "$n_rps")" "$d_p99" "$n_p99" "$(ratio "$d_p99" "$n_p99")" \
    "$(column_sum "$d" 4)" "$(column_sum "$n" 4)"
done
for clients in 1 4; do
  d=${RESULTS["full|$clients|on"]}; n=${RESULTS["full|$clients|off"]}
  d_mib=$(column_median "$d" 1); n_mib=$(column_median "$n" 1)
  printf "%-22s %5s | %6.0f MiB/s %6.0f MiB/s %5sx | %8s %8s %6s | %s/%s\n" "full ${FILE_MIB} MiB (200)" "$clients" \
    "$d_mib" "$n_mib" "$(ratio "$d_mib" "$n_mib")" "" "" "" "$(column_sum "$d" 2)" "$(column_sum "$n" 2)"
done
echo
echo "medians of $ROUNDS alternating rounds of ${SECONDS_PER_ROUND}s; latencies in ms; ratios are record on / record off (target >= 0.97x on r/s and MiB/s)"
echo "errors: non-2xx responses and socket errors (range), failed or short downloads (full), on/off, summed over rounds"
# Depot's CPU per request (ranges) or per GiB (full downloads), all rounds together: what recording costs the
# server itself, far less disturbed by what else runs on the machine than the rates are.
CLK_TCK=$(getconf CLK_TCK)
cpu_per() { python3 -c "print(f'{$1 / $CLK_TCK * 1000 / max($2, 1e-9) * $3:.3f}')"; }
echo
printf "%-22s %5s | %12s %12s %6s\n" "Depot CPU" "conns" "record on" "record off" "ratio"
for key in "range|8" "range|64" "full|1" "full|4"; do
  IFS='|' read -r kind count <<<"$key"
  if [ "$kind" = range ]; then scale=1; unit="ms/request"; label="range 1 MiB (206)"; else scale=1024; unit="ms/GiB"; label="full ${FILE_MIB} MiB (200)"; fi
  on=$(cpu_per "${TICKS["$key|on"]}" "${UNITS["$key|on"]}" "$scale"); off=$(cpu_per "${TICKS["$key|off"]}" "${UNITS["$key|off"]}" "$scale")
  printf "%-22s %5s | %12s %12s %5sx   (%s; %s/%s ticks over %s/%s %s)\n" "$label" "$count" "$on" "$off" "$(ratio "$on" "$off")" "$unit" \
    "${TICKS["$key|on"]}" "${TICKS["$key|off"]}" "${UNITS["$key|on"]}" "${UNITS["$key|off"]}" "$([ "$kind" = range ] && echo requests || echo MiB)"
done
echo "CPU ratios are record on / record off (lower is cheaper; each window includes ${FLUSH_WAIT:-1.5} s after the row for the once-a-second write)"
ALL_ON=$(( $(cpu_ticks "${PID_OF[on]}") - START_TICKS[on] )); ALL_OFF=$(( $(cpu_ticks "${PID_OF[off]}") - START_TICKS[off] ))
echo "whole run, every row and every write included: on $ALL_ON ticks, off $ALL_OFF ticks"
echo
# The median over rounds of (this round's on / this round's off): the paired figure.
paired() {
  python3 - "$1" "$2" <<'PY2'
import statistics, sys
on = [float(r.split()[0]) for r in sys.argv[1].split(";") if r.strip()]
off = [float(r.split()[0]) for r in sys.argv[2].split(";") if r.strip()]
ratios = sorted(a / b for a, b in zip(on, off) if b)
print(f"{statistics.median(ratios):.3f} (middle half {ratios[len(ratios) // 4]:.3f}..{ratios[(3 * len(ratios)) // 4]:.3f})")
PY2
}
printf "%-22s %5s | %-40s | %s\n" "paired, per round" "conns" "median of on/off ratios" "all rounds: on/off of requests or MiB moved"
for key in "range|8" "range|64" "full|1" "full|4"; do
  IFS='|' read -r kind count <<<"$key"
  if [ "$kind" = range ]; then label="range 1 MiB (206)"; else label="full ${FILE_MIB} MiB (200)"; fi
  printf "%-22s %5s | %-40s | %s\n" "$label" "$count" "$(paired "${RESULTS["$key|on"]}" "${RESULTS["$key|off"]}")" \
    "$(python3 -c "print(f'{${UNITS["$key|on"]} / max(${UNITS["$key|off"]}, 1e-9):.3f}')")"
done
[ -n "${DUEL:-}" ] && echo "(DUEL: both servers loaded at once in every row, so the last column compares the same seconds of the machine)"
echo

# Every round's figures, to judge the noise of the medians.
per_round() { echo "$1" | tr ';' '\n' | awk -v c="$2" 'NF { printf "%s%s", sep, $c; sep = " " }'; }
for key in "range|8" "range|64" "full|1" "full|4"; do
  IFS='|' read -r kind count <<<"$key"
  echo "per round, $kind $count (on | off, in round order): $(per_round "${RESULTS["$key|on"]}" 1) | $(per_round "${RESULTS["$key|off"]}" 1)"
done
echo "load average (1, 5, 15 min) after each round: $(IFS=';'; echo "${LOADS[*]}")"
echo "recorded by the on server: $RECORDED"
echo "recorded by the off server: $UNRECORDED"
echo "peak RSS: on $(peak_rss_mb "${PID_OF[on]}") MB, off $(peak_rss_mb "${PID_OF[off]}") MB"

# Shared helpers for the benchmark scripts (sourced, not run).
# Everything runs on loopback; tools come from Debian's packages and are installed when missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BENCH="$ROOT/Tests/Benchmarks"
OUT="${BENCH_OUT:-$ROOT/Tests/Benchmarks/out}"
mkdir -p "$OUT"
PIDS=()
TEMP_PATHS=()
STOP_COMMANDS=()   # run after the PIDs are gone, before TEMP_PATHS are removed (e.g. stopping PostgreSQL)
# One HMAC key for the server and `depot token` (the benchmarks never touch a real data directory's key).
TOKEN_SECRET="depot-benchmark-token-secret-0123456789abcdef"

cleanup() {
  local status=$?   # the script's own exit status, kept whatever the clean-up's last test gives
  for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for command in "${STOP_COMMANDS[@]:-}"; do [ -n "$command" ] && eval "$command" >/dev/null 2>&1 || true; done
  for path in "${TEMP_PATHS[@]:-}"; do [ -n "$path" ] && rm -rf "$path"; done
  exit "$status"
}
trap cleanup EXIT

need_tools() {
  local missing=()
  for tool in "$@"; do
    case "$tool" in
      nginx) command -v nginx >/dev/null || missing+=(nginx-light) ;;
      /usr/bin/time) [ -x /usr/bin/time ] || missing+=(time) ;;
      *) command -v "$tool" >/dev/null || missing+=("$tool") ;;
    esac
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} from Debian's packages" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

build_release() {
  (cd "$ROOT" && swift build -c release --product depot 2>&1 | tail -1) >&2
  DEPOT="$ROOT/.build/release/depot"
}

# build_bench: the depot-bench helper (simulated App Store, JWS cost); sets DEPOT_BENCH.
build_bench() {
  (cd "$ROOT" && swift build -c release --product depot-bench 2>&1 | tail -1) >&2
  DEPOT_BENCH="$ROOT/.build/release/depot-bench"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# random_file PATH MIB: a file of MIB MiB of random bytes, kept under out/ and reused when its size matches.
random_file() {
  local path="$1" mib="$2"
  if [ "$(stat -c %s "$path" 2>/dev/null || echo 0)" != "$((mib * 1048576))" ]; then
    echo "generating $path ($mib MiB)" >&2
    head -c "$((mib * 1048576))" /dev/urandom >"$path.tmp" && mv "$path.tmp" "$path"
  fi
}

# bench_tree NAME: a fresh writable copy of catalog/ and content/ under out/NAME, removed on exit; sets TREE.
bench_tree() {
  TREE="$OUT/$1"
  rm -rf "$TREE"; mkdir -p "$TREE"
  cp -r "$ROOT/catalog" "$ROOT/content" "$TREE/"
  rm -rf "$TREE/content/.staging"
  TEMP_PATHS+=("$TREE")
}

# publish_file TREE PACK FILE...: `depot publish` into TREE as the non-consumable com.example.depot.PACK.
publish_file() {
  local tree="$1" pack="$2"; shift 2
  "$DEPOT" publish --catalog "$tree/catalog" --content "$tree/content" --pack "$pack" \
    --product "com.example.depot.$pack" --type non-consumable --title "Benchmark $pack" "$@" >/dev/null
}

# start_depot DIR ARGS... : starts depot serve on a free port; sets DEPOT_PID and DEPOT_URL.
start_depot() {
  local name="${DEPOT_NAME:-depot}"   # several servers at once: a name each for their stdout and log
  local log="$OUT/$name.log"
  rm -f "$OUT/$name.stdout"
  "$DEPOT" serve --port 0 --access-log off "$@" >"$OUT/$name.stdout" 2>"$log" &
  DEPOT_PID=$!
  PIDS+=("$DEPOT_PID")
  for _ in $(seq 1 100); do
    if grep -q "listening on" "$OUT/$name.stdout" 2>/dev/null; then break; fi
    sleep 0.1
  done
  DEPOT_URL=$(sed -n 's/^listening on //p' "$OUT/$name.stdout")
  [ -n "$DEPOT_URL" ] || { echo "depot did not start:" >&2; cat "$log" >&2; exit 1; }
}

# start_nginx ROOT_DIR [extra server directives]: sets NGINX_URL and NGINX_PID.
start_nginx() {
  local root="$1" extra="${2:-}"
  local port; port=$(free_port)
  local dir="$OUT/nginx"
  mkdir -p "$dir"
  cat >"$dir/nginx.conf" <<CONF
worker_processes 2;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 8192; multi_accept on; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 10000000;
  keepalive_timeout 60s;
  open_file_cache max=10000 inactive=60s;
  open_file_cache_valid 60s;
  types { application/json json; application/octet-stream bin; }
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$port reuseport;
    root $root;
    gzip_static on;
    etag on;
    $extra
  }
}
CONF
  nginx -c "$dir/nginx.conf" -p "$dir" &
  NGINX_PID=$!
  PIDS+=("$NGINX_PID")
  NGINX_URL="http://127.0.0.1:$port"
  for _ in $(seq 1 50); do curl -s -o /dev/null "$NGINX_URL/" && break; sleep 0.1; done
}

# start_appstore DIR DELAY_MS RECEIPTS PRODUCT[,PRODUCT...] [API_RECEIPTS]: a simulated App Store (depot-bench)
# writing receipts.txt, transactions.txt and root.pem into DIR (and, with API_RECEIPTS, api-receipts.txt,
# api-root.pem, api-key.p8, api-key.txt); sets APPSTORE_URL, APPSTORE_SANDBOX_URL, APPSTORE_PID (and
# APPSTORE_API_URL, APPSTORE_API_SANDBOX_URL).
start_appstore() {
  local dir="$1"
  mkdir -p "$dir"; rm -f "$dir/stdout"
  "$DEPOT_BENCH" appstore --delay-ms "$2" --receipts "$3" --product "$4" --api-receipts "${5:-0}" --out "$dir" \
    >"$dir/stdout" 2>"$dir/stderr" &
  APPSTORE_PID=$!
  PIDS+=("$APPSTORE_PID")
  # Minting tens of thousands of receipts takes a minute or more on a loaded machine: wait while it runs (10 min at most).
  for _ in $(seq 1 6000); do
    grep -q '^appstore ' "$dir/stdout" 2>/dev/null && break
    kill -0 "$APPSTORE_PID" 2>/dev/null || break
    sleep 0.1
  done
  read -r _ APPSTORE_URL APPSTORE_SANDBOX_URL APPSTORE_API_URL APPSTORE_API_SANDBOX_URL <"$dir/stdout" || true
  [ -n "${APPSTORE_SANDBOX_URL:-}" ] || { echo "depot-bench appstore did not start:" >&2; cat "$dir/stderr" >&2; exit 1; }
}

# start_postgres: a private PostgreSQL cluster (initdb into a temporary directory, postgres on a free loopback
# port and a Unix socket there), as the unprivileged `postgres` user when run as root (PostgreSQL refuses root),
# with PostgreSQL's durable defaults (fsync on). Logins: the socket without a password, TCP as depot with a
# random password. Installs Debian's `postgresql` when missing. Stopped (immediate) and removed on exit.
# Sets PG_DIR, PG_PORT, PG_PASSWORD, PG_BIN; `pg_database NAME` creates a database and prints its URI.
start_postgres() {
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
    echo "installing postgresql from Debian's packages" >&2
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
  fi
  local as=()
  if [ "$(id -u)" = 0 ]; then
    local owner=postgres; id postgres >/dev/null 2>&1 || owner=nobody
    as=(runuser -u "$owner" --)
  fi
  PG_DIR=$(mktemp -d /tmp/depot-bench-pg-XXXXXX)
  PG_PORT=$(free_port)
  PG_PASSWORD="bench-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  echo "$PG_PASSWORD" >"$PG_DIR/password"
  [ ${#as[@]} -gt 0 ] && chown -R "${as[2]}" "$PG_DIR"
  TEMP_PATHS+=("$PG_DIR")
  STOP_COMMANDS+=("${as[*]} $PG_BIN/pg_ctl -D $PG_DIR/data -m immediate -w stop")
  "${as[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U depot --pwfile="$PG_DIR/password" --auth-local=trust \
    --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 --no-instructions >"$OUT/postgres-initdb.log" 2>&1 \
    || { echo "initdb failed:" >&2; cat "$OUT/postgres-initdb.log" >&2; exit 1; }
  cat >>"$PG_DIR/data/postgresql.conf" <<CONF
port = $PG_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PG_DIR'
max_connections = 200
log_min_messages = warning
CONF
  "${as[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 60 start >/dev/null \
    || { echo "postgres did not start:" >&2; cat "$PG_DIR/log" >&2; exit 1; }
}

# pg_database NAME: creates the database NAME in the cluster of start_postgres and prints its --ledger URI (TCP).
pg_database() {
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_DIR" -p "$PG_PORT" -U depot -d postgres -c "CREATE DATABASE $1" >/dev/null
  echo "postgres://depot:$PG_PASSWORD@127.0.0.1:$PG_PORT/$1"
}

# postgres_pids: the cluster's processes (postmaster and its children), for CPU readings.
postgres_pids() {
  local main; main=$(head -n 1 "$PG_DIR/data/postmaster.pid")
  echo "$main" $(pgrep -P "$main")
}

# download_rate URL CLIENTS [curl args...]: "MiB/s errors MiB" of CLIENTS parallel clients, each downloading the
# file of $SIZE bytes again and again until $DOWNLOAD_SECONDS (default: $SECONDS_PER_ROUND, else 5) have passed
# (at least once): total good bytes / wall time, and the MiB moved. One 256 MiB download takes a tenth of a
# second on loopback, so a single one per round measured mostly curl's start and the scheduler. A download that
# is not a 200 of exactly $SIZE bytes counts as an error. DOWNLOAD_TAG names its files apart from another
# download_rate running at the same time.
download_rate() {
  local url="$1" clients="$2"; shift 2
  local seconds="${DOWNLOAD_SECONDS:-${SECONDS_PER_ROUND:-5}}"
  local pids=() start end i
  start=$(date +%s.%N)
  for i in $(seq 1 "$clients"); do
    (
      : >"$OUT/download${DOWNLOAD_TAG:-}.$i"
      until_ns=$(( $(date +%s%N) + seconds * 1000000000 ))
      while :; do
        curl -s -o /dev/null -w '%{http_code} %{size_download}\n' "$@" "$url" >>"$OUT/download${DOWNLOAD_TAG:-}.$i"
        [ "$(date +%s%N)" -ge "$until_ns" ] && break
      done
    ) &
    pids+=($!)
  done
  wait "${pids[@]}" || true
  end=$(date +%s.%N)
  cat $(seq -f "$OUT/download${DOWNLOAD_TAG:-}.%g" 1 "$clients") | python3 -c '
import sys
start, end, size = float(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
rows = [line.split() for line in sys.stdin if line.strip()]
good = sum(int(b) for s, b in rows if s == "200" and int(b) == size)
errors = sum(1 for s, b in rows if s != "200" or int(b) != size)
moved = sum(int(b) for s, b in rows)
print(f"{good / 1048576 / (end - start):.1f} {errors} {moved / 1048576:.1f}")' "$start" "$end" "$SIZE"
}

# raise_fd_limit: as many open files as the hard limit allows (the 1,000-connection tests).
raise_fd_limit() {
  ulimit -n "$(ulimit -Hn)" 2>/dev/null || ulimit -n 65536 2>/dev/null || true
}

# Peak resident set size of a process, in MB (VmHWM).
peak_rss_mb() {
  awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}

# Current resident set size of a process, in KB.
rss_kb() {
  awk '/VmRSS/ { print $2 }' "/proc/$1/status"
}

# CPU time (user + system) a process has used, in clock ticks (`getconf CLK_TCK` per second).
cpu_ticks() {
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# ratio A B: A/B with two decimals ("n/a" when B is zero).
ratio() {
  python3 -c 'import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f"{a / b:.2f}" if b else "n/a")' "$1" "$2"
}

# run_wrk URL CONNECTIONS SECONDS [wrk args...]: prints "rps p50_ms p99_ms non2xx".
# Extra args go before the URL (headers, -s script); WRK_SCRIPT_ARGS (words) go after it, behind `--`.
# The raw output goes to $WRK_TXT (default out/wrk.txt), so runs in parallel keep theirs apart.
# non2xx counts socket errors (connect, read, write, timeout) too.
run_wrk() {
  local url="$1" connections="$2" seconds="$3"; shift 3
  local threads=2 txt="${WRK_TXT:-$OUT/wrk.txt}"
  [ "$connections" -lt 2 ] && threads=1
  local script_args=()
  [ -n "${WRK_SCRIPT_ARGS:-}" ] && read -r -a script_args <<<"-- $WRK_SCRIPT_ARGS"
  wrk -t"$threads" -c"$connections" -d"${seconds}s" --timeout 10s --latency "$@" "$url" "${script_args[@]}" >"$txt" 2>&1 || true
  wrk_summary "$txt"
}

# wrk_summary FILE: "rps p50_ms p99_ms non2xx" of a wrk output file.
wrk_summary() {
  python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def ms(v):
    m = re.match(r"([\d.]+)(us|ms|s)", v)
    if not m: return float("nan")
    n, u = float(m.group(1)), m.group(2)
    return n / 1000 if u == "us" else n * 1000 if u == "s" else n
rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
p50 = re.search(r"\n\s+50%\s+(\S+)", text)
p99 = re.search(r"\n\s+99%\s+(\S+)", text)
errors = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
bad = (int(errors.group(1)) if errors else 0) + (sum(int(g) for g in sock.groups()) if sock else 0)
print(f"{float(rps.group(1)) if rps else 0:.0f} {ms(p50.group(1)) if p50 else float('nan'):.3f} {ms(p99.group(1)) if p99 else float('nan'):.3f} {bad}")
PY
}

# wrk_requests FILE: the number of requests a wrk run completed.
wrk_requests() {
  sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$1"
}

median() {
  python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f"{statistics.median(v):.3f}")' "$@"
}

# column_median VALUES COLUMN: the median of one column of ";"-separated rows of space-separated fields.
column_median() {
  median $(echo "$1" | tr ';' '\n' | awk -v c="$2" 'NF { print $c }')
}

# column_sum VALUES COLUMN: the sum of one column of ";"-separated rows.
column_sum() {
  echo "$1" | tr ';' '\n' | awk -v c="$2" 'NF { s += $c } END { print s + 0 }'
}

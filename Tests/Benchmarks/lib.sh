# Shared helpers for the benchmark scripts (sourced, not run).
# Everything runs on loopback; tools come from Debian's packages and are installed when missing.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${BENCH_OUT:-$ROOT/Tests/Benchmarks/out}"
mkdir -p "$OUT"
PIDS=()

cleanup() {
  for pid in "${PIDS[@]:-}"; do [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

need_tools() {
  local missing=()
  for tool in "$@"; do
    case "$tool" in
      nginx) command -v nginx >/dev/null || missing+=(nginx-light) ;;
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

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# start_depot DIR ARGS... : starts depot serve on a free port; sets DEPOT_PID and DEPOT_URL.
start_depot() {
  local log="$OUT/depot.log"
  "$DEPOT" serve --port 0 --access-log off "$@" >"$OUT/depot.stdout" 2>"$log" &
  DEPOT_PID=$!
  PIDS+=("$DEPOT_PID")
  for _ in $(seq 1 100); do
    if grep -q "listening on" "$OUT/depot.stdout" 2>/dev/null; then break; fi
    sleep 0.1
  done
  DEPOT_URL=$(sed -n 's/^listening on //p' "$OUT/depot.stdout")
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

# Peak resident set size of a process, in MB (VmHWM).
peak_rss_mb() {
  awk '/VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}

# Current resident set size of a process, in KB.
rss_kb() {
  awk '/VmRSS/ { print $2 }' "/proc/$1/status"
}

# run_wrk URL CONNECTIONS SECONDS [wrk header args...]: prints "rps p50_ms p99_ms".
run_wrk() {
  local url="$1" connections="$2" seconds="$3"; shift 3
  local threads=2
  [ "$connections" -lt 2 ] && threads=1
  wrk -t"$threads" -c"$connections" -d"${seconds}s" --latency "$@" "$url" >"$OUT/wrk.txt" 2>&1 || true
  python3 - "$OUT/wrk.txt" <<'PY'
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
sock = re.search(r"Socket errors: (.*)", text)
print(f"{float(rps.group(1)) if rps else 0:.0f} {ms(p50.group(1)) if p50 else float('nan'):.3f} {ms(p99.group(1)) if p99 else float('nan'):.3f} {errors.group(1) if errors else 0}")
PY
}

median() {
  python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f"{statistics.median(v):.3f}")' "$@"
}

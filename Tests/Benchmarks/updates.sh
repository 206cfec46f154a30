#!/usr/bin/env bash
# Pack updates benchmark (issue 15): bytes fetched to update a 64 MiB file of random bytes from version 1 to
# version 2 (8 scattered 4 KiB overwrites, a 1 MiB insertion at 40 %, a 256 KiB deletion at 70 %), in one run:
# Depot with content-defined chunks (default 256 KiB average), Depot with fixed 1 MiB chunks, a full download, and
# rsync --no-whole-file between the two versions over loopback (rsync daemon). Bytes are Depot's own count of
# pack-file body bytes sent (/metrics) and rsync's --stats. Also: the update's time, fresh full downloads of the
# content-chunked and the fixed-chunked version 2 (medians of alternating rounds) and the manifest's size.
# Targets: content ≤ 3× rsync's literal data and ≤ 8 % of the full download; fresh content ≥ 0.95× as fast as
# fixed; the manifest ≤ 0.5 % of the pack.
# Usage: Tests/Benchmarks/updates.sh [rounds]
source "$(dirname "$0")/lib.sh"
ROUNDS="${1:-3}"
need_tools rsync curl python3
build_release
build_bench

V1="$OUT/update-v1.bin"
V2="$OUT/update-v2.bin"
random_file "$V1" 64
python3 - "$V1" "$V2" <<'PY'
import os, random, sys
data = bytearray(open(sys.argv[1], "rb").read())
rng = random.Random(15)
size = len(data)
for i in range(8):                       # 8 scattered 4 KiB overwrites
    at = (i * 2 + 1) * size // 17
    data[at:at + 4096] = rng.randbytes(4096)
at = int(size * 0.40)                    # a 1 MiB insertion at 40 %
data[at:at] = rng.randbytes(1 << 20)
at = int(len(data) * 0.70)               # a 256 KiB deletion at 70 %
del data[at:at + (256 << 10)]
open(sys.argv[2], "wb").write(data)
PY

bench_tree updates-tree
WORK="$OUT/updates-work"
rm -rf "$WORK"; mkdir -p "$WORK/v1" "$WORK/v2"
TEMP_PATHS+=("$WORK")
cp "$V1" "$WORK/v1/level.bin"; cp "$V2" "$WORK/v2/level.bin"
publish_file "$TREE" upcontent "$WORK/v1/level.bin"
publish_file "$TREE" upfixed --chunking fixed "$WORK/v1/level.bin"
publish_file "$TREE" upsmall --chunk-size 65536 "$WORK/v1/level.bin"
STORE="$OUT/appstore-updates"
start_appstore "$STORE" 0 10 com.example.depot.upcontent,com.example.depot.upfixed,com.example.depot.upsmall
rm -rf "$OUT/updates-var"
start_depot --catalog "$TREE/catalog" --content "$TREE/content" --data "$OUT/updates-var" --token-secret "$TOKEN_SECRET" \
  --apple-verify-url "$APPSTORE_URL" --apple-sandbox-verify-url "$APPSTORE_SANDBOX_URL"
RECEIPT="$STORE/receipt.txt"
head -n 1 "$STORE/receipts.txt" >"$RECEIPT"

served() { curl -s "$DEPOT_URL/metrics" | sed -n 's/^depot_http_response_bytes_total{route="pack_file"} //p' | head -1; }
fetch() { "$DEPOT" fetch --server "$DEPOT_URL" --receipt "$RECEIPT" --pack "$1" --out "$2" >"$OUT/updates-fetch.stdout" 2>&1 \
  || { echo "depot fetch failed:" >&2; cat "$OUT/updates-fetch.stdout" >&2; exit 1; }; }

# Version 1 installed on the "device" for both packs; then version 2 published.
fetch upcontent "$WORK/device-content"
fetch upfixed "$WORK/device-fixed"
fetch upsmall "$WORK/device-small"
publish_file "$TREE" upcontent "$WORK/v2/level.bin"
publish_file "$TREE" upfixed --chunking fixed "$WORK/v2/level.bin"
publish_file "$TREE" upsmall --chunk-size 65536 "$WORK/v2/level.bin"
sleep 2.5   # the server sees a publish within 2 s

declare -A BYTES SECONDS_TAKEN
for pack in upcontent upfixed upsmall; do
  device="$WORK/device-${pack#up}"
  before=$(served); start=$EPOCHREALTIME
  fetch "$pack" "$device"
  end=$EPOCHREALTIME
  sleep 0.2; after=$(served)
  BYTES[$pack]=$((after - before))
  SECONDS_TAKEN[$pack]=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$start" "$end")
  grep -q "reused" "$OUT/updates-fetch.stdout" || { echo "$pack: not updated by delta" >&2; cat "$OUT/updates-fetch.stdout" >&2; exit 1; }
  cmp -s "$V2" "$device/level.bin" || { echo "$pack: the update wrote different bytes" >&2; exit 1; }
  echo "$pack: $(grep reused "$OUT/updates-fetch.stdout")" >&2
done
FULL=$(stat -c %s "$V2")

# rsync between the two versions over loopback: a daemon serving version 2, the client holding version 1.
RSYNC_PORT=$(free_port)
cat >"$WORK/rsyncd.conf" <<CONF
use chroot = false
pid file = $WORK/rsyncd.pid
[v2]
path = $WORK/v2
read only = true
CONF
rsync --daemon --no-detach --address 127.0.0.1 --port "$RSYNC_PORT" --config "$WORK/rsyncd.conf" &
PIDS+=($!)
for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/"$RSYNC_PORT") 2>/dev/null && break; sleep 0.1; done
mkdir -p "$WORK/rsync-device"; cp "$V1" "$WORK/rsync-device/level.bin"
rsync --no-whole-file --stats "rsync://127.0.0.1:$RSYNC_PORT/v2/level.bin" "$WORK/rsync-device/level.bin" >"$OUT/rsync-stats.txt"
cmp -s "$V2" "$WORK/rsync-device/level.bin" || { echo "rsync wrote different bytes" >&2; exit 1; }
read -r LITERAL SENT RECEIVED <<<"$(python3 - "$OUT/rsync-stats.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def number(label):
    return int(re.search(label + r": ([\d,]+)", text).group(1).replace(",", ""))
print(number("Literal data"), number("Total bytes sent"), number("Total bytes received"))
PY
)"

# Fresh full downloads of version 2, content-chunked against fixed-chunked, alternating.
CONTENT_TIMES=(); FIXED_TIMES=(); SMALL_TIMES=()
fresh() {
  rm -rf "$WORK/fresh"; mkdir -p "$WORK/fresh"; sync
  local start=$EPOCHREALTIME
  fetch "$1" "$WORK/fresh/$1"
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$start" "$EPOCHREALTIME"
}
# The three packs in a rotating order: each round starts with a different one.
for round in $(seq 1 "$ROUNDS"); do
  case $((round % 3)) in
    1) order=(upcontent upfixed upsmall) ;;
    2) order=(upfixed upsmall upcontent) ;;
    0) order=(upsmall upcontent upfixed) ;;
  esac
  for pack in "${order[@]}"; do
    t=$(fresh "$pack")
    case $pack in upcontent) CONTENT_TIMES+=("$t") ;; upfixed) FIXED_TIMES+=("$t") ;; upsmall) SMALL_TIMES+=("$t") ;; esac
  done
done
CONTENT_MEDIAN=$(median "${CONTENT_TIMES[@]}")
FIXED_MEDIAN=$(median "${FIXED_TIMES[@]}")
SMALL_MEDIAN=$(median "${SMALL_TIMES[@]}")
MANIFEST=$(stat -c %s "$TREE/content/upcontent/2/manifest.json")
SMALL_MANIFEST=$(stat -c %s "$TREE/content/upsmall/2/manifest.json")
CHUNKS=$(python3 -c 'import json, sys; print(sum(len(f["chunks"]) for f in json.load(open(sys.argv[1]))["files"]))' "$TREE/content/upcontent/2/manifest.json")

python3 - "${BYTES[upcontent]}" "${BYTES[upfixed]}" "$FULL" "$LITERAL" "$SENT" "$RECEIVED" "${SECONDS_TAKEN[upcontent]}" \
  "${SECONDS_TAKEN[upfixed]}" "$CONTENT_MEDIAN" "$FIXED_MEDIAN" "$MANIFEST" "$CHUNKS" "${CONTENT_TIMES[*]}" "${FIXED_TIMES[*]}" "${BYTES[upsmall]}" "${SECONDS_TAKEN[upsmall]}" "$SMALL_MANIFEST" "$SMALL_MEDIAN" "${SMALL_TIMES[*]}" <<'PY'
import sys
content, fixed, full, literal, sent, received = map(int, sys.argv[1:7])
t_content, t_fixed, fresh_content, fresh_fixed = map(float, sys.argv[7:11])
manifest, chunks = int(sys.argv[11]), int(sys.argv[12])
small, t_small, small_manifest = int(sys.argv[15]), float(sys.argv[16]), int(sys.argv[17])
fresh_small = float(sys.argv[18])
mib = lambda n: f"{n / 1048576:.2f} MiB"
print("| update 1 → 2 of a 64 MiB file | bytes fetched | of the full download | time |")
print("|---|---|---|---|")
print(f"| Depot, content chunks (256 KiB average) | {content:,} ({mib(content)}) | {100 * content / full:.2f} % | {t_content:.3f} s |")
print(f"| Depot, content chunks (--chunk-size 65536: 64 KiB average) | {small:,} ({mib(small)}) | {100 * small / full:.2f} % | {t_small:.3f} s |")
print(f"| Depot, fixed 1 MiB chunks | {fixed:,} ({mib(fixed)}) | {100 * fixed / full:.2f} % | {t_fixed:.3f} s |")
print(f"| full download | {full:,} ({mib(full)}) | 100 % | |")
print(f"| rsync --no-whole-file, literal data | {literal:,} ({mib(literal)}) | {100 * literal / full:.2f} % | |")
print(f"| rsync, all traffic (sent {sent:,} + received {received:,}) | {sent + received:,} ({mib(sent + received)}) | {100 * (sent + received) / full:.2f} % | |")
print()
print(f"content / rsync literal: {content / literal:.2f}x (target <= 3x); content / full: {100 * content / full:.2f} % (target <= 8 %)")
print(f"64 KiB average: {small / literal:.2f}x rsync's literal data, {100 * small / full:.2f} % of the full download; manifest {small_manifest:,} bytes = {100 * small_manifest / full:.3f} %")
print(f"fresh download of version 2: content {fresh_content:.3f} s, fixed {fresh_fixed:.3f} s (medians; rounds {sys.argv[13]} / {sys.argv[14]}): "
      f"content is {fresh_fixed / fresh_content:.2f}x as fast (target >= 0.95x)")
print(f"fresh download of version 2 at the 64 KiB average: {fresh_small:.3f} s (median; rounds {sys.argv[19]}): "
      f"{fresh_fixed / fresh_small:.2f}x as fast as fixed (target >= 0.95x)")
print(f"manifest: {manifest:,} bytes for {chunks} chunks = {100 * manifest / full:.3f} % of the pack (target <= 0.5 %)")
PY

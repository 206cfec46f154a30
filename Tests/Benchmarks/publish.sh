#!/usr/bin/env bash
# Publishing benchmark (issue 5): `depot publish` of a 1 GiB file (copy + hash in one pass + fsync) against
# `cp` of it plus `sha256sum` of it, in the same run, alternating; `sync FILE` after cp is timed on its own
# (publish fsyncs what it writes, cp does not). Target: publish <= 1.5x (cp + sha256sum).
# Max RSS of publish (/usr/bin/time -v) for the 1 GiB file and for a 64 MiB one: flat in the file size.
# Everything is written under out/ (the same volume as the source file).
# Usage: Tests/Benchmarks/publish.sh [rounds] [file-MiB] [small-file-MiB]
source "$(dirname "$0")/lib.sh"
ROUNDS="${1:-3}"
FILE_MIB="${2:-1024}"
SMALL_MIB="${3:-64}"
need_tools /usr/bin/time openssl
build_release

BIG="$OUT/publish-${FILE_MIB}m.bin"
SMALL="$OUT/publish-${SMALL_MIB}m.bin"
random_file "$BIG" "$FILE_MIB"
random_file "$SMALL" "$SMALL_MIB"
WORK="$OUT/publish-work"
rm -rf "$WORK"; mkdir -p "$WORK"
TEMP_PATHS+=("$WORK")

# elapsed COMMAND...: runs it, prints its wall-clock seconds.
elapsed() {
  local start=$EPOCHREALTIME
  "$@" >/dev/null
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$start" "$EPOCHREALTIME"
}

# publish_timed FILE [OPTIONS...]: sets TIMED to "seconds max_rss_kb cpu_seconds" of one `depot publish` into a fresh tree.
publish_timed() {
  local file="$1"; shift
  bench_tree publish-tree
  sync
  local start=$EPOCHREALTIME
  /usr/bin/time -v -o "$OUT/publish-time.txt" "$DEPOT" publish --catalog "$TREE/catalog" --content "$TREE/content" \
    --pack bigpublish --product com.example.depot.bigpublish --type non-consumable --title "Benchmark publish" "$@" "$file" >/dev/null
  local end=$EPOCHREALTIME
  TIMED=$(python3 - "$start" "$end" "$OUT/publish-time.txt" <<'PY'
import re, sys
text = open(sys.argv[3]).read()
rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text).group(1)
cpu = float(re.search(r"User time \(seconds\): ([\d.]+)", text).group(1)) + float(re.search(r"System time \(seconds\): ([\d.]+)", text).group(1))
print(f"{float(sys.argv[2]) - float(sys.argv[1]):.3f} {rss} {cpu:.2f}")
PY
)
  rm -rf "$TREE"
}

CP=(); SYNC=(); SHA=(); OPENSSL=(); PUBLISH=(); FIXED=(); RSS=(); CPU=()
for round in $(seq 1 "$ROUNDS"); do
  sync
  CP+=("$(elapsed cp "$BIG" "$WORK/copy.bin")")
  SYNC+=("$(elapsed sync "$WORK/copy.bin")")
  SHA+=("$(elapsed sha256sum "$BIG")")
  OPENSSL+=("$(elapsed openssl dgst -sha256 "$BIG")")
  rm -f "$WORK/copy.bin"
  publish_timed "$BIG"; read -r seconds rss cpu <<<"$TIMED"
  PUBLISH+=("$seconds"); RSS+=("$rss"); CPU+=("$cpu")
  publish_timed "$BIG" --chunking fixed; read -r seconds _ _ <<<"$TIMED"
  FIXED+=("$seconds")
done
publish_timed "$SMALL"; read -r SMALL_SECONDS SMALL_RSS SMALL_CPU <<<"$TIMED"

cp_s=$(median "${CP[@]}"); sync_s=$(median "${SYNC[@]}"); sha_s=$(median "${SHA[@]}"); pub_s=$(median "${PUBLISH[@]}")
ossl_s=$(median "${OPENSSL[@]}")
base=$(python3 -c "print($cp_s + $sha_s)"); base_sync=$(python3 -c "print($cp_s + $sync_s + $sha_s)")
mib() { python3 -c "print(f'{$FILE_MIB / $1:.0f}')"; }
printf "\n%-34s | %9s | %8s\n" "step (${FILE_MIB} MiB)" "seconds" "MiB/s"
printf "%-34s | %9.3f | %8s\n" "cp" "$cp_s" "$(mib "$cp_s")"
printf "%-34s | %9.3f | %8s\n" "sync of the copy (fsync)" "$sync_s" "$(mib "$sync_s")"
printf "%-34s | %9.3f | %8s\n" "sha256sum" "$sha_s" "$(mib "$sha_s")"
printf "%-34s | %9.3f | %8s\n" "openssl dgst -sha256 (libcrypto)" "$ossl_s" "$(mib "$ossl_s")"
printf "%-34s | %9.3f | %8s\n" "cp + sha256sum" "$base" "$(mib "$base")"
printf "%-34s | %9.3f | %8s\n" "cp + sync + sha256sum" "$base_sync" "$(mib "$base_sync")"
printf "%-34s | %9.3f | %8s\n" "depot publish (content chunks)" "$pub_s" "$(mib "$pub_s")"
fixed_s=$(median "${FIXED[@]}")
printf "%-34s | %9.3f | %8s\n" "depot publish --chunking fixed" "$fixed_s" "$(mib "$fixed_s")"
echo
echo "publish / (cp + sha256sum):        $(ratio "$pub_s" "$base")x (target <= 1.5x)"
echo "content chunks / fixed chunks:     $(ratio "$pub_s" "$fixed_s")x (the gear hash's cost)"
echo "publish / (cp + sync + sha256sum): $(ratio "$pub_s" "$base_sync")x"
echo "publish / (cp + openssl dgst):     $(ratio "$pub_s" "$(python3 -c "print($cp_s + $ossl_s)")")x (Debian's sha256sum is coreutils' own C code, not libcrypto)"
echo "publish CPU (user + sys): $(median "${CPU[@]}") s for ${FILE_MIB} MiB"
echo "publish max RSS: $(python3 -c "print(round($(median "${RSS[@]}") / 1024, 1))") MB for ${FILE_MIB} MiB, $(python3 -c "print(round($SMALL_RSS / 1024, 1))") MB for ${SMALL_MIB} MiB (${SMALL_SECONDS} s) — flat in the file size"
echo "medians of $ROUNDS alternating rounds; a global sync before each timed step"

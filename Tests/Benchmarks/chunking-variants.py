#!/usr/bin/env python3
"""Content-defined chunking variants on the pack-updates benchmark's data (issue 15), simulated.

Replays ContentChunker (Sources/DepotCore/Chunking) exactly -- the gear table of GearTable.swift, the 64-bit
gear hash h = (h << 1) + G[x], cut-point skipping of the first min = A/4 bytes, a strict mask of the highest
bits while the chunk is shorter than the normalization point, a loose one from there to max = 4A -- with its
masks (b / b-1 at A, b = round(log2 A)) and variants of it (FastCDC's level 2, b+2 / b-2, was used until
2026-12-02: on update-v1.bin of the run of 2026-12-01 23:10 this replays that run's 5,629,217 and 1,943,812 bytes
fetched exactly), on the bytes updates.sh uses (a 64 MiB file of random bytes; version 2 with 8 scattered 4 KiB overwrites,
a 1 MiB insertion at 40 % and a 256 KiB deletion at 70 %, the script's own edit code). For each variant it counts
the bytes an update fetches (version 2's chunks whose SHA-256 and length are not among version 1's), the chunk
count (the manifest's size) and the chunk-size distribution.

Usage: Tests/Benchmarks/chunking-variants.py [--seeds 1,2,3] [--file V1.bin] [--averages 262144,65536]
Needs numpy. Each seed's version 1 is numpy's default_rng(seed).bytes(64 MiB); --file adds a given version 1.
"""
import argparse
import hashlib
import random
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
GEAR_SOURCE = ROOT / "Sources/DepotCore/Chunking/GearTable.swift"
MASK64 = (1 << 64) - 1


def gear_table():
    text = GEAR_SOURCE.read_text()
    body = text[text.index("values: [UInt64] = ["):]
    values = [int(v, 16) for v in re.findall(r"0x([0-9a-f]{16})", body)]
    assert len(values) == 256, len(values)
    return values


GEAR = gear_table()
GEAR_NP = np.array(GEAR, dtype=np.uint64)


def version_two(v1: bytes) -> bytes:
    """updates.sh's edits, verbatim."""
    data = bytearray(v1)
    rng = random.Random(15)
    size = len(data)
    for i in range(8):
        at = (i * 2 + 1) * size // 17
        data[at:at + 4096] = rng.randbytes(4096)
    at = int(size * 0.40)
    data[at:at] = rng.randbytes(1 << 20)
    at = int(len(data) * 0.70)
    del data[at:at + (256 << 10)]
    return bytes(data)


class Candidates:
    """Positions i whose full 64-byte-window gear hash (h after byte i, when at least 64 bytes were hashed) has
    its `bits` highest bits zero, for every `bits` >= LOWEST."""

    LOWEST = 10

    def __init__(self, data: bytes):
        x = np.frombuffer(data, dtype=np.uint8)
        window = GEAR_NP[x]                      # W_1
        span = 1
        with np.errstate(over="ignore"):
            while span < 64:                     # W_2m(i) = W_m(i) + (W_m(i - m) << m)
                shifted = np.zeros_like(window)
                shifted[span:] = window[:-span] << np.uint64(span)
                window = window + shifted
                span *= 2
        threshold = np.uint64(1 << (64 - self.LOWEST))
        self.positions = np.nonzero(window < threshold)[0]
        self.hashes = window[self.positions]
        self.by_bits = {}

    def at(self, bits: int) -> np.ndarray:
        assert bits >= self.LOWEST
        if bits not in self.by_bits:
            self.by_bits[bits] = self.positions[self.hashes < np.uint64(1 << (64 - bits))]
        return self.by_bits[bits]


def first_at_or_after(array: np.ndarray, low: int, high: int):
    """The first value in [low, high] of a sorted array, or None."""
    k = np.searchsorted(array, low)
    if k < len(array) and array[k] <= high:
        return int(array[k])
    return None


def chunk_lengths(data: bytes, candidates: Candidates, average: int, strict_bits: int, loose_bits: int,
                  normal: int, minimum: int, maximum: int):
    """The chunker's lengths: like ContentChunker.boundary, with the strict test for chunk lengths (this byte
    included) below `normal` and the loose one from `normal` to `maximum`."""
    n = len(data)
    strict = candidates.at(strict_bits)
    loose = candidates.at(loose_bits)
    strict_mask = (MASK64 << (64 - strict_bits)) & MASK64
    loose_mask = (MASK64 << (64 - loose_bits)) & MASK64
    lengths = []
    s = 0
    while s < n:
        first = s + minimum                       # the first hashed byte
        end = None
        if first >= n:
            end = n
        else:
            # The first 63 hashed bytes: h has not seen a whole window yet, compute it exactly.
            h = 0
            for i in range(first, min(first + 63, n)):
                h = ((h << 1) + GEAR[data[i]]) & MASK64
                mask = strict_mask if i - s + 1 < normal else loose_mask
                if h & mask == 0:
                    end = i + 1
                    break
            if end is None:
                low = first + 63
                last = min(s + maximum, n) - 1
                strict_last = min(s + normal - 2, last)        # lengths below `normal`
                hit = first_at_or_after(strict, low, strict_last) if low <= strict_last else None
                if hit is None:
                    hit = first_at_or_after(loose, max(low, s + normal - 1), last)
                end = hit + 1 if hit is not None else min(s + maximum, n)
        lengths.append(end - s)
        s = end
    return lengths


def digests(data: bytes, lengths):
    view = memoryview(data)
    out, offset = [], 0
    for length in lengths:
        out.append((hashlib.sha256(view[offset:offset + length]).digest(), length))
        offset += length
    return out


def variants(average: int):
    floor = average.bit_length() - 1             # ContentChunker.roundedLog2: rounded in the log domain
    b = floor + 1 if average * average >= 1 << (2 * floor + 1) else floor
    return [
        ("NC level 2 (b+2 / b-2 at A), until 2026-12-02", b + 2, b - 2, average),
        ("NC level 1 (b+1 / b-1 at A)", b + 1, b - 1, average),
        ("no normalization (b / b)", b, b, average),
        ("NC level 3 (b+3 / b-3 at A)", b + 3, b - 3, average),
        ("NC level 1, mean-matched (b+1 / b-1 at 3A/4)", b + 1, b - 1, 3 * average // 4),
        ("b / b-2 at A", b, b - 2, average),
        ("b+1 / b-2 at A", b + 1, b - 2, average),
        ("b+2 / b-1 at A", b + 2, b - 1, average),
        ("b / b-1 at A: ContentChunker", b, b - 1, average),
        ("b / b-2 at 5A/4", b, b - 2, 5 * average // 4),
        ("b+1 / b-2 at 3A/4", b + 1, b - 2, 3 * average // 4),
    ]


def chosen(all_variants, wanted: str):
    names = [w for w in wanted.split(";") if w]
    return [v for v in all_variants if not names or any(name in v[0] for name in names)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", default="1,2,3,4,5")
    parser.add_argument("--file", action="append", default=[])
    parser.add_argument("--averages", default="262144,65536")
    parser.add_argument("--mib", type=int, default=64)
    parser.add_argument("--variants", default="", help="only the variants whose label contains one of these (;-separated)")
    args = parser.parse_args()
    inputs = [(f"seed {s}", None, int(s)) for s in args.seeds.split(",") if s]
    inputs += [(Path(f).name, f, None) for f in args.file]
    averages = [int(a) for a in args.averages.split(",")]
    rows = []
    for name, path, seed in inputs:
        v1 = Path(path).read_bytes() if path else np.random.default_rng(seed).bytes(args.mib << 20)
        v2 = version_two(v1)
        c1, c2 = Candidates(v1), Candidates(v2)
        for average in averages:
            for label, strict_bits, loose_bits, normal in chosen(variants(average), args.variants):
                args_ = (average, strict_bits, loose_bits, normal, average // 4, average * 4)
                l1 = chunk_lengths(v1, c1, *args_)
                l2 = chunk_lengths(v2, c2, *args_)
                old = set(digests(v1, l1))
                fetched = sum(length for digest, length in digests(v2, l2) if (digest, length) not in old)
                sizes = np.array(l2[:-1])
                row = dict(input=name, average=average, variant=label, fetched=fetched, full=len(v2),
                           chunks=len(l2), mean=float(sizes.mean()), p10=int(np.percentile(sizes, 10)),
                           median=int(np.median(sizes)), p90=int(np.percentile(sizes, 90)),
                           at_max=int((sizes == average * 4).sum()),
                           weighted=float((sizes.astype(np.float64) ** 2).sum() / sizes.sum()))
                rows.append(row)
                print(f"{name:>16} A={average >> 10:>3} KiB  {label:<46} fetched {fetched:>10,} "
                      f"({100 * fetched / len(v2):5.2f} %)  chunks {len(l2):>5}  mean {row['mean'] / 1024:6.1f} KiB  "
                      f"p10/50/90 {row['p10'] >> 10}/{row['median'] >> 10}/{row['p90'] >> 10} KiB  at max {row['at_max']}  "
                      f"size-weighted mean {row['weighted'] / 1024:6.1f} KiB", flush=True)
    print()
    print("| average | variant | fetched, % of the full download (per input) | median | chunks (median) | mean chunk |")
    print("|---|---|---|---|---|---|")
    for average in averages:
        for label, *_ in chosen(variants(average), args.variants):
            mine = [r for r in rows if r["average"] == average and r["variant"] == label]
            percents = [100 * r["fetched"] / r["full"] for r in mine]
            print(f"| {average >> 10} KiB | {label} | {', '.join(f'{p:.2f}' for p in percents)} | {np.median(percents):.2f} % "
                  f"| {int(np.median([r['chunks'] for r in mine]))} | {np.mean([r['mean'] for r in mine]) / 1024:.1f} KiB |")


if __name__ == "__main__":
    sys.exit(main())

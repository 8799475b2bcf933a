#!/usr/bin/env python3
"""Summarise criterion results: one row per bench with its median time per iteration and, for
benches with a byte throughput, MB/s (10^6 bytes per second).

    medians.py CRITERION_DIR [CRITERION_DIR ...]

Each CRITERION_DIR is a `target/criterion` directory (or a copy of one, e.g. one per round).
With several, the row shows the median over the rounds of each round's median, and the range.
"""

import json
import pathlib
import statistics
import sys


def load(root):
    rows = {}
    for bench in pathlib.Path(root).rglob("new/benchmark.json"):
        meta = json.loads(bench.read_text())
        estimates = json.loads((bench.parent / "estimates.json").read_text())
        throughput = (meta.get("throughput") or {}).get("Bytes")
        rows[meta["full_id"]] = (estimates["median"]["point_estimate"], throughput)
    return rows


def show_time(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.3g} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.3g} µs"
    return f"{ns:.3g} ns"


def main(dirs):
    rounds = [load(d) for d in dirs]
    ids = sorted(set().union(*rounds), key=lambda i: (i.split("/")[0], i))
    print("| bench | median | MB/s | range over rounds |" if len(rounds) > 1 else "| bench | median | MB/s |")
    print("|---|---:|---:|---:|" if len(rounds) > 1 else "|---|---:|---:|")
    for full_id in ids:
        runs = [r[full_id] for r in rounds if full_id in r]
        times = [t for t, _ in runs]
        median = statistics.median(times)
        nbytes = runs[0][1]
        rate = f"{nbytes / median * 1e3:,.0f}" if nbytes else ""
        row = f"| `{full_id}` | {show_time(median)} | {rate} |"
        if len(rounds) > 1:
            row += f" {show_time(min(times))} – {show_time(max(times))} |"
        print(row)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Compression and row-group size of the keys dataset, compared: the
dataset rdblens wrote, rewritten by DuckDB with each codec and row-group
size, and the size of each and the time DuckDB takes to run
examples/queries/namespace_memory.sql over it (best of 5, 2 threads).

    python3 -m pip install duckdb
    rdblens keys /tmp/fleet/corpus-300.rdb --format parquet -q -o /tmp/fleet/keys
    python3 benches/parquet_layouts.py /tmp/fleet/keys --workdir /tmp/fleet

Prints a Markdown table for docs/fleet.md.
"""
import argparse
import os
import time

import duckdb

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAYOUTS = [
    ("snappy", 32768),
    ("snappy", 131072),
    ("snappy", 524288),
    ("lz4_raw", 131072),
    ("zstd", 131072),
    ("uncompressed", 131072),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="a directory rdblens keys --format parquet -o wrote")
    parser.add_argument("--workdir", default="/tmp")
    args = parser.parse_args()
    con = duckdb.connect()
    con.execute("SET threads = 2")
    query = open(os.path.join(ROOT, "examples", "queries", "namespace_memory.sql")).read()
    print("| compression | row group rows | size | namespace_memory.sql |")
    print("|---|---:|---:|---:|")
    source = os.path.join(args.dataset, "**", "*.parquet")
    for codec, rows in LAYOUTS:
        path = os.path.join(args.workdir, f"layout-{codec}-{rows}.parquet")
        con.execute(
            f"COPY (SELECT * FROM read_parquet('{source}')) TO '{path}' "
            f"(FORMAT parquet, COMPRESSION {codec}, ROW_GROUP_SIZE {rows})"
        )
        con.execute(f"CREATE OR REPLACE VIEW rdblens_keys AS SELECT * FROM read_parquet('{path}')")
        con.execute(query).fetchall()
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            con.execute(query).fetchall()
            best = min(best, time.perf_counter() - start)
        print(f"| {codec} | {rows:,} | {os.path.getsize(path) / 1e6:.1f} MB | {best * 1000:.0f} ms |")
        os.remove(path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs rdblens' query pack (examples/queries/*.sql) with DuckDB.

    python3 -m pip install duckdb
    rdblens keys node-*.rdb --format parquet -o keys/        # a dataset
    python3 examples/duckdb/run_queries.py keys/              # every query, as tables
    python3 examples/duckdb/run_queries.py keys/ top_keys --json

The dataset is a directory written by `rdblens keys --format parquet -o
DIR` (several runs may add snapshots and shards to it), or anything
DuckDB's read_parquet takes, such as 's3://bucket/keys/**/*.parquet' once
the httpfs extension and credentials are set up. The queries read the view
`rdblens_keys`: every key, with the partition labels cluster, snapshot
and shard as text columns. docs/fleet.md says what each query answers.
"""

import argparse
import decimal
import json
import pathlib
import sys

import duckdb

QUERIES = pathlib.Path(__file__).resolve().parent.parent / "queries"


def quoted(text):
    return "'" + text.replace("'", "''") + "'"


def open_dataset(dataset):
    """A DuckDB connection with the view rdblens_keys over `dataset`."""
    source = dataset
    if "*" not in source and not source.endswith(".parquet"):
        source = source.rstrip("/") + "/**/*.parquet"
    con = duckdb.connect()
    # The labels stay text: a shard named 001 is not the number 1.
    con.execute(
        "CREATE VIEW rdblens_keys AS SELECT * FROM read_parquet("
        + quoted(source)
        + ", hive_partitioning = true,"
        + " hive_types = {'cluster': VARCHAR, 'snapshot': VARCHAR, 'shard': VARCHAR})"
    )
    return con


def run(con, name):
    """The rows of query `name` as dicts."""
    cursor = con.execute((QUERIES / f"{name}.sql").read_text())
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def plain(value):
    if isinstance(value, decimal.Decimal):
        return float(value)
    return str(value)


def main():
    names = sorted(p.stem for p in QUERIES.glob("*.sql"))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="dataset directory (or a read_parquet path or glob)")
    parser.add_argument("queries", nargs="*", help=f"queries to run (default: all): {', '.join(names)}")
    parser.add_argument("--json", action="store_true", help="one JSON object: query name to its rows")
    args = parser.parse_intermixed_args()
    for name in args.queries:
        if name not in names:
            parser.error(f"no query {name}.sql in {QUERIES}")
    con = open_dataset(args.dataset)
    results = {name: run(con, name) for name in (args.queries or names)}
    if args.json:
        json.dump(results, sys.stdout, default=plain, indent=1)
        print()
        return
    for name in results:
        print(f"== {name} ==")
        con.sql((QUERIES / f"{name}.sql").read_text()).show(max_rows=50, max_width=160)


if __name__ == "__main__":
    main()

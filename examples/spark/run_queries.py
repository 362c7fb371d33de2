#!/usr/bin/env python3
"""Runs rdblens' query pack (examples/queries/*.sql) with Spark SQL.

On a laptop (PySpark from PyPI and a Java 17+ runtime):

    python3 -m pip install pyspark
    python3 examples/spark/run_queries.py keys/ --master 'local[2]'

On a cluster, submit it with the query files beside it (docs/fleet.md has
the EMR, Dataproc and Databricks commands):

    spark-submit run_queries.py s3://bucket/keys/ --queries-dir ./queries

The dataset is the directory `rdblens keys --format parquet -o DIR` wrote
(local, s3://, gs://, abfss://: whatever the cluster's Hadoop reads). The
queries read the temporary view `rdblens_keys`: every key, with the
partition labels cluster, snapshot and shard as string columns. All the
queries run in one Spark session (one JVM start).
"""

import argparse
import decimal
import json
import pathlib
import sys

from pyspark.sql import SparkSession

HERE = pathlib.Path(__file__).resolve().parent


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="the dataset directory (a path or URL)")
    parser.add_argument("queries", nargs="*", help="queries to run (default: all)")
    parser.add_argument("--queries-dir", default=str(HERE.parent / "queries"), help="where the .sql files are")
    parser.add_argument("--master", help="Spark master (default: spark-submit's, or local[*])")
    parser.add_argument("--json", action="store_true", help="one JSON object: query name to its rows")
    args = parser.parse_args()

    queries_dir = pathlib.Path(args.queries_dir)
    names = args.queries or sorted(p.stem for p in queries_dir.glob("*.sql"))
    builder = (
        SparkSession.builder.appName("rdblens-query-pack")
        # The labels stay text (a shard named 001 is not the number 1),
        # times print in UTC, and small datasets need few shuffle tasks.
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    if args.master:
        builder = builder.master(args.master)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.read.parquet(args.dataset).createOrReplaceTempView("rdblens_keys")

    results = {}
    for name in names:
        frame = spark.sql((queries_dir / f"{name}.sql").read_text())
        if args.json:
            results[name] = [row.asDict() for row in frame.collect()]
        else:
            print(f"== {name} ==")
            frame.show(50, truncate=80)
    if args.json:
        plain = lambda v: float(v) if isinstance(v, decimal.Decimal) else str(v)
        json.dump(results, sys.stdout, default=plain, indent=1)
        print()
    spark.stop()


if __name__ == "__main__":
    main()

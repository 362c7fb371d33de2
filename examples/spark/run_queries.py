#!/usr/bin/env python3
"""Runs rdblens' query pack (examples/queries/*.sql) with Spark SQL.

On a laptop (PySpark from PyPI and a Java 17+ runtime):

    python3 -m pip install pyspark
    python3 examples/spark/run_queries.py keys/ --master 'local[2]'

On a cluster, with the dataset and the query files where the cluster
reads them (docs/fleet.md has the EMR, Dataproc and Databricks commands):

    spark-submit run_queries.py s3://bucket/keys/ --queries-dir s3://bucket/rdblens/queries

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


def query_texts(spark, queries_dir):
    """Query name to SQL text: from a local directory, or from a URL the
    cluster reads (s3://, gs://, abfss://, file://), through Spark."""
    if "://" not in queries_dir:
        return {p.stem: p.read_text() for p in pathlib.Path(queries_dir).glob("*.sql")}
    files = spark.sparkContext.wholeTextFiles(queries_dir.rstrip("/") + "/*.sql").collect()
    return {pathlib.PurePosixPath(path).stem: text for path, text in files}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", help="the dataset directory (a path or URL)")
    parser.add_argument("queries", nargs="*", help="queries to run (default: all)")
    parser.add_argument(
        "--queries-dir",
        default=str(HERE.parent / "queries"),
        help="where the .sql files are: a directory, or a URL Spark reads",
    )
    parser.add_argument("--master", help="Spark master (default: spark-submit's, or local[*])")
    parser.add_argument("--json", action="store_true", help="one JSON object: query name to its rows")
    args = parser.parse_intermixed_args()

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

    texts = query_texts(spark, args.queries_dir)
    results = {}
    for name in args.queries or sorted(texts):
        if name not in texts:
            sys.exit(f"no query {name}.sql in {args.queries_dir}")
        frame = spark.sql(texts[name])
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

"""Asks an exported dataset (spall-cli export) the fleet questions, in one engine:

    python3 fleet_engines.py ENGINE DATASET P90_SQL

ENGINE is `duckdb` or `spark` (Apache Spark through pyspark, master local[2], one JVM for
every query). Each table directory of DATASET becomes a view of its name, then both
questions run as the same SQL text in either engine. Prints JSON:
{"stats": [[trace, name, count, sum(dur), sum(self_dur)], ...], "p90": [[trace, p90, calls],
...], "seconds": {"start": s, "queries": s}}.
"""

import json
import sys
import time

STATS_SQL = """
SELECT trace, name, COUNT(*) AS calls, SUM(dur) AS total, SUM(self_dur) AS self_total
FROM slice
WHERE kind = 'span'
GROUP BY trace, name
ORDER BY trace, name
"""

TABLES = ["slice"]


def duckdb_engine(data):
    import duckdb

    con = duckdb.connect()
    for t in TABLES:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{data}/{t}/*.parquet')")
    return lambda sql: [list(r) for r in con.execute(sql).fetchall()], lambda: None


def spark_engine(data):
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("spall-fleet-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    for t in TABLES:
        spark.read.parquet(f"{data}/{t}").createOrReplaceTempView(t)
    return lambda sql: [list(r) for r in spark.sql(sql).collect()], spark.stop


def main():
    engine, data, p90_sql = sys.argv[1], sys.argv[2], sys.argv[3]
    t0 = time.time()
    query, stop = {"duckdb": duckdb_engine, "spark": spark_engine}[engine](data)
    t1 = time.time()
    out = {"stats": query(STATS_SQL), "p90": query(p90_sql)}
    t2 = time.time()
    stop()
    out["seconds"] = {"start": round(t1 - t0, 2), "queries": round(t2 - t1, 2)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()

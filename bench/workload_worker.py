"""One workload measurement in a fresh process: DuckDB set up as bench/worker.py does, the workload's setup
(views), then its queries timed together, each answer checked against the reference.

Usage: python -m bench.workload_worker @<spec.json>; prints one JSON line. With --probe '{"httpfs": path,
"httpfs2": path}' it prints the names of httpfs2's settings in that build instead. The spec (bench/workload_bench.py):
  the keys of bench/worker.py's connect() plus file_cache, setup and queries (SQL lists), expect (rows per
  query), access_log (versitygw's) and proxy_pid (toxiproxy's). Before the timer starts it notes the access
  log's size and toxiproxy's rchar, so the runner counts requests and bytes from there to the end of the process
  (read-ahead still in flight when the query returns included). Exits non-zero on a wrong answer.
"""

import json
import os
import resource
import sys
import time
from pathlib import Path

from bench.worker import connect
from bench.workloads import normalize_rows, same_rows
from rig.s3rig import read_bytes

PEAK_SUFFIX = "_peak"  # httpfs2_stats() columns that are maxima, not counters
# Columns about what the whole database shares (the IO pool, the read-ahead budget, the cost model): every row
# repeats them, so they are taken once, not summed.
DATABASE_WIDE = ("io_threads", "read_ahead_memory_", "model_")


def httpfs2_stats(con) -> dict:
    """Every numeric column of httpfs2_stats(): counters summed over its rows (one per wrapped filesystem), *_peak
    columns and the database-wide ones as their largest value."""
    cursor = con.execute("SELECT * FROM httpfs2_stats()")
    names = [d[0] for d in cursor.description]
    totals = {}
    for row in cursor.fetchall():
        for name, value in zip(names, row, strict=True):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                largest = name.endswith(PEAK_SUFFIX) or name.startswith(DATABASE_WIDE)
                combine = max if largest else (lambda a, b: a + b)
                totals[name] = combine(totals[name], value) if name in totals else value
    return totals


def probe(spec):
    con = connect(dict(spec, secret_sql="SELECT 1", threads=1, client="curl", settings={}))
    names = con.execute("SELECT name FROM duckdb_settings() WHERE name LIKE 'httpfs2%'").fetchall()
    print(json.dumps([n for (n,) in names]))


def main():
    if sys.argv[1] == "--probe":
        return probe(json.loads(sys.argv[2]))
    spec = json.loads(Path(sys.argv[1].removeprefix("@")).read_text())
    con = connect(spec)
    for sql in spec["setup"]:
        con.execute(sql)
    if spec["httpfs2"]:
        con.execute("CALL httpfs2_reset_stats()")
    marks = {"log_offset": os.path.getsize(spec["access_log"]), "proxy_rchar": read_bytes(spec["proxy_pid"])}
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    answers, query_s = [], []
    for sql in spec["queries"]:
        begin = time.perf_counter()
        answers.append(con.execute(sql).fetchall())
        query_s.append(time.perf_counter() - begin)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    for n, (got, expect) in enumerate(zip(answers, spec["expect"], strict=True), 1):
        got = normalize_rows(got)
        if not same_rows(got, expect):
            sys.exit(
                f"workload_worker: WRONG ANSWER to query {n} of {len(answers)}:\n"
                f"{spec['queries'][n - 1][:2000]}\ngot {got[:20]}\nexpected {expect[:20]}"
            )
    system = after.ru_stime - before.ru_stime
    out = dict(
        marks,
        wall_s=wall,
        client_cpu_s=after.ru_utime - before.ru_utime + system,
        client_sys_s=system,
        query_s=query_s,
        stats=httpfs2_stats(con) if spec["httpfs2"] else {},
    )
    print(json.dumps(out))


if __name__ == "__main__":
    main()

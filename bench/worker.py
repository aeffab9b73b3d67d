"""One measurement in a fresh process, so the CPU seconds it reports belong to this one query alone.

Usage: python -m bench.worker '<json spec>'; prints one JSON line. The spec (built by bench/runner.py):
  httpfs, httpfs2 (extension paths; httpfs2 null for native), secret_sql, threads, client, settings
  (httpfs2 setting -> value), workload ('blob' | 'parquet'), url, expect (the row the query must return).
Exits non-zero, naming both rows, when the result differs from the expected one.
"""

import json
import math
import resource
import sys
import time

import duckdb

# DuckDB's hash() reads every byte at ~5 GiB/s; sha256() would add ~5 s of serial CPU per 512 MiB after the
# read and swamp what is measured. The expected values come from DuckDB reading the same bytes locally.
BLOB_SQL = "SELECT hash(content), octet_length(content) FROM read_blob('{url}')"
PARQUET_SQL = "SELECT count(*), sum(i), sum(a), sum(b), sum(c), sum(length(s)) FROM read_parquet('{url}')"
STATS_SQL = (
    "SELECT sum(reads), sum(reads_split), sum(sub_reads), sum(sub_read_seconds), max(in_flight_peak) "
    "FROM httpfs2_stats()"
)
STATS_KEYS = ("reads", "reads_split", "sub_reads", "sub_read_s", "in_flight_peak")


def connect(spec):
    con = duckdb.connect(
        config={
            "allow_unsigned_extensions": "true",
            "autoload_known_extensions": "false",
            "autoinstall_known_extensions": "false",
        }
    )
    con.execute(f"LOAD '{spec['httpfs']}'")
    if spec["httpfs2"]:
        con.execute(f"LOAD '{spec['httpfs2']}'")
    # Repeat reads must come from the network, not from DuckDB's in-memory copy (unless a run asks for it).
    con.execute(f"SET enable_external_file_cache = {bool(spec.get('file_cache', False))}")
    con.execute(f"SET threads = {int(spec['threads'])}")
    con.execute(f"SET httpfs_client_implementation = '{spec['client']}'")
    con.execute(spec["secret_sql"])
    for name, value in spec["settings"].items():
        con.execute(f"SET {name} = {json.dumps(value)}")
    if spec["httpfs2"]:
        con.execute("CALL httpfs2_reset_stats()")
    return con


def same(got, expect) -> bool:
    # Integers (hash, length, counts) must match exactly; sums of doubles depend on the order of addition.
    return len(got) == len(expect) and all(
        g == e if isinstance(e, int) else math.isclose(g, e, rel_tol=1e-9) for g, e in zip(got, expect, strict=True)
    )


def main():
    spec = json.loads(sys.argv[1])
    con = connect(spec)
    sql = (BLOB_SQL if spec["workload"] == "blob" else PARQUET_SQL).format(url=spec["url"])
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    got = list(con.execute(sql).fetchone())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    if not same(got, spec["expect"]):
        sys.exit(f"worker: WRONG RESULT reading {spec['url']}: got {got}, expected {spec['expect']}")
    system = after.ru_stime - before.ru_stime
    out = {"wall_s": wall, "client_cpu_s": after.ru_utime - before.ru_utime + system, "client_sys_s": system}
    if spec["httpfs2"]:
        out.update(zip(STATS_KEYS, con.execute(STATS_SQL).fetchone(), strict=True))
    print(json.dumps(out))


if __name__ == "__main__":
    main()

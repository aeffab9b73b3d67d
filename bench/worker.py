"""The one bench child: a fresh DuckDB in a fresh process, so the CPU seconds it reports belong to its statements
alone and nothing is cached from an earlier run.

Usage: python -m bench.worker @<spec.json>   runs the spec's steps; prints one JSON line
       python -m bench.worker --settings @<spec.json>   prints the build's httpfs2 settings {name: default}
The spec (bench/child.py builds it; every key but load and steps optional):
  load      extension files, LOADed in order (httpfs2 last, so it wraps the filesystems already there)
  threads, client, file_cache   DuckDB threads, httpfs_client_implementation, enable_external_file_cache
            (each left at DuckDB's default when absent)
  secret_sql, settings {name: value}, setup [SQL]: run before any timer, neither timed nor counted
  steps     [{name, sql, expect}]: each timed on its own, every row fetched; expect (rows) is checked
  watch     {access_log, proxy_pid, server_pid}: marks the access log's size and toxiproxy's rchar before the first
            step, and per step the proxy's bytes and the proxy's and the server's CPU
  rotate    {signal, done, sql}: once the file `signal` exists (the bench's proxy makes it mid-query), runs sql (the
            secret with fresh credentials) on another connection of the database, then writes the file `done`: a
            user's other thread replacing a secret while a query runs (bench/pressure_bench.py)
  keep_going  a step's error or wrong answer is its `error` in the result, and the steps go on
Exits non-zero, naming both answers, when a step's rows differ from its expect (unless keep_going).
"""

import json
import os
import resource
import sys
import threading
import time
from pathlib import Path

import duckdb

from bench.answers import normalize_rows, same_rows

PEAK_SUFFIX = "_peak"  # httpfs2_stats() columns that are maxima, not counters
# Columns about what the whole database shares (the IO pool, the memory budgets, the cost model): every row
# repeats them, so they are taken once, not summed (the hedging deadline summed read 3x its value).
DATABASE_WIDE = (
    "io_threads",
    "read_ahead_memory_",
    "upload_memory_",
    "upload_streams",
    "model_",
    "streams",
    "hedge_deadline_ms",
)


def sql_literal(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def connect(spec: dict):
    """The one way the bench opens DuckDB: nothing autoloaded or downloaded, the spec's extensions by path."""
    con = duckdb.connect(
        config={
            "allow_unsigned_extensions": "true",
            "autoload_known_extensions": "false",
            "autoinstall_known_extensions": "false",
        }
    )
    for extension in spec["load"]:
        con.execute(f"LOAD '{extension}'")
    if "file_cache" in spec:
        con.execute(f"SET enable_external_file_cache = {sql_literal(bool(spec['file_cache']))}")
    if "threads" in spec:
        con.execute(f"SET threads = {int(spec['threads'])}")
    if "client" in spec:
        con.execute(f"SET httpfs_client_implementation = {sql_literal(spec['client'])}")
    if "secret_sql" in spec:
        con.execute(spec["secret_sql"])
    for name, value in spec.get("settings", {}).items():
        con.execute(f"SET {name} = {sql_literal(value)}")
    for sql in spec.get("setup", []):
        con.execute(sql)
    return con


def has_httpfs2(spec: dict) -> bool:
    return any(Path(e).name.startswith("httpfs2") for e in spec["load"])


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


def peak_rss_mib() -> float:
    line = next(line for line in open("/proc/self/status") if line.startswith("VmHWM"))
    return int(line.split()[1]) / 1024


class Watch:
    """Counters of the rig's processes that a spec's `watch` names: toxiproxy's rchar (the bytes that crossed the
    simulated network) and CPU, the server's CPU. Imports the rig only then: boto3 with it would add to the peak
    RSS that writes report."""

    def __init__(self, watch: dict):
        self.proxy, self.server = watch.get("proxy_pid"), watch.get("server_pid")
        if self.proxy or self.server:
            from rig.s3rig import _cpu_seconds, read_bytes

            self.cpu_seconds, self.read_bytes = _cpu_seconds, read_bytes

    def sample(self) -> dict:
        counters = {}
        if self.proxy:
            counters.update(fetched_bytes=self.read_bytes(self.proxy), proxy_cpu_s=self.cpu_seconds(self.proxy))
        if self.server:
            counters["server_cpu_s"] = self.cpu_seconds(self.server)
        return counters


def run_step(con, step: dict, watch: Watch, keep_going: bool = False) -> dict:
    counters = watch.sample()
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    error = None
    try:
        rows = con.execute(step["sql"]).fetchall()
    except duckdb.Error as failure:
        if not keep_going:
            raise
        rows, error = None, f"{type(failure).__name__}: {failure}"[:300]
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    counters = {name: value - counters[name] for name, value in watch.sample().items()}
    if "expect" in step and rows is not None:
        got = normalize_rows(rows)
        if not same_rows(got, step["expect"]):
            if not keep_going:
                sys.exit(
                    f"worker: WRONG ANSWER to {step['name']}:\n{step['sql'][:2000]}\n"
                    f"got {got[:20]}\nexpected {step['expect'][:20]}"
                )
            error = f"wrong answer: got {got[:3]}"[:300]
    system = after.ru_stime - before.ru_stime
    return dict(
        counters,
        error=error,
        name=step["name"],
        wall_s=wall,
        client_cpu_s=after.ru_utime - before.ru_utime + system,
        client_sys_s=system,
    )


def replace_secret_when_asked(con, rotate: dict, finished: threading.Event):
    """spec `rotate`: a thread that, once the file rotate["signal"] exists, runs rotate["sql"] on a cursor of con's
    database and writes rotate["done"]; it gives up when `finished` is set."""
    cursor = con.cursor()

    def replace():
        while not finished.wait(0.005):
            if os.path.exists(rotate["signal"]):
                cursor.execute(rotate["sql"])
                Path(rotate["done"]).write_text("replaced")
                return

    threading.Thread(target=replace, name="replace-secret", daemon=True).start()


def run(spec: dict) -> dict:
    con = connect(spec)
    finished = threading.Event()
    if "rotate" in spec:
        replace_secret_when_asked(con, spec["rotate"], finished)
    httpfs2 = has_httpfs2(spec)
    if httpfs2:
        con.execute("CALL httpfs2_reset_stats()")
    watch = Watch(spec.get("watch", {}))
    marks = {}
    if "access_log" in spec.get("watch", {}):  # the runner counts requests and bytes from here to the process end
        log = spec["watch"]["access_log"]
        marks = {"log_offset": os.path.getsize(log), "proxy_rchar": watch.sample()["fetched_bytes"]}
    steps = [run_step(con, step, watch, spec.get("keep_going", False)) for step in spec["steps"]]
    finished.set()
    return dict(
        marks,
        steps=steps,
        wall_s=sum(s["wall_s"] for s in steps),
        client_cpu_s=sum(s["client_cpu_s"] for s in steps),
        client_sys_s=sum(s["client_sys_s"] for s in steps),
        vm_hwm_mib=peak_rss_mib(),
        stats=httpfs2_stats(con) if httpfs2 else {},
    )


def build_settings(spec: dict) -> dict:
    con = connect(spec)
    return dict(con.execute("SELECT name, value FROM duckdb_settings() WHERE name LIKE 'httpfs2%'").fetchall())


def main():
    args = sys.argv[1:]
    action = build_settings if args[0] == "--settings" else run
    spec = json.loads(Path(args[-1].removeprefix("@")).read_text())
    print(json.dumps(action(spec)))


if __name__ == "__main__":
    main()

"""results.csv: the one schema of every suite, one row per measurement (or per timed step of the azure suite).

The point: suite (its name), kind (blob | workload | write | azure | table | peer: which report tables it feeds),
workload (or blob / parquet / ceiling data), step and rows (azure), profile (network profile) or path (direct | proxy)
with latency_ms and bandwidth_kbs, rig_connections (peers: plain | keep-alive | tls, rig/s3rig.py CONNECTIONS),
file_cache, client, duckdb_threads, engine (native | httpfs2 | local | curl-cli | crt | obstore), duckdb_version (the
DuckDB it ran in; empty: 1.5.5), config, ceiling_streams, condition (pressure: what the misbehaving proxy played,
bench/pressure_bench.py), repeat.
Measured: wall_s, bytes (the object's size, or what a peer row moved) and mib_s (2^20 bytes per second) for blob
sweeps; client_cpu_s and client_sys_s (the reading process: the DuckDB worker, or curl for ceiling rows),
server_cpu_s (versitygw or Azurite), proxy_cpu_s (toxiproxy); requests by S3 operation (versitygw's access log) and
fetched_bytes (toxiproxy's rchar); vm_hwm_mib (the worker's peak RSS); read_ahead_memory_peak and reads ..
in_flight_peak from httpfs2_stats(); connections and connections_peak (to the proxy: bench/connections.py);
proxy_requests and proxy_faults (pressure: what the client sent the misbehaving proxy, and the faults it played);
loadavg_1m. JSON: query_s (each query's seconds), settings (what was SET), h2_stats (every numeric httpfs2_stats()
column). error: a run that failed or answered wrong (only suites that go on after one, as pressure, record it).
"""

import csv
import json
from pathlib import Path

POINT = [
    "timestamp",
    "suite",
    "kind",
    "workload",
    "step",
    "rows",
    "profile",
    "rig_connections",
    "path",
    "latency_ms",
    "bandwidth_kbs",
    "file_cache",
    "client",
    "duckdb_threads",
    "engine",
    "duckdb_version",
    "config",
    "ceiling_streams",
    "condition",
    "repeat",
]
MEASURED = [
    "wall_s",
    "bytes",
    "mib_s",
    "client_cpu_s",
    "client_sys_s",
    "server_cpu_s",
    "proxy_cpu_s",
    "requests",
    "get_requests",
    "head_requests",
    "list_requests",
    "fetched_bytes",
    "vm_hwm_mib",
    "read_ahead_memory_peak",
    "reads",
    "reads_split",
    "sub_reads",
    "sub_read_s",
    "in_flight_peak",
    "connections",
    "connections_peak",
    "proxy_requests",
    "proxy_faults",
    "loadavg_1m",
]
COLUMNS = POINT + MEASURED + ["query_s", "settings", "h2_stats", "error"]
NUMERIC = {"rows", "latency_ms", "bandwidth_kbs", "duckdb_threads", "ceiling_streams", "repeat", *MEASURED}

# Files of the harnesses before the one runner: writes.csv (bench/write_bench.py) and results.jsonl (azure_matrix)
# had columns of their own, read under these names.
OLD_NAMES = {
    "threads": "duckdb_threads",
    "cpu_s": "client_cpu_s",
    "stats": "h2_stats",
    "seconds": "wall_s",
    "proxy_bytes": "fetched_bytes",
    "mode": "suite",
}


class Writer:
    """Appends and flushes row by row, so an aborted run keeps what it measured."""

    def __init__(self, path: Path):
        self.path = path
        self._file = path.open("w", newline="")
        self._csv = csv.DictWriter(self._file, fieldnames=COLUMNS, restval="")
        self._csv.writeheader()

    def write(self, row: dict):
        self._csv.writerow(row)
        self._file.flush()

    def close(self):
        self._file.close()


def _old_kind(row: dict) -> str:
    if "step" in row:
        return "azure"
    if "cpu_s" in row:
        return "write"
    return "workload" if row.get("profile") else "blob"


def _typed(row: dict) -> dict:
    kind = row.get("kind") or _old_kind(row)
    if kind == "azure" and "config" not in row:  # its old files named the configuration `path`
        row["config"] = row.pop("path")
    row = {OLD_NAMES.get(k, k): v for k, v in row.items()}
    typed = {k: (float(v) if k in NUMERIC and v not in ("", None) else v) for k, v in row.items()}
    return dict(typed, kind=kind)


def files(paths) -> list:
    """The results files named: a file as it is, a folder by the one it holds."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            path = next((path / n for n in ("results.csv", "writes.csv", "results.jsonl") if (path / n).exists()), path)
        found.append(path)
    return found


def load(paths) -> list:
    """Every row of the files named, numbers as floats, in today's column names, each with its kind."""
    rows = []
    for path in files(paths):
        with open(path, newline="") as handle:
            raw = (
                [json.loads(line) for line in handle if line.strip()]
                if path.suffix == ".jsonl"
                else csv.DictReader(handle)
            )
            rows += [_typed(dict(r)) for r in raw]
    return rows

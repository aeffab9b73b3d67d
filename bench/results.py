"""results.csv: one row per measurement. Throughput is MiB/s (2^20 bytes per second) throughout.

Columns beyond the obvious: mode is the bench mode, or 'ceiling' / 'parquet' for those rows; engine is
native | httpfs2 | curl-cli; client_cpu_s is the CPU of the reading process (the DuckDB worker, or curl
for ceiling rows) and client_sys_s its kernel share; server_cpu_s is versitygw's, proxy_cpu_s toxiproxy's;
h2_* are the httpfs2 settings (empty for native, which does not load httpfs2); reads .. in_flight_peak
come from httpfs2_stats().
"""

import csv
from pathlib import Path

from bench.modes import PREFIX

SETTING_COLUMNS = {
    "h2_enabled": "enabled",
    "h2_io_threads": "io_threads",
    "h2_fanout": "max_fanout",
    "h2_chunk_bytes": "chunk_size_bytes",
    "h2_min_bytes": "min_bytes",
    "h2_preset": "recommended_preset_enabled",
    "h2_dedicated": "dedicated_handles",
    "h2_auto": "auto_fanout_enabled",
    "h2_adaptive": "auto_fanout_overhead_adaptive_enabled",
    "h2_overhead_ms": "auto_fanout_overhead_ms",
}
MEASURED = [
    "repeat",
    "bytes",
    "wall_s",
    "mib_s",
    "client_cpu_s",
    "client_sys_s",
    "server_cpu_s",
    "proxy_cpu_s",
    "reads",
    "reads_split",
    "sub_reads",
    "sub_read_s",
    "in_flight_peak",
    "loadavg_1m",
]
COLUMNS = (
    [
        "timestamp",
        "mode",
        "engine",
        "config",
        "workload",
        "path",
        "latency_ms",
        "client",
        "duckdb_threads",
        "ceiling_streams",
    ]
    + list(SETTING_COLUMNS)
    + MEASURED
)
NUMERIC = {"latency_ms", "duckdb_threads", "ceiling_streams", *MEASURED}

# The workload modes (bench/workload_bench.py): one row per workload measurement. requests* come from
# versitygw's access log, fetched_bytes from toxiproxy's rchar (from the timer's start to the worker's end);
# query_s lists each query's seconds, h2_stats every numeric httpfs2_stats() column, settings what was SET.
WORKLOAD_MEASURED = [
    "repeat",
    "wall_s",
    "client_cpu_s",
    "client_sys_s",
    "server_cpu_s",
    "proxy_cpu_s",
    "requests",
    "get_requests",
    "head_requests",
    "list_requests",
    "fetched_bytes",
    "read_ahead_memory_peak",
    "loadavg_1m",
]
WORKLOAD_COLUMNS = (
    [
        "timestamp",
        "mode",
        "workload",
        "profile",
        "latency_ms",
        "bandwidth_kbs",
        "file_cache",
        "client",
        "duckdb_threads",
        "engine",
        "config",
    ]
    + WORKLOAD_MEASURED
    + ["query_s", "settings", "h2_stats"]
)
NUMERIC |= {"bandwidth_kbs", *WORKLOAD_MEASURED}


def setting_columns(settings: dict | None) -> dict:
    return {column: ("" if settings is None else settings[PREFIX + name]) for column, name in SETTING_COLUMNS.items()}


class Writer:
    """Appends and flushes row by row, so an aborted run keeps what it measured."""

    def __init__(self, path: Path, columns=COLUMNS):
        self.path = path
        self._file = path.open("w", newline="")
        self._csv = csv.DictWriter(self._file, fieldnames=columns, restval="")
        self._csv.writeheader()

    def write(self, row: dict):
        self._csv.writerow(row)
        self._file.flush()

    def close(self):
        self._file.close()


def load(paths) -> list:
    rows = []
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                rows.append({k: (float(v) if k in NUMERIC and v != "" else v) for k, v in row.items()})
    return rows

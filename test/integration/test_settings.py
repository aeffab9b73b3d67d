"""The settings: names, defaults, descriptions and types as the README gives; bad values rejected clearly."""

import duckdb
import pytest

SETTINGS = {
    "httpfs2_parallel_read_enabled": ("false", "BOOLEAN", "Enable parallel read splitting for remote files"),
    "httpfs2_parallel_read_io_threads": ("16", "BIGINT", "IO worker pool size (separate from DuckDB threads)"),
    "httpfs2_parallel_read_chunk_size_bytes": ("16777216", "BIGINT", "Target chunk size per sub-read"),
    "httpfs2_parallel_read_max_fanout": ("4", "BIGINT", "Max parallel sub-reads per Read() call"),
    "httpfs2_parallel_read_min_bytes": ("2097152", "BIGINT", "Minimum read size before splitting kicks in"),
    "httpfs2_parallel_read_recommended_preset_enabled": (
        "false",
        "BOOLEAN",
        "Override to safe defaults (fanout=2, chunk=16MiB)",
    ),
    "httpfs2_parallel_read_dedicated_handles": (
        "false",
        "BOOLEAN",
        "Open extra file handles per remote file to reduce httpfs contention",
    ),
    "httpfs2_parallel_read_auto_fanout_enabled": ("false", "BOOLEAN", "Use S3 cost model to choose fanout per read"),
    "httpfs2_parallel_read_auto_fanout_overhead_ms": (
        "500",
        "BIGINT",
        "Penalty (ms) per extra sub-request in auto-fanout",
    ),
    "httpfs2_parallel_read_auto_fanout_overhead_adaptive_enabled": (
        "false",
        "BOOLEAN",
        "Learn overhead from observed timings (EWMA)",
    ),
    "httpfs2_read_ahead_enabled": (
        "true",
        "BOOLEAN",
        "Fetch the ranges a scan will read next (parquet column chunks of the next row groups, the next window of a "
        "sequential read, footers of the next files of a glob) before it asks; only when "
        "httpfs2_parallel_read_enabled is on",
    ),
    "httpfs2_read_ahead_memory_limit_bytes": (
        "268435456",
        "BIGINT",
        "Memory budget for all read-ahead of the database; never exceeded: what does not fit is not fetched ahead",
    ),
    "httpfs2_parallel_read_min_latency_ms": (
        "5",
        "BIGINT",
        "Read ahead, and split reads smaller than chunk_size_bytes, only where the first-byte latency the cost model "
        "measured is at least this many ms: below it (a LAN store) a request costs the client more CPU than it waits; "
        "0 always does",
    ),
    "httpfs2_write_enabled": (
        "true",
        "BOOLEAN",
        "Write s3:// and az:// files with httpfs2's uploader: parts of write_part_size_bytes sent in parallel on the "
        "IO pool as they fill, the object complete when the file closes or left as it was; only when "
        "httpfs2_parallel_read_enabled is on",
    ),
    "httpfs2_write_part_size_bytes": (
        "16777216",
        "BIGINT",
        "Size of every part of an upload but the last, at most: files written at once share the memory budget (S3 "
        "wants at least 5 MiB); an object up to this size is one PUT",
    ),
    "httpfs2_write_memory_limit_bytes": (
        "268435456",
        "BIGINT",
        "Memory for the part buffers of all uploads of the database; never exceeded: a write waits for parts to be "
        "acknowledged, and a part it cannot hold goes on in a temporary file",
    ),
}

RANGES = {
    "httpfs2_parallel_read_io_threads": (1, 256),
    "httpfs2_parallel_read_chunk_size_bytes": (65536, 1 << 30),
    "httpfs2_parallel_read_max_fanout": (1, 64),
    "httpfs2_parallel_read_min_bytes": (65536, 1 << 40),
    "httpfs2_parallel_read_auto_fanout_overhead_ms": (0, 60000),
    "httpfs2_read_ahead_memory_limit_bytes": (1 << 20, 1 << 40),
    "httpfs2_parallel_read_min_latency_ms": (0, 60000),
    "httpfs2_write_part_size_bytes": (5 << 20, 1 << 30),
    "httpfs2_write_memory_limit_bytes": (16 << 20, 1 << 40),
}


def test_settings_are_listed_with_defaults_types_and_descriptions(con):
    rows = con.execute(
        "SELECT name, value, input_type, description FROM duckdb_settings() WHERE name LIKE 'httpfs2_%'"
    ).fetchall()
    assert {name: (value, kind, description) for name, value, kind, description in rows} == SETTINGS


@pytest.mark.parametrize("name", sorted(RANGES))
def test_integer_settings_round_trip_and_reject_out_of_range(con, name):
    low, high = RANGES[name]
    for good in (low, high):
        con.execute(f"SET {name} = {good}")
        assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] == good
    for bad in (low - 1, high + 1, -1):
        with pytest.raises(duckdb.InvalidInputException) as error:
            con.execute(f"SET {name} = {bad}")
        assert name in str(error.value)
        assert f"between {low} and {high}" in str(error.value)
    con.execute(f"RESET {name}")
    assert str(con.execute(f"SELECT current_setting('{name}')").fetchone()[0]) == SETTINGS[name][0]


def test_rejected_value_leaves_the_previous_one(con):
    con.execute("SET httpfs2_parallel_read_max_fanout = 8")
    with pytest.raises(duckdb.InvalidInputException):
        con.execute("SET httpfs2_parallel_read_max_fanout = 0")
    assert con.execute("SELECT current_setting('httpfs2_parallel_read_max_fanout')").fetchone()[0] == 8


def test_null_and_non_numeric_values_are_rejected(con):
    with pytest.raises(duckdb.Error, match="httpfs2_parallel_read_io_threads"):
        con.execute("SET httpfs2_parallel_read_io_threads = NULL")
    with pytest.raises(duckdb.Error):
        con.execute("SET httpfs2_parallel_read_chunk_size_bytes = 'lots'")


def test_booleans_round_trip(con):
    for name, (_, kind, _) in SETTINGS.items():
        if kind != "BOOLEAN":
            continue
        con.execute(f"SET {name} = true")
        assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] is True
        con.execute(f"RESET {name}")


def test_io_threads_resizes_the_pool(con):
    con.execute("SET GLOBAL httpfs2_parallel_read_io_threads = 3")
    assert con.execute("SELECT DISTINCT io_threads FROM httpfs2_stats()").fetchall() == [(3,)]

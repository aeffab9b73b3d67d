"""Helpers the integration tests share (fixtures live in conftest.py)."""

import hashlib
import time

import duckdb
import pytest

from rig.s3rig import count_requests

# --- the host: the one place the tests know which DuckDB they run in ---

# The DuckDB of the Python running the tests: 1.5.5 (.venv/, with the official httpfs) or 2.0.1 (.venv-duckdb-2.0.1/,
# with httpfs 2a6481d built from source, scripts/build_host_httpfs.sh).
HOST_VERSION = tuple(int(part) for part in duckdb.__version__.split(".")[:3])
DUCKDB_2 = HOST_VERSION >= (2, 0, 0)
# DuckDB 2.0 cuts a remote read larger than this into reads of this size of its own (async, side by side), so
# httpfs2 sees reads of at most this size where 1.5 hands it the whole read.
HOST_READ_CUT = 2 << 20 if DUCKDB_2 else None
# Where DuckDB 2.0 keeps at least as many of those pieces in flight (async_threads) as a split would start streams,
# httpfs2 leaves each piece whole (SplitPolicy::HostReadsAsWide: a split would double its requests for no stream
# more). Tests of httpfs2's split reads append this to their settings: the host keeps one piece in flight, and its
# pieces reach httpfs2 to be split as reads do in 1.5.
SPLIT_HOST_PIECES = "; SET async_threads = 1" if DUCKDB_2 else ""


def split_host_pieces(con):
    """SPLIT_HOST_PIECES on its own."""
    if SPLIT_HOST_PIECES:
        con.execute(SPLIT_HOST_PIECES.removeprefix("; "))


def host_read_sizes(size: int) -> set:
    """The sizes of the Reads the host's DuckDB makes of one read of `size` bytes (read_blob's)."""
    if HOST_READ_CUT is None or size <= HOST_READ_CUT:
        return {size}
    return {HOST_READ_CUT, size % HOST_READ_CUT or HOST_READ_CUT}


class NativeHttpfs:
    """What the host's httpfs alone (no httpfs2) does where the tests check it, per version. 1.5.5's official httpfs
    is the reference of those tests; httpfs 2a6481d on DuckDB 2.0.1 differs as follows (seen on 2026-11-27)."""

    # A server that ignores Range: 1.5.5 falls back to a full download, after one whole body it did not ask for;
    # 2a6481d fails the read on s3:// with "Content-Length from server mismatches requested range" (its S3 requests
    # throw where its fallback looks for an answer), and on http(s):// falls back after a whole body per read of
    # DuckDB 2.0's, which reads side by side (9-14 whole bodies of a 4 MiB object seen).
    FEW_FULL_BODIES_ON_IGNORED_RANGES = not DUCKDB_2

    @staticmethod
    def falls_back_on_ignored_ranges(scheme: str) -> bool:
        return scheme != "s3" or not DUCKDB_2

    # Range answers of other bytes than asked whose length is the one asked (a shifted range, a range-blind cache's
    # replay), and an object without ETag replaced mid-scan: 1.5.5 gives right bytes or an error naming the file;
    # 2a6481d may take them as they come (wrong bytes without an error) or fail without naming the file.
    RIGHT_OR_NAMES_THE_FILE_ON_WRONG_ANSWERS = not DUCKDB_2
    # The headers of every request in DuckDB's HTTP log: 1.5 logs httpfs's signatures as sent (httpfs2 writes its own
    # as REDACTED); 2.0 redacts them itself ("redacted"), httpfs2's as well, so the log no longer tells whose a
    # request was.
    LOG_TELLS_HTTPFS2_APART = not DUCKDB_2


def needs_registry_package(what: str):
    """A skip, in a DuckDB 2.0 host only, of a test that needs `what` (a package no registry serves for 2.0)."""
    return pytest.mark.skipif(DUCKDB_2, reason=f"no registry serves {what} for DuckDB {duckdb.__version__}")


def logged_requests(con) -> list:
    """DuckDB's HTTP log since logging was enabled, as (type, range header or 'None', httpfs2's) triples: httpfs2's
    own requests carry its REDACTED signature (NativeHttpfs.LOG_TELLS_HTTPFS2_APART); where the log cannot tell, the
    third is None."""
    rows = con.execute("SELECT request.type, request.headers FROM duckdb_logs_parsed('HTTP')").fetchall()
    result = []
    for kind, headers in rows:
        lowered = {name.lower(): value for name, value in headers.items()}
        ours = lowered.get("authorization") == "REDACTED" if NativeHttpfs.LOG_TELLS_HTTPFS2_APART else None
        result.append((kind, str(lowered.get("range")), ours))
    return result


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def blob_sha(con, url: str) -> str:
    """The sha256 of the whole object as DuckDB reads it (read_blob: one sequential Read)."""
    return con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchone()[0]


def stats(con, filesystem: str = "S3FileSystem") -> dict:
    """httpfs2_stats() of one wrapped filesystem, by column name."""
    cursor = con.execute("SELECT * FROM httpfs2_stats() WHERE filesystem = ?", [filesystem])
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    assert row is not None, f"httpfs2_stats() has no row for {filesystem}: that filesystem was not wrapped"
    return dict(zip(names, row, strict=True))


def _logged_from(rig, run_query) -> int:
    """Runs `run_query`; where versitygw's access log stood before it (httpfs2's own range GETs are not in DuckDB's
    HTTP log: it would record their signatures)."""
    log = rig.access_log_path
    offset = log.stat().st_size if log.exists() else 0
    run_query()
    time.sleep(0.2)  # the log is written after the answer
    return offset


def server_requests(rig, run_query) -> dict:
    """The S3 operations versitygw served while `run_query` ran, from its access log."""
    return count_requests(rig.access_log_path, _logged_from(rig, run_query))


def gets_by_key(rig, run_query) -> dict:
    """The keys versitygw answered GetObject for while `run_query` ran, with how often (its access log)."""
    offset = _logged_from(rig, run_query)
    counts = {}
    with open(rig.access_log_path, "rb") as handle:
        handle.seek(offset)
        for line in handle.read().decode(errors="replace").splitlines():
            tokens = line.split(" ")
            if "s3_GetObject" in tokens:
                key = tokens[tokens.index("s3_GetObject") + 1]
                counts[key] = counts.get(key, 0) + 1
    return counts


def show_the_model_a_lan(con, request, tries: int = 10):
    """Calls `request` (a request to the rig at 0 ms) until the cost model's first-byte latency is under 5 ms, at
    most `tries` times: the model starts from the first open's round trip, which pays for a new connection and, on a
    loaded machine (CI, AddressSanitizer), can take several times the 1-4 ms of loopback. Each call adds a round
    trip to the model's average."""
    for _ in range(tries):
        request()
        latency = stats(con)["model_first_byte_latency_ms"]
        if latency is not None and latency < 5:
            return


def enable(con, read_ahead=True, min_latency_ms=0):
    """Turns httpfs2's parallel reads on (with or without read-ahead) and zeroes its stats. Read-ahead runs whatever
    the cost model measured unless `min_latency_ms` is given (None: the default): the rig answers in about a
    millisecond, where the default (5 ms) turns it off, and the tests of what read-ahead does must see it do it."""
    gate = (
        "RESET httpfs2_parallel_read_min_latency_ms"
        if min_latency_ms is None
        else f"SET httpfs2_parallel_read_min_latency_ms = {min_latency_ms}"
    )
    con.execute(f"SET httpfs2_parallel_read_enabled = true; SET httpfs2_read_ahead_enabled = {read_ahead}; {gate}")
    con.execute("CALL httpfs2_reset_stats()")


def answer_equals_native(con, native_con, sql, threads, before_httpfs2=None) -> dict:
    """Runs `sql` at `threads` natively, then (after calling `before_httpfs2`, when given) with httpfs2's read-ahead;
    checks the answers are equal and returns httpfs2's stats of that run."""
    for connection in (con, native_con):
        connection.execute(f"SET threads = {threads}")
    expected = native_con.execute(sql).fetchall()
    if before_httpfs2 is not None:
        before_httpfs2()
    enable(con)
    assert con.execute(sql).fetchall() == expected
    return stats(con)


def uncached(connection):
    """For a fixture: yields `connection` with DuckDB's external file cache off, so every read reaches the server,
    and closes it afterwards."""
    connection.execute("SET enable_external_file_cache = false")
    yield connection
    connection.close()

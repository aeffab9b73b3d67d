"""Reads through the wrapper return the object's exact bytes; writes, globs, errors and the cache still work."""

import duckdb
import pytest

from helpers import DUCKDB_2, HOST_READ_CUT, blob_sha, enable, server_requests, sha256, stats


@pytest.mark.parametrize("enabled", [False, True])
def test_whole_s3_object_is_byte_exact(con, rig, big_object, enabled):
    key, data = big_object
    con.execute(f"SET httpfs2_parallel_read_enabled = {enabled}")
    assert blob_sha(con, rig.url(key)) == sha256(data)
    counters = stats(con)
    if HOST_READ_CUT:
        # DuckDB 2.0 cuts read_blob's read into reads of 2 MiB of its own, side by side: they all reach httpfs2 as such.
        assert counters["reads"] >= -(-len(data) // HOST_READ_CUT), counters
    else:
        # read_blob reads the 24 MiB object in one sequential Read call
        assert counters["reads_split"] == (1 if enabled else 0)
    assert counters["errors"] == 0


@pytest.mark.parametrize("enabled", [False, True])
def test_whole_http_object_is_byte_exact(con, http_dir, big_object, enabled):
    con.execute(f"SET httpfs2_parallel_read_enabled = {enabled}")
    assert blob_sha(con, f"{http_dir}/big.bin") == sha256(big_object[1])
    counters = stats(con, "HTTPFileSystem")
    if HOST_READ_CUT:
        # DuckDB 2.0's reads of 2 MiB (see above).
        assert counters["reads"] >= -(-len(big_object[1]) // HOST_READ_CUT), counters
    else:
        assert (counters["reads_split"] > 0) == enabled


@pytest.mark.parametrize("url_kind", ["s3", "http"])
def test_ranged_reads_are_byte_exact(con, rig, http_dir, big_object, url_kind):
    key, data = big_object
    url = rig.url(key) if url_kind == "s3" else f"{http_dir}/big.bin"
    con.execute("SET httpfs2_parallel_read_enabled = true")
    ranges = [
        (0, 1),
        (1, 3 << 20),
        (5 << 20, 9 << 20),
        (len(data) - (4 << 20), 4 << 20),
        (len(data) - 1, 1),
        (777, 2 << 20),
    ]
    for offset, length in ranges:
        got = con.execute("SELECT sha256(httpfs2_read_range(?, ?, ?))", [url, offset, length]).fetchone()[0]
        assert got == sha256(data[offset : offset + length]), (offset, length)


def error_of(connection, sql: str) -> tuple:
    with pytest.raises(duckdb.Error) as error:
        connection.execute(sql)
    return type(error.value), str(error.value)


@pytest.mark.parametrize("read_ahead", [False, True], ids=["split", "read_ahead"])
@pytest.mark.parametrize("cut", [100_000, 262_144], ids=["read_runs_past_end", "read_starts_at_end"])
def test_read_past_end_fails_like_httpfs(con, native_con, rig, tmp_path, cut, read_ahead):
    """A database file cut short, as an interrupted upload leaves it: reading its table reads the last 256 KiB
    block past the end of the object. httpfs2 passes such a read through whole, so the error is httpfs's own."""
    path = tmp_path / "cut.duckdb"
    writer = duckdb.connect(str(path))
    writer.execute("CREATE TABLE t AS SELECT i, md5(i::VARCHAR) AS s FROM range(100000) r(i)")
    writer.close()
    key = f"truncated/{cut}.duckdb"
    rig.put_object(key, path.read_bytes()[:-cut])
    # GLOBAL: an attached database opens its file without the session's settings. 64 KiB pieces: the block reads
    # that stay inside the object are split. One thread: both connections make the same reads in the same order.
    settings = {
        "parallel_read_enabled": True,
        "parallel_read_min_bytes": 65536,
        "parallel_read_chunk_size_bytes": 65536,
    }
    # Read-ahead whatever the cost model measured: the rig answers in about a millisecond, where by default it is off.
    for name, value in {**settings, "read_ahead_enabled": read_ahead, "parallel_read_min_latency_ms": 0}.items():
        con.execute(f"SET GLOBAL httpfs2_{name} = {value}")
    for connection in (con, native_con):
        connection.execute("SET threads = 1")
    sql = f"ATTACH '{rig.url(key)}' AS truncated (READ_ONLY); SELECT count(*), sum(hash(s)) FROM truncated.t"
    native = error_of(native_con, sql)
    wrapped = error_of(con, sql)
    assert wrapped == native
    assert "httpfs2" not in wrapped[1]
    # The reads inside the object took httpfs2's own path; only the one past the end was passed through. DuckDB 2.0
    # reads the file's header and then the block past the end, too few reads in a row for read-ahead to start: split.
    assert stats(con)["read_ahead_requests" if read_ahead and not DUCKDB_2 else "reads_split"] > 0


def test_copy_parquet_and_csv_round_trip(con, rig):
    con.execute("SET httpfs2_parallel_read_enabled = true")
    con.execute("CREATE TABLE t AS SELECT i, i * 0.5 AS d, 'row-' || i AS s FROM range(200000) r(i)")
    expected = con.execute("SELECT sum(i), sum(d), count(DISTINCT s) FROM t").fetchone()
    for fmt in ("parquet", "csv"):
        url = rig.url(f"copy/t.{fmt}")
        con.execute(f"COPY t TO '{url}' (FORMAT {fmt})")
        reader = "read_parquet" if fmt == "parquet" else "read_csv"
        got = con.execute(f"SELECT sum(i), sum(d), count(DISTINCT s) FROM {reader}('{url}')").fetchone()
        assert got == expected, fmt
        assert con.execute(f"SELECT * FROM {reader}('{url}') EXCEPT SELECT * FROM t").fetchall() == []
    assert stats(con)["writes"] > 0


def test_glob_over_many_objects(con, rig, objects):
    expected = {}
    for i in range(30):
        expected[rig.url(f"glob/part-{i:02d}.bin")] = sha256(objects.put(f"glob/part-{i:02d}.bin", 1000 + i))
    rows = con.execute("SELECT filename, sha256(content) FROM read_blob(?)", [rig.url("glob/*.bin")]).fetchall()
    assert dict(rows) == expected


@pytest.mark.parametrize("threads", [1, 4])
def test_unsplit_reads_are_checked_gets_that_ask_what_httpfs_asks(con, native_con, rig, threads):
    """Every read httpfs2 neither splits nor serves from read-ahead goes as its own checked range GET, not httpfs's
    (which checks an ETag only where the answer has one, is not hedged and keeps the credentials it began with), also
    once the store has proved it serves ranges; a buffered handle's reads (a CSV's) share one window, as httpfs's
    handle's share its buffer: the answer is the file's, with the requests httpfs alone makes."""
    rows = 150_000
    key = f"csv/unsplit-{threads}.csv"
    rig.put_object(key, "".join(f"{i},{i * 7919 % 100003},row-{i:08d}\n" for i in range(rows)).encode())
    # Reads of 256 KiB, each under what httpfs2 splits.
    csv = f"read_csv('{rig.url(key)}', buffer_size = 262144, max_line_size = 1024)"
    sql = f"SELECT count(*), sum(column0), sum(column1), count(DISTINCT column2) FROM {csv}"
    expected = [(rows, sum(range(rows)), sum(i * 7919 % 100003 for i in range(rows)), rows)]
    # Without read-ahead, every read httpfs2 does not split is one of the reads this test is about.
    enable(con, read_ahead=False)
    answers = {}
    requests = {}
    for name, connection in (("native", native_con), ("httpfs2", con)):
        connection.execute(f"SET threads = {threads}")
        requests[name] = server_requests(
            rig, lambda c=connection, n=name: answers.update({n: c.execute(sql).fetchall()})
        )
    assert answers == {"native": expected, "httpfs2": expected}
    counters = stats(con)
    assert counters["reads_passed_through"] == 0, counters
    assert counters["reads_checked"] >= 1 and counters["checked_gets"] >= 1, counters
    # Every GET was one of those reads': the first read of a path not yet proven to serve ranges is sent alone and the
    # others wait for its answer's head, not for a request more (only a read of 1 MiB or more beside others asks its
    # first 64 KiB alone where curl hands over heads with bodies: CheckedRangeReader::PROBE_SPLIT_BYTES).
    assert requests["httpfs2"]["GetObject"] == counters["checked_gets"], (requests, counters)
    assert requests["httpfs2"].get("HeadObject") == requests["native"].get("HeadObject"), requests
    if DUCKDB_2:
        # DuckDB 2.0 opens the CSV for parallel access, which httpfs reads unbuffered: a GET a read, with httpfs2 as
        # without (2.0 cuts the file into 15 or 16 reads from run to run, so the two runs' counts are not compared).
        assert counters["checked_gets"] == counters["reads_checked"], counters
    else:
        # Several reads of the CSV reader's were answered from one window, as from httpfs's buffer: the same requests.
        assert counters["checked_gets"] < counters["reads_checked"], counters
        assert requests["httpfs2"] == requests["native"], requests


def test_missing_object_gives_the_same_error(con, native_con, rig):
    sql = f"SELECT * FROM read_parquet('{rig.url('does/not/exist.parquet')}')"
    assert error_of(con, sql) == error_of(native_con, sql)


def test_external_file_cache_serves_repeat_reads(con, rig, big_object):
    key, data = big_object
    con.execute("SET enable_external_file_cache = true; SET httpfs2_parallel_read_enabled = true")
    assert blob_sha(con, rig.url(key)) == sha256(data)
    first = stats(con)
    assert first["bytes_read"] >= len(data)
    assert blob_sha(con, rig.url(key)) == sha256(data)
    second = stats(con)
    assert second["bytes_read"] == first["bytes_read"]
    assert second["reads"] == first["reads"]


def test_reset_stats_zeroes_counters(con, rig, big_object):
    blob_sha(con, rig.url(big_object[0]))
    assert stats(con)["reads"] > 0
    assert con.execute("CALL httpfs2_reset_stats()").fetchall() == [(True,)]
    assert stats(con)["reads"] == 0


def test_credentials_never_in_stats(con, rig, big_object):
    blob_sha(con, rig.url(big_object[0]))
    text = str(con.execute("SELECT * FROM httpfs2_stats()").fetchall())
    assert rig.secret_key not in text and rig.access_key not in text

"""The first open of an s3:// Parquet file: httpfs2 fetches the object's tail in one GET it signs itself, which tells
the size, ETag and Last-Modified httpfs's HEAD would and holds the footer DuckDB reads next; the file then opens at
that version without a HEAD. Whatever that GET cannot do, httpfs's own open does, with its own errors."""

import os
import tempfile
from pathlib import Path

import pytest

from helpers import DUCKDB_2, blob_sha, enable, logged_requests, sha256, stats
from test_read_ahead import make_parquet
from test_reads import error_of

SQL = "SELECT count(*), sum(i), sum(hash(s)), sum(k) FROM read_parquet('{url}')"


def upload_parquet(rig, key: str, rows: int, seed: int = 0) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.parquet"
        make_parquet(path, rows, 10_000, seed=seed)
        data = path.read_bytes()
    rig.put_object(key, data)
    return data


def httpfs_requests(con) -> list:
    """The requests httpfs made since logging was enabled, as (type, range header) pairs. httpfs2's own are in the log
    too: told apart by their redacted signature where the host's log tells (NativeHttpfs.LOG_TELLS_HTTPFS2_APART),
    elsewhere by what httpfs never sends, a suffix range (httpfs2's tail GET; its other requests count as httpfs's)."""
    return [
        (kind, byte_range)
        for kind, byte_range, ours in logged_requests(con)
        if not (ours or (ours is None and byte_range.startswith("bytes=-")))
    ]


@pytest.mark.parametrize("rows", [2_000, 200_000], ids=["smaller_than_the_tail", "larger"])
def test_a_first_open_makes_no_head_and_reads_its_footer_from_the_tail(con, native_con, rig, rows):
    key = f"first_open/data-{rows}.parquet"
    data = upload_parquet(rig, key, rows)
    sql = SQL.format(url=rig.url(key))
    for connection in (con, native_con):
        connection.execute("CALL enable_logging('HTTP')")
    expected = native_con.execute(sql).fetchall()
    enable(con)
    assert con.execute(sql).fetchall() == expected
    assert [kind for kind, _ in httpfs_requests(native_con)].count("HEAD") == 1
    assert [kind for kind, _ in httpfs_requests(con)].count("HEAD") == 0
    counters = stats(con)
    assert counters["version_requests"] == 1
    assert counters["footer_bytes_reused"] > 0
    assert counters["errors"] == 0
    if len(data) <= 256 << 10:
        # The tail was the whole file: httpfs made no request at all.
        assert httpfs_requests(con) == []
    # Bytes served from the tail are the object's: ranges across it, through a new open of the same version.
    for offset, length in ((len(data) - 8, 8), (max(0, len(data) - 300_000), 300_000), (0, len(data))):
        offset, length = max(offset, 0), min(length, len(data))
        got = con.execute("SELECT sha256(httpfs2_read_range(?, ?, ?))", [rig.url(key), offset, length]).fetchone()[0]
        assert got == sha256(data[offset : offset + length]), (offset, length)


def test_a_file_overwritten_after_its_first_open_is_read_at_its_new_version(con, native_con, rig):
    """The first query opens from the tail; the file is replaced (another size, then the same size); each next query
    gives the new answer: the tail is used only for the version it came with."""
    key = "first_open/changing.parquet"
    sql = SQL.format(url=rig.url(key))
    enable(con)
    for seed, rows in ((0, 30_000), (3, 40_000), (4, 40_000)):
        upload_parquet(rig, key, rows, seed)
        assert con.execute(sql).fetchall() == native_con.execute(sql).fetchall()
    # Only the first open fetched a tail: the next ones found a footer of the file remembered and opened with a HEAD.
    assert stats(con)["version_requests"] == 1


def test_without_its_tail_a_file_opens_as_httpfs_opens_it(con, native_con, rig):
    """A missing file, and a secret the server refuses: httpfs2's GET fails, httpfs's open reports its own error, and
    no credential appears in it."""
    enable(con)
    missing = f"SELECT * FROM read_parquet('{rig.url('first_open/missing.parquet')}')"
    assert error_of(con, missing) == error_of(native_con, missing)
    key = "first_open/refused.parquet"
    upload_parquet(rig, key, 1000)
    for connection in (con, native_con):
        connection.execute(rig.secret_sql().replace(rig.secret_key, "not-the-secret-key"))
    refused = SQL.format(url=rig.url(key))
    kind, text = error_of(con, refused)
    assert (kind, text) == error_of(native_con, refused)
    assert "not-the-secret-key" not in text and rig.access_key not in text
    # Both opens tried the tail first.
    assert stats(con)["version_requests"] == 2


def test_after_eight_failed_tails_httpfs2_stops_asking_for_a_while(con, native_con, rig):
    """A store or secret httpfs2 cannot address must not cost every open a failed request: after 8 in a row it stops
    asking (for a minute), and the opens go on as httpfs's own."""
    key = "first_open/paused.parquet"
    upload_parquet(rig, key, 1000)
    sql = SQL.format(url=rig.url(key))
    enable(con)
    for connection in (con, native_con):
        connection.execute(rig.secret_sql().replace(rig.secret_key, "not-the-secret-key"))
    expected = error_of(native_con, sql)
    for _ in range(9):
        assert error_of(con, sql) == expected
    assert stats(con)["version_requests"] == 8
    for connection in (con, native_con):
        connection.execute(rig.secret_sql())
    assert con.execute(sql).fetchall() == native_con.execute(sql).fetchall()
    assert stats(con)["version_requests"] == 8


@pytest.mark.skipif(not DUCKDB_2, reason="s3_version_id_pinning is a setting of DuckDB 2.0's httpfs")
def test_with_version_id_pinning_httpfs_reads_alone(con, native_con, rig):
    """httpfs's s3_version_id_pinning reads every range at the version id the open's HEAD gave (versionId=), which
    httpfs2's own GETs do not ask for: with it on, httpfs2 sends no tail, listing or range GET of its own, and the file
    is read as httpfs reads it."""
    key = "first_open/pinned.parquet"
    upload_parquet(rig, key, 200_000, seed=7)
    sql = SQL.format(url=rig.url(key))
    expected = native_con.execute(sql).fetchall()
    enable(con)
    con.execute("SET s3_version_id_pinning = true")
    con.execute("CALL enable_logging('HTTP')")
    assert con.execute(sql).fetchall() == expected
    tails = [byte_range for _, byte_range, _ in logged_requests(con) if byte_range.startswith("bytes=-")]
    assert tails == [], "httpfs2's tail GET (httpfs never asks for a suffix range)"
    counters = stats(con)
    assert counters["version_requests"] == 0 and counters["folder_listings"] == 0, counters
    assert [kind for kind, _ in httpfs_requests(con)].count("HEAD") == 1


@pytest.mark.parametrize("size", [40_000, (6 << 20) + 12345], ids=["smaller_than_the_tail", "larger"])
def test_another_file_opens_from_a_small_tail_where_the_host_reads_its_pieces_at_once(con, native_con, rig, size):
    """DuckDB 2.0 reads a remote file's pieces side by side (async_threads). A file that is not Parquet, opened without
    metadata, then opens from its last 64 KiB: a GET in place of httpfs's HEAD, which shows that the store serves
    ranges of the object, so no piece waits for another's answer to show it; a file smaller than that is all in it.
    DuckDB 1.5 reads one piece at a time: the file opens with httpfs's HEAD."""
    key = f"first_open/other-{size}.bin"
    data = os.urandom(size)
    rig.put_object(key, data)
    for connection in (con, native_con):
        connection.execute("CALL enable_logging('HTTP')")
    assert blob_sha(native_con, rig.url(key)) == sha256(data)
    enable(con)
    assert blob_sha(con, rig.url(key)) == sha256(data)
    ours, native = logged_requests(con), logged_requests(native_con)
    tails = [byte_range for kind, byte_range, _ in ours if kind == "GET" and byte_range.startswith("bytes=-")]
    heads = [kind for kind, _, _ in ours].count("HEAD")
    if not DUCKDB_2:
        assert (tails, heads) == ([], 1), ours
        return
    assert (tails, heads) == (["bytes=-65536"], 0), ours
    assert stats(con)["version_requests"] == 1
    if size <= 65536:
        assert len(ours) == 1, ours
    else:
        # The HEAD's place taken, no request more: the pieces as 2.0 alone reads them, short of what the tail holds
        # (a last piece within it is not asked for).
        assert len(ours) <= len(native), (ours, native)

"""Reads through the wrapper return the object's exact bytes; writes, globs, errors and the cache still work."""
import duckdb
import pytest

from conftest import blob_sha, sha256, stats


@pytest.mark.parametrize("enabled", [False, True])
def test_whole_s3_object_is_byte_exact(con, rig, big_object, enabled):
    key, data = big_object
    con.execute(f"SET httpfs2_parallel_read_enabled = {enabled}")
    assert blob_sha(con, rig.url(key)) == sha256(data)
    counters = stats(con)
    # read_blob reads the 24 MiB object in one sequential Read call
    assert counters["reads_split"] == (1 if enabled else 0)
    assert counters["errors"] == 0


@pytest.mark.parametrize("enabled", [False, True])
def test_whole_http_object_is_byte_exact(con, http_dir, big_object, enabled):
    con.execute(f"SET httpfs2_parallel_read_enabled = {enabled}")
    assert blob_sha(con, f"{http_dir}/big.bin") == sha256(big_object[1])
    assert (stats(con, "HTTPFileSystem")["reads_split"] > 0) == enabled


@pytest.mark.parametrize("url_kind", ["s3", "http"])
def test_ranged_reads_are_byte_exact(con, rig, http_dir, big_object, url_kind):
    key, data = big_object
    url = rig.url(key) if url_kind == "s3" else f"{http_dir}/big.bin"
    con.execute("SET httpfs2_parallel_read_enabled = true")
    ranges = [(0, 1), (1, 3 << 20), (5 << 20, 9 << 20), (len(data) - (4 << 20), 4 << 20), (len(data) - 1, 1),
              (777, 2 << 20)]
    for offset, length in ranges:
        got = con.execute("SELECT sha256(httpfs2_read_range(?, ?, ?))", [url, offset, length]).fetchone()[0]
        assert got == sha256(data[offset:offset + length]), (offset, length)


def test_read_past_end_fails_like_httpfs(con, native_con, rig, big_object):
    key, data = big_object
    con.execute("SET httpfs2_parallel_read_enabled = true")
    query = "SELECT httpfs2_read_range(?, ?, ?)"
    args = [rig.url(key), len(data) - 10, 4 << 20]
    with pytest.raises(duckdb.Error) as wrapped:
        con.execute(query, args)
    assert "httpfs2" not in str(wrapped.value)


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


def test_missing_object_gives_the_same_error(con, native_con, rig):
    url = rig.url("does/not/exist.parquet")
    errors = []
    for connection in (native_con, con):
        with pytest.raises(duckdb.Error) as error:
            connection.execute(f"SELECT * FROM read_parquet('{url}')")
        errors.append((type(error.value), str(error.value)))
    assert errors[0] == errors[1]


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

"""The block cache on local disk (httpfs2_cache_*): a warm read in a fresh process costs no data request, a replaced
object is read at its new version, a corrupt block is fetched again, processes share one directory within its bound,
a directory that cannot be used leaves queries right. Every check reads bytes and versitygw's access log."""

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import enable, gets_by_key, sha256, stats
from rig.paths import REPO_ROOT

MiB = 1 << 20

CHILD = r"""
import json, sys
from rig import duckdb_connect
args = json.loads(sys.argv[1])
con = duckdb_connect(None)
con.execute(args["secret"])
con.execute("SET enable_external_file_cache = false")
for statement in args["setup"]:
    con.execute(statement)
shas = [con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchone()[0] for url in args["urls"]]
cursor = con.execute("SELECT * FROM httpfs2_stats() WHERE filesystem = 'S3FileSystem'")
row = dict(zip([d[0] for d in cursor.description], cursor.fetchone()))
info = con.execute("SELECT path, version FROM httpfs2_cache_info()").fetchall() if args.get("info") else []
print(json.dumps({"shas": shas, "stats": row, "info": info}, default=str))
"""


def cache_setup(directory, read_ahead=True, max_bytes=None):
    setup = [
        "SET httpfs2_parallel_read_enabled = true",
        "SET httpfs2_parallel_read_min_latency_ms = 0",
        f"SET httpfs2_read_ahead_enabled = {str(read_ahead).lower()}",
        "SET httpfs2_cache_enabled = true",
        f"SET httpfs2_cache_directory = '{directory}'",
    ]
    if max_bytes is not None:
        setup.append(f"SET GLOBAL httpfs2_cache_max_bytes = {max_bytes}")
    return setup


def start_child(rig, urls, setup, info=False):
    """A fresh Python process with DuckDB, httpfs and this build of httpfs2 that reads `urls` whole (and lists the
    cache after, with `info`)."""
    args = json.dumps({"secret": rig.secret_sql(rig.proxy_endpoint), "setup": setup, "urls": urls, "info": info})
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, args], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def finish_child(child) -> dict:
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err.decode()
    return json.loads(out.decode().strip().splitlines()[-1])


def read_in_child(rig, urls, setup, info=False) -> dict:
    return finish_child(start_child(rig, urls, setup, info))


def cold_then_warm(rig, key, setup):
    """Reads `key` in a fresh process, then again in another: each one's output and GetObject counts by key."""
    runs = []
    for _ in range(2):
        out = {}
        gets = gets_by_key(rig, lambda out=out: out.update(read_in_child(rig, [rig.url(key)], setup)))
        runs += [out, gets]
    return runs


def held_bytes(directory) -> int:
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())


def block_files(directory) -> list:
    return sorted(directory.rglob("*.blk"))


@pytest.fixture
def warm_object(objects):
    key = "cache/warm.bin"
    return key, objects.put(key, 5 * MiB + 12345)


def test_a_warm_read_in_a_fresh_process_makes_no_data_request(rig, warm_object, tmp_path):
    key, data = warm_object
    cold, cold_gets, warm, warm_gets = cold_then_warm(rig, key, cache_setup(tmp_path / "cache", read_ahead=False))
    assert cold["shas"] == [sha256(data)] and warm["shas"] == [sha256(data)]
    assert cold_gets.get(key, 0) >= 1
    assert cold["stats"]["cache_bytes_written"] == len(data)
    assert warm_gets.get(key, 0) == 0, warm_gets
    assert warm["stats"]["cache_misses"] == 0
    assert warm["stats"]["cache_hits"] == 6
    assert warm["stats"]["cache_bytes_served"] == len(data)


def test_a_warm_read_with_read_ahead_sends_only_the_tail_that_proves_the_version(rig, objects, tmp_path):
    key = "cache/warm-ahead.bin"
    data = objects.put(key, 9 * MiB + 777)
    cold, cold_gets, warm, warm_gets = cold_then_warm(rig, key, cache_setup(tmp_path / "cache"))
    assert cold["shas"] == [sha256(data)] and warm["shas"] == [sha256(data)]
    assert cold_gets.get(key, 0) >= 2
    assert warm_gets.get(key, 0) <= 1, warm_gets
    assert warm["stats"]["cache_misses"] == 0 and warm["stats"]["cache_hits"] > 0


def test_a_replaced_object_of_the_same_size_is_read_at_its_new_version(rig, tmp_path):
    key = "cache/replaced.bin"
    old, new = os.urandom(3 * MiB + 5), os.urandom(3 * MiB + 5)
    setup = cache_setup(tmp_path / "cache", read_ahead=False)
    rig.put_object(key, old)
    assert read_in_child(rig, [rig.url(key)], setup)["shas"] == [sha256(old)]
    rig.put_object(key, new)
    again = {}
    gets = gets_by_key(rig, lambda: again.update(read_in_child(rig, [rig.url(key)], setup)))
    assert again["shas"] == [sha256(new)]
    assert gets.get(key, 0) >= 1
    assert again["stats"]["cache_hits"] == 0 and again["stats"]["cache_misses"] == 4


def test_a_corrupt_block_is_a_miss_and_is_fetched_again(rig, warm_object, tmp_path):
    key, data = warm_object
    directory = tmp_path / "cache"
    setup = cache_setup(directory, read_ahead=False)
    read_in_child(rig, [rig.url(key)], setup)
    files = block_files(directory)
    assert len(files) == 6
    with open(files[2], "r+b") as block:
        block.seek(-100, os.SEEK_END)
        byte = block.read(1)
        block.seek(-100, os.SEEK_END)
        block.write(bytes([byte[0] ^ 0xFF]))
    again = {}
    gets = gets_by_key(rig, lambda: again.update(read_in_child(rig, [rig.url(key)], setup)))
    assert again["shas"] == [sha256(data)]
    assert again["stats"]["cache_misses"] == 1 and again["stats"]["cache_hits"] == 5
    assert again["stats"]["cache_corrupt_blocks_removed"] == 1
    # The block again, as one GET, or two where the first answer of a fresh process is its first 64 KiB alone.
    assert 1 <= gets.get(key, 0) <= 2
    assert len(block_files(directory)) == 6


def test_two_processes_fill_one_cache_at_once_within_its_bound(con, rig, objects, tmp_path):
    keys = [f"cache/shared-{n}.bin" for n in range(3)]
    datas = [objects.put(key, 7 * MiB + n) for n, key in enumerate(keys)]
    directory = tmp_path / "cache"
    bound = 16 * MiB
    setup = cache_setup(directory, max_bytes=bound)
    urls = [rig.url(key) for key in keys]
    children = [start_child(rig, urls, setup), start_child(rig, list(reversed(urls)), setup)]
    results = [finish_child(child) for child in children]
    assert results[0]["shas"] == [sha256(d) for d in datas]
    assert results[1]["shas"] == [sha256(d) for d in reversed(datas)]
    # Each process counts its own writes and scans the directory at least once a second while it writes: the bound
    # holds up to what the other wrote since its last scan (core/cache/block_cache.hpp), never the 42 MiB read.
    assert held_bytes(directory) <= bound + 8 * MiB
    # The next process to open the cache evicts down to the bound.
    for statement in setup:
        con.execute(statement)
    con.execute("SELECT count(*) FROM httpfs2_cache_info()").fetchall()
    assert held_bytes(directory) <= bound


def test_the_bound_holds_under_a_scan_larger_than_the_cache(con, rig, big_object, tmp_path):
    key, data = big_object
    directory = tmp_path / "cache"
    enable(con)
    for statement in cache_setup(directory, max_bytes=16 * MiB):
        con.execute(statement)
    assert con.execute("SELECT sha256(content) FROM read_blob(?)", [rig.url(key)]).fetchone()[0] == sha256(data)
    assert stats(con)["cache_bytes_written"] == len(data)
    assert stats(con)["cache_bytes_evicted"] > 0
    assert held_bytes(directory) <= 16 * MiB + 2 * MiB


def test_a_directory_that_cannot_be_made_leaves_queries_right_with_a_warning(con, rig, warm_object, tmp_path):
    key, data = warm_object
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    directory = blocker / "cache"
    enable(con)
    for statement in cache_setup(directory):
        con.execute(statement)
    con.execute("CALL enable_logging(level = 'WARNING')")
    assert con.execute("SELECT sha256(content) FROM read_blob(?)", [rig.url(key)]).fetchone()[0] == sha256(data)
    assert stats(con)["cache_failures"] >= 1
    assert stats(con)["cache_bytes_written"] == 0
    warnings = con.execute(
        "SELECT message FROM duckdb_logs WHERE log_level = 'WARNING' AND message LIKE '%block cache%'"
    ).fetchall()
    assert any(str(directory) in message for (message,) in warnings), warnings


def test_the_cache_is_off_by_default_and_writes_nothing(con, rig, warm_object, tmp_path):
    key, data = warm_object
    directory = tmp_path / "cache"
    enable(con)
    con.execute(f"SET httpfs2_cache_directory = '{directory}'")
    assert con.execute("SELECT sha256(content) FROM read_blob(?)", [rig.url(key)]).fetchone()[0] == sha256(data)
    assert not directory.exists()
    assert con.execute("SELECT count(*) FROM httpfs2_cache_info()").fetchone()[0] == 0
    assert not directory.exists()


def test_cache_info_lists_what_was_read_and_clear_empties_it(con, rig, objects, tmp_path):
    keys = ["cache/info/a.bin", "cache/other/b.bin"]
    datas = [objects.put(key, 2 * MiB + 3 + n) for n, key in enumerate(keys)]
    directory = tmp_path / "cache"
    enable(con, read_ahead=False)
    for statement in cache_setup(directory, read_ahead=False):
        con.execute(statement)
    for key, data in zip(keys, datas, strict=True):
        assert con.execute("SELECT sha256(content) FROM read_blob(?)", [rig.url(key)]).fetchone()[0] == sha256(data)
    info = con.execute("SELECT path, version, blocks, bytes FROM httpfs2_cache_info() ORDER BY path").fetchall()
    assert [(row[0], row[2], row[3]) for row in info] == [
        (rig.url(key), 3, len(data)) for key, data in zip(keys, datas, strict=True)
    ]
    assert all("etag=" in row[1] for row in info)
    removed = con.execute("SELECT bytes_removed FROM httpfs2_cache_clear(?)", [rig.url("cache/info/")]).fetchone()[0]
    assert removed > len(datas[0])
    assert [row[0] for row in con.execute("SELECT path FROM httpfs2_cache_info()").fetchall()] == [rig.url(keys[1])]
    assert con.execute("SELECT bytes_removed FROM httpfs2_cache_clear()").fetchone()[0] > len(datas[1])
    assert con.execute("SELECT count(*) FROM httpfs2_cache_info()").fetchone()[0] == 0
    assert block_files(directory) == []


def test_an_object_without_an_etag_is_keyed_by_size_and_last_modified(rig, tmp_path):
    """An object written straight into versitygw's folder has no ETag: its blocks are keyed by size and Last-Modified
    (the weaker proof), served warm with no GET, and a replacement of the same size with a new Last-Modified is read
    at its new version."""
    key = "cache/no-etag.bin"
    path = rig.bucket_folder / key
    path.parent.mkdir(parents=True, exist_ok=True)
    old, new = os.urandom(2 * MiB + 9), os.urandom(2 * MiB + 9)
    path.write_bytes(old)
    an_hour_ago = time.time() - 3600
    os.utime(path, (an_hour_ago, an_hour_ago))  # written long ago: its answers prove the version
    setup = cache_setup(tmp_path / "cache", read_ahead=False)
    cold, cold_gets, warm, warm_gets = cold_then_warm(rig, key, setup)
    assert cold["shas"] == [sha256(old)] and warm["shas"] == [sha256(old)]
    assert cold["stats"]["cache_bytes_written"] == len(old)
    assert warm_gets.get(key, 0) == 0, warm_gets
    path.write_bytes(new)
    os.utime(path, (an_hour_ago + 60, an_hour_ago + 60))
    again = {}
    gets = gets_by_key(rig, lambda: again.update(read_in_child(rig, [rig.url(key)], setup, info=True)))
    assert again["shas"] == [sha256(new)]
    assert gets.get(key, 0) >= 1 and again["stats"]["cache_hits"] == 0
    versions = sorted(version for path, version in again["info"] if path == rig.url(key))
    assert len(versions) == 2 and all(v.startswith(f"size={len(new)};modified=") for v in versions), versions


def test_a_write_through_httpfs2_drops_the_blocks_of_the_path_it_wrote(con, rig, tmp_path):
    key = "cache/rewritten.csv"
    url = rig.url(key)
    enable(con, read_ahead=False)
    for statement in cache_setup(tmp_path / "cache", read_ahead=False):
        con.execute(statement)
    con.execute(f"COPY (SELECT range AS a FROM range(400000)) TO '{url}' (FORMAT csv)")
    con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchall()
    cached = "SELECT count(*) FROM httpfs2_cache_info() WHERE path = ?"
    assert con.execute(cached, [url]).fetchone()[0] == 1
    con.execute(f"COPY (SELECT range * 2 AS a FROM range(400000)) TO '{url}' (FORMAT csv)")
    assert stats(con)["files_uploaded"] == 2
    deadline = time.time() + 10
    while con.execute(cached, [url]).fetchone()[0] != 0 and time.time() < deadline:
        time.sleep(0.1)  # dropped on the IO pool once the upload completed
    assert con.execute(cached, [url]).fetchone()[0] == 0
    assert con.execute(f"SELECT sum(a) FROM '{url}'").fetchone()[0] == 2 * sum(range(400000))

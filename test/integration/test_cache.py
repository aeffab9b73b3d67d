"""The block cache on local disk (httpfs2_cache_*): a warm read in a fresh process costs no data request, a replaced
object is read at its new version, a corrupt block is fetched again, processes share one directory within its bound,
a process killed during a fill leaves a cache the next one reads right, a directory that cannot be used or a full disk
leaves queries right. Every check reads bytes and versitygw's access log."""

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb
import pytest

from helpers import blob_sha, enable, gets_by_key, server_requests, sha256, stats
from hostile import PREFIX
from rig.paths import REPO_ROOT

MiB = 1 << 20
BLOCK = 256 * 1024  # BlockCache::BLOCK_SIZE


def blocks_of(size: int) -> int:
    return -(-size // BLOCK)


CHILD = r"""
import json, sys
from rig import duckdb_connect
args = json.loads(sys.argv[1])
con = duckdb_connect(None)
con.execute(args["secret"])
con.execute("SET enable_external_file_cache = false")
for statement in args["setup"]:
    con.execute(statement)
con.execute("CALL enable_logging(level = 'WARNING')")
shas = []
for url in args["urls"]:
    shas.append(con.execute(args.get("query") or "SELECT sha256(content) FROM read_blob(?)", [url]).fetchone()[0])
    if args.get("settle"):
        con.execute("SELECT * FROM httpfs2_stats()").fetchall()  # waits for the blocks handed to the cache's writer
cursor = con.execute("SELECT * FROM httpfs2_stats() WHERE filesystem = 'S3FileSystem'")
row = dict(zip([d[0] for d in cursor.description], cursor.fetchone()))
info = con.execute("SELECT path, version FROM httpfs2_cache_info()").fetchall() if args.get("info") else []
warnings = con.execute("SELECT message FROM duckdb_logs WHERE log_level = 'WARNING'").fetchall()
print(json.dumps({"shas": shas, "stats": row, "info": info, "warnings": [w[0] for w in warnings]}, default=str))
"""


def cache_setup(directory, read_ahead=True, max_bytes=None, trust_seconds=None):
    setup = [
        "SET httpfs2_parallel_read_enabled = true",
        "SET httpfs2_parallel_read_min_latency_ms = 0",
        f"SET httpfs2_read_ahead_enabled = {str(read_ahead).lower()}",
        "SET httpfs2_cache_enabled = true",
        f"SET httpfs2_cache_directory = '{directory}'",
    ]
    if max_bytes is not None:
        setup.append(f"SET GLOBAL httpfs2_cache_max_bytes = {max_bytes}")
    if trust_seconds is not None:
        setup.append(f"SET httpfs2_cache_trust_seconds = {trust_seconds}")
    return setup


def start_child(rig, urls, setup, info=False, settle=False, file_size_limit=None, query=None):
    """A fresh Python process with DuckDB, httpfs and this build of httpfs2 that reads `urls` whole, one query each
    (with `settle`, waiting for the cache's writes after each), and lists the cache after (with `info`). A
    `file_size_limit` in bytes stands in for a full disk: a write past it fails with EFBIG (SIGXFSZ ignored). `query`
    (one value of one row, the URL as its parameter) stands in for the sha256 of the whole object."""
    args = {"secret": rig.secret_sql(rig.proxy_endpoint), "setup": setup, "urls": urls, "info": info}
    args["settle"] = settle
    args["query"] = query
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))

    def limit_file_size():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    return subprocess.Popen(
        [sys.executable, "-c", CHILD, json.dumps(args)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=limit_file_size if file_size_limit is not None else None,
    )


def finish_child(child) -> dict:
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err.decode()
    return json.loads(out.decode().strip().splitlines()[-1])


def read_in_child(rig, urls, setup, info=False, **options) -> dict:
    return finish_child(start_child(rig, urls, setup, info, **options))


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
    assert warm["stats"]["cache_hits"] == blocks_of(len(data))
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
    assert again["stats"]["cache_hits"] == 0 and again["stats"]["cache_misses"] == blocks_of(len(new))


def test_a_corrupt_block_is_a_miss_and_is_fetched_again(rig, warm_object, tmp_path):
    key, data = warm_object
    directory = tmp_path / "cache"
    setup = cache_setup(directory, read_ahead=False)
    read_in_child(rig, [rig.url(key)], setup)
    files = block_files(directory)
    assert len(files) == blocks_of(len(data))
    with open(files[2], "r+b") as block:
        block.seek(-100, os.SEEK_END)
        byte = block.read(1)
        block.seek(-100, os.SEEK_END)
        block.write(bytes([byte[0] ^ 0xFF]))
    again = {}
    gets = gets_by_key(rig, lambda: again.update(read_in_child(rig, [rig.url(key)], setup)))
    assert again["shas"] == [sha256(data)]
    assert again["stats"]["cache_misses"] == 1 and again["stats"]["cache_hits"] == blocks_of(len(data)) - 1
    assert again["stats"]["cache_corrupt_blocks_removed"] == 1
    # The block again, as one GET, or two where the first answer of a fresh process is its first 64 KiB alone.
    assert 1 <= gets.get(key, 0) <= 2
    assert len(block_files(directory)) == blocks_of(len(data))


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


def test_a_process_killed_during_a_fill_leaves_a_cache_the_next_one_reads_right(rig, objects, tmp_path):
    keys = ["cache/killed/a.bin", "cache/killed/b.bin"]
    datas = [objects.put(keys[0], 8 * MiB + 100), objects.put(keys[1], 12 * MiB + 100)]
    urls = [rig.url(key) for key in keys]
    directory = tmp_path / "cache"
    setup = cache_setup(directory, read_ahead=False)
    # Slow enough that the fill takes seconds: the process is killed once the first object's first blocks are on
    # disk, with others being written (temporary files) and the second object not read yet or being fetched.
    rig.add_toxic("slow", "bandwidth", {"rate": 4096})
    child = start_child(rig, urls, setup)
    while not block_files(directory) and child.poll() is None:
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=60)
    assert child.returncode == -signal.SIGKILL, "the fill ended before it was killed: slow the rig down further"
    written_before = len(block_files(directory))
    total = sum(blocks_of(len(d)) for d in datas)
    assert 0 < written_before < total
    rig.remove_toxics()
    again = {}
    gets = gets_by_key(rig, lambda: again.update(read_in_child(rig, urls, setup)))
    assert again["shas"] == [sha256(d) for d in datas]
    # The blocks the killed process wrote are served as they are (none torn, none corrupt); the rest is fetched.
    assert again["stats"]["cache_hits"] >= written_before
    assert again["stats"]["cache_corrupt_blocks_removed"] == 0
    assert again["stats"]["cache_hits"] + again["stats"]["cache_misses"] == total
    assert sum(gets.get(key, 0) for key in keys) >= 1
    assert len(block_files(directory)) == total
    # And the cache now serves both objects byte for byte with no data request.
    warm = {}
    warm_gets = gets_by_key(rig, lambda: warm.update(read_in_child(rig, urls, setup)))
    assert warm["shas"] == [sha256(d) for d in datas]
    assert all(warm_gets.get(key, 0) == 0 for key in keys), warm_gets


def test_a_full_disk_leaves_queries_right_and_turns_the_cache_off_with_a_warning(rig, objects, tmp_path):
    keys = ["cache/full/a.bin", "cache/full/b.bin"]
    # Every block over the file size limit, the last ones too.
    datas = [objects.put(key, 3 * MiB + 700 * 1024 + n) for n, key in enumerate(keys)]
    directory = tmp_path / "cache"
    out = read_in_child(
        rig,
        [rig.url(key) for key in keys],
        cache_setup(directory, read_ahead=False),
        settle=True,
        file_size_limit=BLOCK // 2,
    )
    assert out["shas"] == [sha256(d) for d in datas]
    # The first object's blocks fail in the background; once one has, the cache takes no more.
    assert out["stats"]["cache_write_failures"] >= 1
    assert out["stats"]["cache_bytes_written"] == 0
    # The next query's reader is told and stops using the cache for its file, with a warning in DuckDB's log.
    assert out["stats"]["cache_failures"] >= 1
    assert any(str(directory) in w and os.strerror(27) in w for w in out["warnings"]), out["warnings"]
    assert block_files(directory) == []
    assert [f for f in directory.rglob("tmp-*")] == []


def test_a_cache_directory_made_unusable_under_a_running_database_leaves_queries_right(con, rig, objects, tmp_path):
    """As root ignores permissions (and this rig runs as root), the directory is made unusable by replacing the
    cache's folder with a file: every write fails (ENOTDIR), as on a directory made read-only or unmounted."""
    keys = [f"cache/unusable/{n}.bin" for n in range(3)]
    datas = [objects.put(key, 2 * MiB + 11 + n) for n, key in enumerate(keys)]
    directory = tmp_path / "cache"
    enable(con, read_ahead=False)
    for statement in cache_setup(directory, read_ahead=False):
        con.execute(statement)
    con.execute("CALL enable_logging(level = 'WARNING')")
    assert blob_sha(con, rig.url(keys[0])) == sha256(datas[0])
    assert stats(con)["cache_bytes_written"] == len(datas[0])
    root = directory / "httpfs2-blocks-v1"
    shutil.rmtree(root)
    root.write_text("not a directory")
    for key, data in zip(keys[1:], datas[1:], strict=True):
        assert blob_sha(con, rig.url(key)) == sha256(data)
        stats(con)  # waits for the blocks handed to the writer: the second object's fail
    after = stats(con)
    assert after["cache_bytes_written"] == len(datas[0])
    assert after["cache_write_failures"] >= 1
    assert after["cache_failures"] >= 1
    warnings = con.execute(
        "SELECT message FROM duckdb_logs WHERE log_level = 'WARNING' AND message LIKE '%block cache%'"
    ).fetchall()
    assert any(os.strerror(20) in message for (message,) in warnings), warnings


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
        (rig.url(key), blocks_of(len(data)), len(data)) for key, data in zip(keys, datas, strict=True)
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


# --- httpfs2_cache_trust_seconds: versions the cache learnt, trusted for a window the user chooses ---


def read_counting_requests(rig, urls, setup, **options):
    """Reads `urls` in a fresh process (read_in_child): its output, and the S3 operations versitygw served meanwhile."""
    out = {}
    served = server_requests(rig, lambda: out.update(read_in_child(rig, urls, setup, **options)))
    return out, served


def version_records(directory) -> list:
    """The version records under the cache's directory (os.walk: a folder the cache removes meanwhile is skipped)."""
    walk = os.walk(directory / "httpfs2-versions-v1")
    return sorted(Path(root) / name for root, _, names in walk for name in names if name.endswith(".ver"))


def test_a_trusted_warm_read_in_a_fresh_process_makes_no_request_at_all(rig, warm_object, tmp_path):
    key, data = warm_object
    directory = tmp_path / "cache"
    setup = cache_setup(directory, read_ahead=False, trust_seconds=3600)
    cold, cold_requests = read_counting_requests(rig, [rig.url(key)], setup, settle=True)
    assert cold["shas"] == [sha256(data)] and sum(cold_requests.values()) >= 2, cold_requests  # a HEAD, GETs
    assert len(version_records(directory)) == 1
    warm, warm_requests = read_counting_requests(rig, [rig.url(key)], setup)
    assert warm["shas"] == [sha256(data)]
    assert warm_requests == {}, warm_requests  # no HEAD, no GET
    assert warm["stats"]["cache_versions_trusted"] == 1
    assert warm["stats"]["cache_misses"] == 0 and warm["stats"]["cache_bytes_served"] == len(data)


def test_without_a_trust_window_the_recorded_version_is_not_used(rig, warm_object, tmp_path):
    key, data = warm_object
    directory = tmp_path / "cache"
    read_in_child(rig, [rig.url(key)], cache_setup(directory, read_ahead=False, trust_seconds=3600), settle=True)
    warm, warm_requests = read_counting_requests(rig, [rig.url(key)], cache_setup(directory, read_ahead=False))
    assert warm["shas"] == [sha256(data)]
    assert warm_requests.get("HeadObject", 0) >= 1, warm_requests  # the version proved as by default
    assert warm["stats"]["cache_versions_trusted"] == 0 and warm["stats"]["cache_misses"] == 0


def replaced_after_a_trusting_read(rig, key, tmp_path):
    """`key` put, read whole by a process trusting versions for an hour (which records its version), then replaced by
    an object of the same size: the old and new bytes, the cache's directory and the trusting setup."""
    old, new = os.urandom(3 * MiB + 5), os.urandom(3 * MiB + 5)
    directory = tmp_path / "cache"
    rig.put_object(key, old)
    trusting = cache_setup(directory, read_ahead=False, trust_seconds=3600)
    assert read_in_child(rig, [rig.url(key)], trusting, settle=True)["shas"] == [sha256(old)]
    rig.put_object(key, new)
    return old, new, directory, trusting


def test_with_no_window_a_replaced_object_is_read_at_its_new_version_though_one_was_recorded(rig, tmp_path):
    key = "cache/recorded-replaced.bin"
    old, new, directory, trusting = replaced_after_a_trusting_read(rig, key, tmp_path)
    validating = read_in_child(rig, [rig.url(key)], cache_setup(directory, read_ahead=False), settle=True)
    assert validating["shas"] == [sha256(new)]
    assert validating["stats"]["cache_hits"] == 0 and validating["stats"]["cache_versions_trusted"] == 0
    # The version it proved replaced the record: a trusting process now reads the new bytes, from the cache.
    trusted, requests = read_counting_requests(rig, [rig.url(key)], trusting)
    assert trusted["shas"] == [sha256(new)] and requests == {}, requests


def test_a_replaced_object_is_served_stale_within_the_window_and_at_its_new_version_after(rig, tmp_path):
    """What a user risks with a trust window: an object replaced within it (same size, new ETag) is served from the
    old blocks; once the window is over it is read at its new version."""
    key = "cache/trusted-replaced.bin"
    old, new, directory, trusting = replaced_after_a_trusting_read(rig, key, tmp_path)
    stale, requests = read_counting_requests(rig, [rig.url(key)], trusting)
    assert stale["shas"] == [sha256(old)] and requests == {}, requests
    time.sleep(2.5)
    after = read_in_child(rig, [rig.url(key)], cache_setup(directory, read_ahead=False, trust_seconds=2))
    assert after["shas"] == [sha256(new)]
    assert after["stats"]["cache_versions_trusted"] == 0 and after["stats"]["cache_hits"] == 0


@pytest.mark.parametrize("damage", ["torn", "flipped"])
def test_a_damaged_version_record_is_a_miss(rig, warm_object, tmp_path, damage):
    key, data = warm_object
    directory = tmp_path / "cache"
    setup = cache_setup(directory, read_ahead=False, trust_seconds=3600)
    read_in_child(rig, [rig.url(key)], setup, settle=True)
    [record] = version_records(directory)
    raw = bytearray(record.read_bytes())
    if damage == "torn":
        raw = raw[: len(raw) // 2]
    else:
        raw[-3] ^= 0x01  # a byte of the ETag: the record's checksum fails
    record.write_bytes(bytes(raw))
    warm, requests = read_counting_requests(rig, [rig.url(key)], setup)
    assert warm["shas"] == [sha256(data)]
    assert warm["stats"]["cache_versions_trusted"] == 0
    assert requests.get("HeadObject", 0) >= 1 and requests.get("GetObject", 0) == 0, requests
    assert warm["stats"]["cache_misses"] == 0  # the blocks, keyed by the version the HEAD proved, still serve


def test_two_processes_trust_one_record_at_once_and_make_no_request(rig, warm_object, tmp_path):
    key, data = warm_object
    setup = cache_setup(tmp_path / "cache", read_ahead=False, trust_seconds=3600)
    read_in_child(rig, [rig.url(key)], setup, settle=True)
    results = []

    def both():
        children = [start_child(rig, [rig.url(key)], setup) for _ in range(2)]
        results.extend(finish_child(child) for child in children)

    requests = server_requests(rig, both)
    assert [r["shas"] for r in results] == [[sha256(data)]] * 2
    assert requests == {}, requests
    assert all(r["stats"]["cache_versions_trusted"] == 1 for r in results)


def parquet_bytes(con, tmp_path, rows: int) -> bytes:
    local = tmp_path / "local.parquet"
    con.execute(
        f"COPY (SELECT range AS a, range * 3 % 1000 AS b FROM range({rows})) TO '{local}' "
        "(FORMAT parquet, ROW_GROUP_SIZE 100000)"
    )
    return local.read_bytes()


def test_a_parquet_tail_fills_the_cache_and_a_trusted_warm_scan_makes_no_request(con, rig, tmp_path):
    """The first open of a Parquet file is one GET of its tail: the blocks it holds whole go into the cache, so a
    warm open trusted within the window reads its footer (and, after a scan, its data) with no request."""
    key = "cache/trusted/t.parquet"
    data = parquet_bytes(con, tmp_path, 600000)
    assert len(data) > 2 * BLOCK
    rig.put_object(key, data)
    directory = tmp_path / "cache"
    setup = cache_setup(directory, trust_seconds=3600)
    count = "SELECT count(*) FROM read_parquet(?)"
    total = "SELECT sum(a) + sum(b) FROM read_parquet(?)"
    expected = sum(range(600000)) + sum(r * 3 % 1000 for r in range(600000))
    cold = {}
    gets = gets_by_key(rig, lambda: cold.update(read_in_child(rig, [rig.url(key)], setup, info=True, query=count)))
    # The tail, and the block it begins within fetched whole in the background (unless the process ended first)
    assert cold["shas"] == [600000] and gets.get(key, 0) in (1, 2), gets
    assert any(path == rig.url(key) for path, _ in cold["info"]), cold["info"]  # its blocks, from the tail
    warm, requests = read_counting_requests(rig, [rig.url(key)], setup, query=count)
    assert warm["shas"] == [600000] and requests == {}, requests
    scanned = read_in_child(rig, [rig.url(key)], setup, settle=True, query=total)
    assert scanned["shas"] == [expected]
    warm, requests = read_counting_requests(rig, [rig.url(key)], setup, query=total)
    assert warm["shas"] == [expected] and requests == {}, requests
    assert warm["stats"]["cache_misses"] == 0 and warm["stats"]["cache_hits"] > 0


def test_a_write_through_httpfs2_drops_the_trusted_version_of_the_path_it_wrote(con, rig, tmp_path):
    key = "cache/trusted-rewritten.csv"
    url = rig.url(key)
    enable(con, read_ahead=False)
    directory = tmp_path / "cache"
    for statement in cache_setup(directory, read_ahead=False, trust_seconds=3600):
        con.execute(statement)
    con.execute(f"COPY (SELECT range AS a FROM range(400000)) TO '{url}' (FORMAT csv)")
    assert con.execute(f"SELECT sum(a) FROM '{url}'").fetchone()[0] == sum(range(400000))
    assert len(version_records(directory)) == 1
    con.execute(f"COPY (SELECT range * 2 AS a FROM range(400000)) TO '{url}' (FORMAT csv)")
    assert version_records(directory) == []
    assert con.execute(f"SELECT sum(a) FROM '{url}'").fetchone()[0] == 2 * sum(range(400000))


def test_a_read_waiting_for_another_reads_fetch_of_its_blocks_ends_at_an_interrupt(
    connect, rig, hostile_s3, data, normal_proxies, tmp_path
):
    """Two connections of one database read one object through the cache: the second waits for the blocks the
    first is fetching rather than fetching them again. The first's GET stalls; an interrupt of the second ends its
    wait at once (not when the stalled GET answers), and the first still reads the object right."""
    stall = 8.0
    # A read passed to httpfs does not go through the cache: the read is split (each piece a read through it).
    setup = cache_setup(tmp_path, read_ahead=False) + ["SET httpfs2_hedge_reads = false"]
    fetching = connect("httpfs2").con
    waiting = fetching.cursor()  # one database: one cache, whose fetches under way its connections share
    for con in (fetching, waiting):
        for statement in setup:
            con.execute(statement)
    url = rig.url(PREFIX + "blob4.bin")
    sql = f"SELECT sha256(content) FROM read_blob('{url}')"
    # Only the first range GET stalls: the fetching read's; opens (a HEAD, a tail GET) are not held.
    hostile_s3.stall_seconds = stall
    hostile_s3.stall_every = 1
    hostile_s3.stall_max = 1
    hostile_s3.stall_kinds = {"get"}
    hostile_s3.mode = "stall_first_byte"
    outcomes = {}

    def run(name, con):
        try:
            outcomes[name] = con.execute(sql).fetchall()
        except Exception as error:  # reported to the test, whatever it is
            outcomes[name] = error
        outcomes[name + "_end"] = time.monotonic()

    first = threading.Thread(target=run, args=("fetching", fetching), daemon=True)
    first.start()
    deadline = time.monotonic() + 10
    while hostile_s3.counts.get("hit:stall_first_byte", 0) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert hostile_s3.counts.get("hit:stall_first_byte", 0) == 1, hostile_s3.counts
    gets_before = hostile_s3.counts.get("object_gets", 0)
    second = threading.Thread(target=run, args=("waiting", waiting), daemon=True)
    second.start()
    time.sleep(1.5)
    assert "waiting" not in outcomes, f"the second read did not wait: {outcomes.get('waiting')}"
    interrupted_at = time.monotonic()
    waiting.interrupt()
    second.join(stall)
    assert not second.is_alive(), "the interrupted read went on waiting"
    assert outcomes["waiting_end"] - interrupted_at < 2.0, "the wait outlived the interrupt"
    assert isinstance(outcomes["waiting"], duckdb.InterruptException), outcomes["waiting"]
    assert first.is_alive(), "the fetch it waited for had ended: the test proves nothing"
    # The waiting read sent no range GET of its own: it waited for the blocks being fetched.
    ranged = hostile_s3.counts.get("object_gets", 0) - gets_before
    first.join(stall + 30)
    assert outcomes["fetching"] == [(data.sha("blob4.bin"),)]
    assert ranged <= 1, f"{ranged} GETs of the waiting read (at most its tail)"
    hostile_s3.mode = "normal"
    assert waiting.execute(sql).fetchall() == [(data.sha("blob4.bin"),)]

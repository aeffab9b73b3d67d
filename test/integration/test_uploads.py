"""Writes through httpfs2's uploader: every object byte-equal to the same COPY written to a local file, parts of one
size, an object complete when the COPY returns or the key left as it was, and no multipart upload left behind."""

import hashlib
import os
import threading
import time

import duckdb
import pytest

from helpers import DUCKDB_2, needs_registry_package, stats
from rig import ducklake_extension

PART = 5 << 20  # the smallest part S3 takes: objects of a few parts stay small


def uploads(con, part_size=PART, enabled=True):
    con.execute("SET threads = 1")  # one writer: the bytes of a COPY do not depend on thread scheduling
    con.execute("SET httpfs2_parallel_read_enabled = true")
    con.execute(f"SET httpfs2_write_enabled = {str(enabled).lower()}")
    con.execute(f"SET httpfs2_write_part_size_bytes = {part_size}")
    con.execute("CALL httpfs2_reset_stats()")


def stored(rig, key) -> bytes:
    return rig.s3.get_object(Bucket=rig.bucket, Key=key)["Body"].read()


def open_multipart_uploads(rig) -> list:
    return rig.s3.list_multipart_uploads(Bucket=rig.bucket).get("Uploads", [])


@pytest.fixture(autouse=True)
def no_upload_open_before(rig):
    """Each test starts with no multipart upload open, so that one left behind fails only the test that left it."""
    for upload in open_multipart_uploads(rig):
        rig.s3.abort_multipart_upload(Bucket=rig.bucket, Key=upload["Key"], UploadId=upload["UploadId"])


def stored_keys(rig, prefix: str) -> list:
    return [item["Key"] for item in rig.s3.list_objects_v2(Bucket=rig.bucket, Prefix=prefix).get("Contents", [])]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# About 12 MiB as CSV, 9 as uncompressed parquet: several parts of 5 MiB each.
ROWS = "SELECT i, i * 7 % 1000 AS k, md5(i::VARCHAR) AS s FROM range(300000) r(i)"


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_copy_is_byte_equal_to_the_same_copy_written_locally(con, rig, tmp_path, fmt):
    uploads(con)
    options = "FORMAT parquet, COMPRESSION uncompressed" if fmt == "parquet" else "FORMAT csv"
    local = tmp_path / f"out.{fmt}"
    key = f"uploads/out.{fmt}"
    con.execute(f"COPY ({ROWS}) TO '{local}' ({options})")
    con.execute(f"COPY ({ROWS}) TO '{rig.url(key)}' ({options})")
    expected = local.read_bytes()
    assert len(expected) > 2 * PART
    assert sha(stored(rig, key)) == sha(expected)
    counters = stats(con)
    assert counters["files_uploaded"] == 1, counters
    assert counters["upload_parts"] == -(-len(expected) // PART), counters
    assert counters["upload_bytes"] == len(expected), counters
    assert counters["uploads_aborted"] == 0, counters
    assert 0 < counters["upload_memory_peak"] <= counters["upload_memory_limit"], counters
    assert counters["upload_close_seconds"] > 0, counters
    assert open_multipart_uploads(rig) == []
    # and DuckDB reads it back as written
    assert con.execute(f"SELECT count(*), sum(i) FROM '{rig.url(key)}'").fetchone() == (300000, 44999850000)


@pytest.mark.parametrize("size", [0, 1, PART - 1, PART, PART + 1, 2 * PART + 1])
def test_sizes_around_a_part(con, rig, tmp_path, size):
    """A CSV of one line of `size` bytes (no header): one PUT up to one part, a multipart upload beyond."""
    uploads(con)
    key = f"uploads/size-{size}.csv"
    query = "SELECT 1 WHERE false" if size == 0 else f"SELECT repeat('x', {size - 1})"
    con.execute(f"COPY ({query}) TO '{rig.url(key)}' (FORMAT csv, HEADER false, QUOTE '')")
    expected = b"" if size == 0 else b"x" * (size - 1) + b"\n"
    assert stored(rig, key) == expected
    counters = stats(con)
    assert counters["files_uploaded"] == 1, counters
    assert counters["upload_parts"] == max(1, -(-size // PART)), counters
    assert open_multipart_uploads(rig) == []


def copy_to_folders(con, rig, tmp_path, query: str, options: str, name: str) -> tuple[dict, dict]:
    """COPYs `query` into a local folder and into uploads/<name>/: the sha256 of each file, by relative path."""
    con.execute(f"COPY ({query}) TO '{tmp_path / name}' ({options})")
    con.execute(f"COPY ({query}) TO '{rig.url('uploads/' + name)}' ({options})")
    local = {
        str(path.relative_to(tmp_path / name)): sha(path.read_bytes())
        for path in (tmp_path / name).rglob("*")
        if path.is_file()
    }
    listed = rig.s3.list_objects_v2(Bucket=rig.bucket, Prefix=f"uploads/{name}/")["Contents"]
    remote = {item["Key"].removeprefix(f"uploads/{name}/"): sha(stored(rig, item["Key"])) for item in listed}
    return local, remote


def test_partitioned_copy_writes_every_file_as_locally(con, rig, tmp_path):
    uploads(con)
    options = "FORMAT parquet, PARTITION_BY (k), COMPRESSION uncompressed"
    query = "SELECT i, i % 7 AS k, md5(i::VARCHAR) AS s FROM range(400000) r(i)"
    expected, got = copy_to_folders(con, rig, tmp_path, query, options, "parts")
    assert len(expected) == 7
    assert got == expected
    assert stats(con)["files_uploaded"] == 7
    assert open_multipart_uploads(rig) == []


def test_a_copy_into_64_files_holds_what_it_wrote_not_a_part_per_file(con, rig, tmp_path):
    """64 files open at once, each under a part: their buffers hold what was written (charged by the MiB as they
    fill), not 64 parts of 16 MiB, so the COPY fits a budget of 16 parts and every file is as written locally."""
    uploads(con, part_size=16 << 20)
    query = "SELECT i, i % 64 AS k, md5(i::VARCHAR) AS s FROM range(640000) r(i)"
    expected, got = copy_to_folders(con, rig, tmp_path, query, "FORMAT csv, PARTITION_BY (k)", "many")
    assert len(expected) == 64
    assert got == expected
    counters = stats(con)
    assert counters["files_uploaded"] == 64, counters
    assert counters["upload_memory_peak"] <= 100 << 20, counters  # 64 files of ~0.7 MiB, 1 MiB steps
    assert open_multipart_uploads(rig) == []


def test_more_files_than_the_budget_holds_go_on_from_local_disk(con, rig, tmp_path):
    """A PARTITION_BY into 64 files under `memory_limit = '1GB'` with the smallest upload budget (16 MiB, three
    parts of 5 MiB): the files being filled hold it all and none can be sent yet, so parts go on in temporary files
    on local disk rather than the COPY failing or the budget being exceeded; every file is as written locally."""
    uploads(con)
    con.execute("SET memory_limit = '1GB'")
    con.execute("SET GLOBAL httpfs2_write_memory_limit_bytes = 16777216")
    query = "SELECT i, i % 64 AS k, md5(i::VARCHAR) || md5((i + 1)::VARCHAR) AS s FROM range(1500000) r(i)"
    try:
        expected, got = copy_to_folders(con, rig, tmp_path, query, "FORMAT csv, PARTITION_BY (k)", "spilled")
    finally:
        con.execute("RESET GLOBAL httpfs2_write_memory_limit_bytes")
    assert len(expected) == 64
    assert got == expected
    counters = stats(con)
    assert counters["files_uploaded"] == 64, counters
    if not DUCKDB_2:
        # DuckDB 2.0 writes a PARTITION_BY so that its files never hold the budget all at once: nothing spills there.
        assert counters["upload_bytes_spilled"] > 0, counters
    assert counters["upload_memory_peak"] <= 16 << 20, counters
    assert open_multipart_uploads(rig) == []


def test_with_writes_off_httpfs_writes_the_file(con, rig, tmp_path):
    uploads(con, enabled=False)
    local = tmp_path / "off.csv"
    con.execute(f"COPY ({ROWS}) TO '{local}' (FORMAT csv)")
    con.execute(f"COPY ({ROWS}) TO '{rig.url('uploads/off.csv')}' (FORMAT csv)")
    assert sha(stored(rig, "uploads/off.csv")) == sha(local.read_bytes())
    assert stats(con)["files_uploaded"] == 0


def test_a_failed_part_fails_the_copy_and_leaves_the_old_object(con, rig):
    """The proxy cuts every upstream connection after 1 MiB: the begin passes, every part fails (httpfs's retries
    included); the COPY fails naming the file and the part, the upload is aborted, the old object stays."""
    key = "uploads/overwritten.csv"
    old = os.urandom(1000)
    rig.put_object(key, old)
    uploads(con)
    rig.add_toxic("cut", "limit_data", {"bytes": 1 << 20}, stream="upstream")
    with pytest.raises(duckdb.Error) as error:
        con.execute(f"COPY ({ROWS}) TO '{rig.url(key)}' (FORMAT csv)")
    rig.remove_toxics()
    message = str(error.value)
    assert key in message and "part" in message, message
    assert rig.secret_key not in message and rig.access_key not in message
    assert stored(rig, key) == old
    assert open_multipart_uploads(rig) == []
    counters = stats(con)
    assert counters["uploads_aborted"] == 1 and counters["files_uploaded"] == 0, counters


def copy_failing_mid_way(con, url: str, filesystem: str = "S3FileSystem"):
    """COPYs a query that fails after its first 600000 rows to `url`: the upload had parts sent, and is aborted."""
    failing = "SELECT CASE WHEN i < 600000 THEN md5(i::VARCHAR) ELSE error('boom at ' || i) END FROM range(700000) r(i)"
    with pytest.raises(duckdb.Error, match="boom"):
        con.execute(f"COPY ({failing}) TO '{url}' (FORMAT csv)")
    counters = stats(con, filesystem)
    assert counters["upload_parts"] >= 2, counters  # the failure came after parts were sent
    assert counters["uploads_aborted"] == 1 and counters["files_uploaded"] == 0, counters


def test_a_query_failing_mid_copy_aborts_the_upload(con, rig):
    """Parts are sent while the query still runs; it then fails: the file is dropped without a close, the upload
    aborted, and the key keeps its old object."""
    key = "uploads/interrupted.csv"
    old = os.urandom(1000)
    rig.put_object(key, old)
    uploads(con)
    copy_failing_mid_way(con, rig.url(key))
    assert stored(rig, key) == old
    assert open_multipart_uploads(rig) == []


def test_a_budget_smaller_than_a_part_is_an_error_naming_the_settings(con, rig):
    uploads(con, part_size=32 << 20)
    con.execute("SET GLOBAL httpfs2_write_memory_limit_bytes = 16777216")
    try:
        with pytest.raises(duckdb.Error) as error:
            con.execute(f"COPY ({ROWS}) TO '{rig.url('uploads/budget.csv')}' (FORMAT csv)")
        assert "httpfs2_write_memory_limit_bytes" in str(error.value)
        assert "httpfs2_write_part_size_bytes" in str(error.value)
    finally:
        con.execute("RESET GLOBAL httpfs2_write_memory_limit_bytes")
    assert open_multipart_uploads(rig) == []


UPLOAD_ERRORS = (duckdb.IOException, duckdb.HTTPException)


def slow_upstream(rig, kb_per_second=5000):
    """Each connection's uploads capped at `kb_per_second` KB/s (5 MB/s by default: an object of a few parts is still
    being sent well after its COPY returned)."""
    rig.add_toxic("rate-up", "bandwidth", {"rate": kb_per_second}, stream="upstream")


def wait_until(condition, what: str, seconds: float = 30):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)


def copy_while(con, rig, key: str, local, during) -> dict:
    """COPYs ROWS to `key` on a thread while `during()` acts on the proxy, then lifts every toxic: the COPY must
    succeed with the bytes of the local COPY `local` and leave no upload open. httpfs2's stats after it."""
    failures = []

    def copy():
        try:
            con.execute(f"COPY ({ROWS}) TO '{rig.url(key)}' (FORMAT csv)")
        except duckdb.Error as error:
            failures.append(error)

    thread = threading.Thread(target=copy)
    thread.start()
    try:
        during()
    finally:
        rig.remove_toxics()
        thread.join()
    assert failures == []
    assert sha(stored(rig, key)) == sha(local.read_bytes())
    assert open_multipart_uploads(rig) == []
    return stats(con)


def test_a_begin_whose_answer_was_lost_leaves_no_upload_behind(con, rig, tmp_path):
    """CreateMultipartUpload reaches the store, which begins an upload, and its answer is lost (every answer is cut
    while the toxic is on): httpfs2 sends it again, and once one answer arrives the COPY goes on. The uploads the lost
    answers began are aborted; the object is the local COPY's bytes."""
    key = "uploads/lost-begin.csv"
    local = tmp_path / "lost-begin.csv"
    con.execute(f"COPY ({ROWS}) TO '{local}' (FORMAT csv)")
    uploads(con)
    # Attempts 0, 0, 300, 600, ... ms apart: the toxic goes once the first lost answer's upload shows.
    con.execute("SET http_retries = 8; SET http_retry_wait_ms = 300; SET http_retry_backoff = 1")
    rig.add_toxic("no-answers", "limit_data", {"bytes": 0}, stream="downstream")
    counters = copy_while(
        con,
        rig,
        key,
        local,
        lambda: wait_until(
            lambda: any(upload["Key"] == key for upload in open_multipart_uploads(rig)), "a lost begin's upload"
        ),
    )
    assert counters["files_uploaded"] == 1 and counters["uploads_aborted"] >= 1, counters


def test_a_completion_whose_answer_was_lost_is_the_object(con, rig, tmp_path):
    """CompleteMultipartUpload takes effect and its answer is lost: httpfs2 sends it again, and the COPY succeeds with
    the object complete (versitygw, as S3, answers a repeated completion with its result; a store that answers
    NoSuchUpload instead is met by the ETag check of Completed). Every request waits 500 ms in the proxy, so that
    the answers can be cut after the last part is stored and before the completion arrives. With http_retries = 0
    the same COPY fails with httpfs's error: the answer is lost."""
    key = "uploads/lost-completion.csv"
    local = tmp_path / "lost-completion.csv"
    con.execute(f"COPY ({ROWS}) TO '{local}' (FORMAT csv)")
    parts = -(-local.stat().st_size // PART)
    uploads(con)
    con.execute("SET http_retries = 8; SET http_retry_wait_ms = 300; SET http_retry_backoff = 1")
    rig.add_toxic("slow-requests", "latency", {"latency": 500}, stream="upstream")

    def all_parts_stored():
        open_now = [upload for upload in open_multipart_uploads(rig) if upload["Key"] == key]
        listed = open_now and rig.s3.list_parts(Bucket=rig.bucket, Key=key, UploadId=open_now[0]["UploadId"])
        return bool(listed) and len(listed.get("Parts", [])) == parts

    def cut_the_answers_once_the_parts_are_stored():
        wait_until(all_parts_stored, "the parts")
        rig.add_toxic("no-answers", "timeout", {"timeout": 100}, stream="downstream")
        wait_until(lambda: stored_keys(rig, key) == [key], "the completion")

    counters = copy_while(con, rig, key, local, cut_the_answers_once_the_parts_are_stored)
    assert counters["files_uploaded"] == 1 and counters["uploads_aborted"] == 0, counters


@pytest.mark.parametrize(
    "toxic,attributes,toxicity",
    [
        ("reset_peer", {"timeout": 100}, 0.4),
        ("timeout", {"timeout": 500}, 0.3),
        ("limit_data", {"bytes": 3_000_000}, 0.5),
    ],
)
def test_a_flaky_upload_gives_the_object_or_an_error_never_a_partial_one(
    con, rig, tmp_path, toxic, attributes, toxicity
):
    """Upstream faults on some connections while parts are sent (a cap of 40 MB/s keeps a part on the wire long
    enough to be hit): httpfs's retries either carry the COPY through, and the object is byte-equal to the local
    file, or the COPY fails with httpfs's error type and the key keeps its old object; no upload is left open."""
    key = f"uploads/flaky-{toxic}.csv"
    old = os.urandom(1000)
    rig.put_object(key, old)
    local = tmp_path / "flaky.csv"
    con.execute(f"COPY ({ROWS}) TO '{local}' (FORMAT csv)")
    uploads(con)
    con.execute("SET http_timeout = 3; SET http_retries = 2; SET http_retry_wait_ms = 10")
    slow_upstream(rig, 40000)
    rig.add_toxic(toxic, toxic, attributes, stream="upstream", toxicity=toxicity)
    try:
        con.execute(f"COPY ({ROWS}) TO '{rig.url(key)}' (FORMAT csv)")
        error = None
    except UPLOAD_ERRORS as caught:
        error = caught
    rig.remove_toxics()
    counters = stats(con)
    if error is None:
        assert sha(stored(rig, key)) == sha(local.read_bytes())
        assert counters["files_uploaded"] == 1 and counters["uploads_aborted"] == 0, counters
    else:
        message = str(error)
        assert key in message, message
        assert rig.secret_key not in message and rig.access_key not in message
        assert stored(rig, key) == old
        assert counters["files_uploaded"] == 0, counters
    assert open_multipart_uploads(rig) == []


def copy_interrupted(con, rig, sql: str, after_seconds: float):
    """Runs `sql` and interrupts it after `after_seconds`: it must fail as interrupted. Every toxic is lifted after."""
    timer = threading.Timer(after_seconds, con.interrupt)
    timer.start()
    try:
        with pytest.raises(duckdb.InterruptException):
            con.execute(sql)
    finally:
        timer.cancel()
        rig.remove_toxics()


def test_an_interrupted_copy_aborts_the_upload_and_keeps_the_old_object(con, rig):
    """The COPY is interrupted while it runs, its writes held back by a budget of three parts sent at 5 MB/s each:
    no object is made, the upload is aborted (after the parts in flight end: none writes after the query returned),
    and the key keeps its old object."""
    key = "uploads/interrupted-by-user.csv"
    old = os.urandom(1000)
    rig.put_object(key, old)
    uploads(con)
    con.execute("SET GLOBAL httpfs2_write_memory_limit_bytes = 16777216")
    slow_upstream(rig)
    try:
        copy_interrupted(con, rig, f"COPY ({ROWS.replace('300000', '3000000')}) TO '{rig.url(key)}' (FORMAT csv)", 1.5)
    finally:
        con.execute("RESET GLOBAL httpfs2_write_memory_limit_bytes")
    counters = stats(con)
    assert counters["files_uploaded"] == 0 and counters["uploads_aborted"] == 1, counters
    assert counters["upload_parts"] >= 1, counters  # interrupted after parts were sent
    assert stored(rig, key) == old
    assert open_multipart_uploads(rig) == []


def test_several_connections_write_at_once_within_the_budget(con, rig, tmp_path):
    """Four connections of one database COPY at once under the smallest budget (16 MiB, three 5 MiB parts and a
    MiB): writers wait for parts in flight instead of exceeding it, and every object is as written locally."""
    uploads(con)
    con.execute("SET GLOBAL httpfs2_write_memory_limit_bytes = 16777216")
    con.execute("SET GLOBAL threads = 1; SET GLOBAL httpfs2_parallel_read_enabled = true")
    con.execute(f"SET GLOBAL httpfs2_write_part_size_bytes = {PART}")
    slow_upstream(rig, 50000)
    queries = {
        f"uploads/concurrent-{n}.csv": f"SELECT i + {n} AS i, md5((i * {n})::VARCHAR) FROM range(250000) r(i)"
        for n in range(4)
    }
    errors = []

    def write(key, query):
        cursor = con.cursor()
        try:
            cursor.execute(f"COPY ({query}) TO '{rig.url(key)}' (FORMAT csv)")
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)
        finally:
            cursor.close()

    try:
        writers = [threading.Thread(target=write, args=item) for item in queries.items()]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=240)
    finally:
        rig.remove_toxics()
        con.execute("RESET GLOBAL httpfs2_write_memory_limit_bytes; RESET GLOBAL httpfs2_write_part_size_bytes")
    assert errors == []
    for key, query in queries.items():
        local = tmp_path / key.replace("/", "_")
        con.execute(f"COPY ({query}) TO '{local}' (FORMAT csv)")
        assert sha(stored(rig, key)) == sha(local.read_bytes()), key
    counters = stats(con)
    assert counters["files_uploaded"] == 4, counters
    assert counters["upload_parts_in_flight_peak"] >= 2, counters
    assert counters["upload_memory_peak"] <= 16 << 20, counters
    assert open_multipart_uploads(rig) == []


@needs_registry_package("duckdb-extension-ducklake")
def test_a_ducklake_insert_is_read_back_as_inserted(con, rig, tmp_path):
    """DuckLake writes its data files to s3:// through the uploader and commits its metadata right after the
    writes close: the table reads back with the same rows, and every data file is a complete parquet object."""
    uploads(con)
    con.execute("SET threads = 2")
    con.execute(f"LOAD '{ducklake_extension()}'")
    catalog = tmp_path / "lake.ducklake"
    con.execute(f"ATTACH 'ducklake:{catalog}' AS lake (DATA_PATH '{rig.url('uploads/lake/')}')")
    try:
        con.execute("CREATE TABLE lake.t AS SELECT i, md5(i::VARCHAR) AS s FROM range(200000) r(i)")
        con.execute("INSERT INTO lake.t SELECT i, md5(i::VARCHAR) FROM range(200000, 500000) r(i)")
        check = "SELECT count(*), sum(i), bit_xor(hash(s)) FROM {}"
        expected = con.execute(check.format("(SELECT i, md5(i::VARCHAR) AS s FROM range(500000) r(i))")).fetchone()
        assert con.execute(check.format("lake.t")).fetchone() == expected
        files = [row[0] for row in con.execute("SELECT data_file FROM ducklake_list_files('lake', 't')").fetchall()]
    finally:
        con.execute("DETACH lake")
    assert len(files) >= 2
    for url in files:
        key = url.removeprefix(f"s3://{rig.bucket}/")
        data = stored(rig, key)
        assert data[:4] == b"PAR1" and data[-4:] == b"PAR1", url
    assert stats(con)["files_uploaded"] >= len(files)
    assert open_multipart_uploads(rig) == []


def test_a_file_read_then_overwritten_reads_back_what_was_written(con, rig):
    """A parquet file read with read-ahead on (its footer and tail remembered for its version), then overwritten by
    the uploader: the next read sees the new object, never bytes of the old one."""
    uploads(con)
    con.execute("SET httpfs2_parallel_read_min_latency_ms = 0")  # read ahead at the rig's speed too
    url = rig.url("uploads/reread.parquet")
    con.execute(f"COPY (SELECT i FROM range(1000) r(i)) TO '{url}' (FORMAT parquet)")
    for _ in range(2):
        assert con.execute(f"SELECT count(*), sum(i) FROM '{url}'").fetchone() == (1000, 499500)
    assert stats(con)["footer_bytes_reused"] > 0  # the second read used the remembered footer
    con.execute(f"COPY (SELECT i * 2 AS i FROM range(2000) r(i)) TO '{url}' (FORMAT parquet)")
    assert con.execute(f"SELECT count(*), sum(i) FROM '{url}'").fetchone() == (2000, 3998000)


# --- closes in the background: the statement's commit waits for its objects ---

PARTITIONED = "SELECT i, i % 21 AS k, md5(i::VARCHAR) AS s FROM range(600000) r(i)"


def test_a_partitioned_copy_completes_every_file_before_it_returns(con, rig, tmp_path):
    """DuckDB closes the 21 files of a PARTITION_BY one after another; their completions go on in the background
    and the COPY returns once every one is complete: each file reads back as written locally."""
    uploads(con)
    rig.add_toxic("latency", "latency", {"latency": 20})
    try:
        expected, got = copy_to_folders(con, rig, tmp_path, PARTITIONED, "FORMAT csv, PARTITION_BY (k)", "closes")
    finally:
        rig.remove_toxics()
    assert len(expected) == 21
    assert got == expected
    assert stats(con)["files_uploaded"] == 21
    assert open_multipart_uploads(rig) == []


def test_a_file_is_read_in_the_same_transaction_right_after_its_copy(con, rig, tmp_path):
    """BEGIN; COPY; read it; COMMIT: the read waits for the object closed in the background and sees every byte."""
    uploads(con)
    key = "uploads/same-transaction.csv"
    local = tmp_path / "same.csv"
    con.execute(f"COPY ({ROWS}) TO '{local}' (FORMAT csv)")
    check = "SELECT count(*), sum(i), bit_xor(hash(s)) FROM read_csv('{}')"
    con.execute("BEGIN")
    con.execute(f"COPY ({ROWS}) TO '{rig.url(key)}' (FORMAT csv)")
    assert con.execute(check.format(rig.url(key))).fetchone() == con.execute(check.format(local)).fetchone()
    con.execute("COMMIT")
    assert sha(stored(rig, key)) == sha(local.read_bytes())
    assert open_multipart_uploads(rig) == []


@pytest.mark.parametrize("end", ["ROLLBACK", "close"])
def test_a_transaction_rolled_back_or_left_leaves_the_old_objects_and_no_upload(con, rig, end):
    """BEGIN; COPY to keys that hold objects; then ROLLBACK, or the connection closed in the transaction: the
    uploads still sending are aborted, every key keeps its old object, and no multipart upload is left."""
    keys = [f"uploads/rolled-back-{end}-{n}.csv" for n in range(2)]
    old = os.urandom(1000)
    for key in keys:
        rig.put_object(key, old)
    cursor = con.cursor()
    uploads(cursor)
    slow_upstream(rig)
    try:
        cursor.execute("BEGIN")
        for key in keys:
            cursor.execute(f"COPY ({ROWS}) TO '{rig.url(key)}' (FORMAT csv)")
        if end == "ROLLBACK":
            cursor.execute("ROLLBACK")
        cursor.close()
    finally:
        rig.remove_toxics()
    for key in keys:
        assert stored(rig, key) == old, key
    wait_until(lambda: open_multipart_uploads(rig) == [], "the aborts of the parts still in flight")


def test_an_interrupted_partitioned_copy_leaves_each_file_complete_or_absent(con, rig, tmp_path):
    """A PARTITION_BY COPY interrupted while its files are sent: the COPY fails as interrupted, each of its files is
    complete (byte-equal to the local COPY) or absent, and no multipart upload is left."""
    uploads(con)
    local = tmp_path / "interrupted"
    con.execute(f"COPY ({PARTITIONED}) TO '{local}' (FORMAT csv, PARTITION_BY (k))")
    slow_upstream(rig, 200)  # each file of ~1.1 MB takes ~5 s
    copy_interrupted(
        con, rig, f"COPY ({PARTITIONED}) TO '{rig.url('uploads/interrupted/')}' (FORMAT csv, PARTITION_BY (k))", 1.0
    )
    wait_until(lambda: open_multipart_uploads(rig) == [], "the aborts of the parts still in flight")
    for key in stored_keys(rig, "uploads/interrupted/"):
        path = local / key.removeprefix("uploads/interrupted/")
        assert sha(stored(rig, key)) == sha(path.read_bytes()), key

"""Faults injected by toxiproxy mid-read and interrupted queries: correct bytes or a clear error, promptly;
never a hang, a crash or a wrong byte."""

import re
import threading
import time

import duckdb
import pytest

from helpers import HOST_READ_CUT, SPLIT_HOST_PIECES, blob_sha, host_read_sizes, server_requests, sha256, stats

SPLIT = (
    "SET httpfs2_parallel_read_enabled = true; SET httpfs2_parallel_read_chunk_size_bytes = 1048576; "
    "SET httpfs2_parallel_read_max_fanout = 4" + SPLIT_HOST_PIECES
)
# httpfs2_parallel_read_min_bytes left at its default: reads under it are not split.
SPLIT_MIN_BYTES = 2 << 20
# Bounded httpfs behaviour so a failing read gives up within seconds.
BOUNDED = "SET http_timeout = 3; SET http_retries = 1; SET http_retry_wait_ms = 10"
READ_ERRORS = (duckdb.IOException, duckdb.HTTPException)


def read_or_error(con, url):
    start = time.monotonic()
    try:
        return blob_sha(con, url), None, time.monotonic() - start
    except READ_ERRORS as error:
        return None, error, time.monotonic() - start


def assert_clear_read_error(error, rig, key: str, size: int) -> bool:
    """A failed read is an IOException or HTTPException that names the object and, when a sub-read failed, its bytes,
    with httpfs's own words for what the network did; it never shows the keys. True when a sub-read failed, False when
    the open's HEAD did (httpfs's error, before httpfs2 splits anything)."""
    assert isinstance(error, READ_ERRORS), repr(error)
    message = str(error)
    assert rig.secret_key not in message and rig.access_key not in message
    file = re.escape(rig.url(key))
    url = re.escape(f"http://{rig.proxy_endpoint}/{rig.bucket}/{key}")
    sub_read = re.search(
        rf"httpfs2: parallel read of '{file}' failed: sub-read of bytes (\d+)-(\d+) \(of the read of (\d+) bytes at "
        rf"offset (\d+)\) failed: ([^']+ error for HTTP GET to '{url}'|HTTP GET of bytes \d+-\d+ of '{file}' failed: )",
        message,
    )
    if sub_read is None:
        # httpfs's own error: the open's HEAD, or in DuckDB 2.0 the GET of its last read of the object, under what
        # httpfs2 splits (the rest of what 2.0 cuts the read into).
        requests = "HEAD|GET" if min(host_read_sizes(size)) < SPLIT_MIN_BYTES else "HEAD"
        assert re.search(rf"^IO Error: [^']+ error for HTTP ({requests}) to '{url}'$", message), message
        return False
    first, last, read_size, read_offset = (int(group) for group in sub_read.groups()[:4])
    # The read the host made: the whole object in one (1.5), or one of the 2 MiB reads 2.0 cuts it into.
    assert read_size in host_read_sizes(size) and read_offset % (HOST_READ_CUT or size) == 0, message
    assert read_offset <= first <= last < read_offset + read_size <= size, message
    return True


def test_connection_cut_mid_body_fails_the_read_naming_file_and_range(con, rig, big_object):
    key, data = big_object
    con.execute(SPLIT)
    con.execute(BOUNDED)
    # Every connection is closed after 300 KB: the HEAD of the open passes, every 1 MiB sub-read is cut.
    rig.add_toxic("cut", "limit_data", {"bytes": 300_000})
    digest, error, seconds = read_or_error(con, rig.url(key))
    assert digest is None, "a cut body must not be returned as data"
    assert isinstance(error, duckdb.IOException)
    # The HEAD passes: a sub-read fails; in DuckDB 2.0 also the short last read it cuts the read into, which httpfs2
    # passes to httpfs whole, on a kept connection that carried its 300 KB already.
    assert assert_clear_read_error(error, rig, key, len(data)) or HOST_READ_CUT, "a sub-read fails"
    assert seconds < 60
    assert stats(con)["errors"] >= 1


# Toxics that break connections, on some of them (toxicity): every sub-read is a connection of its own, so a read of
# 25 pieces (26 connections with the HEAD, on this rig) meets the fault with near certainty: the least likely, timeout,
# misses both reads with odds of 0.8^52.
@pytest.mark.parametrize(
    "toxic,attributes,toxicity",
    [
        ("reset_peer", {"timeout": 50}, 0.3),
        ("timeout", {"timeout": 500}, 0.2),
        # cuts a 1 MiB sub-read after 600 KB
        ("limit_data", {"bytes": 600_000}, 0.5),
    ],
)
def test_flaky_network_gives_exact_bytes_or_a_clear_error(con, rig, big_object, toxic, attributes, toxicity):
    key, data = big_object
    con.execute(SPLIT)
    con.execute(BOUNDED)
    clean_gets = server_requests(rig, lambda: blob_sha(con, rig.url(key)))["GetObject"]
    rig.add_toxic(toxic, toxic, attributes, toxicity=toxicity)
    faults_seen = 0
    outcomes = []
    # Reads until two met the fault, at most four: connections are kept between requests, so a read opens few and
    # may miss a toxic that hits a connection at a time.
    for _ in range(4):
        if faults_seen >= 2:
            break
        con.execute("CALL httpfs2_reset_stats()")
        requests = server_requests(rig, lambda: outcomes.append(read_or_error(con, rig.url(key))))
        digest, error, seconds = outcomes[-1]
        assert seconds < 90
        if error is None:
            assert digest == sha256(data)
            # a fault that did not fail the read was retried: more GETs than the read without the toxic
            faults_seen += requests.get("GetObject", 0) > clean_gets
        else:
            if assert_clear_read_error(error, rig, key, len(data)):
                assert stats(con)["errors"] >= 1, "a failed sub-read is counted"
            faults_seen += 1
    assert faults_seen, f"the {toxic} toxic never hit a request: the test proved nothing"
    rig.remove_toxics()
    # the connection and the pool stay usable
    assert blob_sha(con, rig.url(key)) == sha256(data)


def test_sliced_answers_give_exact_bytes(con, rig, objects):
    """Answers in pieces of at most 2.5 KB, with 0.5 ms between them: the bytes must be exact, with no error and no
    request repeated."""
    key = "blobs/sliced.bin"
    data = objects.put(key, 6 * 1024 * 1024 + 777)
    con.execute(SPLIT)
    con.execute(BOUNDED)
    # Slow answers are hedged (sent again) by default: here each GET must be sent once.
    con.execute("SET httpfs2_hedge_reads = false")
    # A clean read first: the head of the server's first range answer of an object is awaited alone, later reads of
    # it start in parallel at once.
    clean = server_requests(rig, lambda: blob_sha(con, rig.url(key)))
    slice_bytes, delay_s = 1500 + 1000, 0.0005
    rig.add_toxic("slicer", "slicer", {"average_size": 1500, "size_variation": 1000, "delay": int(delay_s * 1e6)})
    con.execute("CALL httpfs2_reset_stats()")
    digest = []
    sliced = server_requests(rig, lambda: digest.append(blob_sha(con, rig.url(key))))
    assert digest == [sha256(data)]
    split = stats(con)
    # No request repeated: one GET a sub-read, and the opens' requests as in the clean read; in DuckDB 2.0 also one a
    # read it sent unsplit (the last of the 2 MiB reads 2.0 cuts the read into, under what is split).
    assert sliced["GetObject"] == split["sub_reads"] + split["reads_passed_through"] + split["checked_gets"], (
        sliced,
        split,
    )
    assert {op: n for op, n in sliced.items() if op != "GetObject"} == {
        op: n for op, n in clean.items() if op != "GetObject"
    }
    # Every slice of a sub-read's answer is followed by the delay: the sub-reads, however parallel, took at least
    # this long in all; the read without the toxic takes a fraction of it.
    assert split["sub_read_bytes"] >= len(data) - 2 * 1024 * 1024, "the read was not split"
    assert split["sub_read_seconds"] >= split["sub_read_bytes"] // slice_bytes * delay_s - split["sub_reads"] * delay_s


def test_interrupt_stops_a_long_split_read_promptly(con, rig, big_object):
    key, data = big_object
    # 24 MiB in 64 KiB pieces, two at a time, 100 ms per piece: about 19 s if it were not interrupted.
    con.execute(
        "SET httpfs2_parallel_read_enabled = true; SET httpfs2_parallel_read_chunk_size_bytes = 65536; "
        "SET httpfs2_parallel_read_min_bytes = 65536; SET httpfs2_parallel_read_max_fanout = 2" + SPLIT_HOST_PIECES
    )
    rig.set_latency(100)
    outcome = {}

    def run():
        try:
            outcome["digest"] = blob_sha(con, rig.url(key))
        except duckdb.Error as error:
            outcome["error"] = error
        outcome["end"] = time.monotonic()

    reader = threading.Thread(target=run)
    reader.start()
    time.sleep(1.5)
    interrupted_at = time.monotonic()
    con.interrupt()
    reader.join(timeout=30)
    assert not reader.is_alive()
    assert isinstance(outcome.get("error"), duckdb.InterruptException), outcome
    assert outcome["end"] - interrupted_at < 5, "the read went on long after the interrupt"
    assert stats(con)["sub_reads"] < 300, "pieces kept starting after the interrupt"
    rig.remove_toxics()
    assert blob_sha(con, rig.url(key)) == sha256(data)

"""Faults injected by toxiproxy mid-read and interrupted queries: correct bytes or a clear error, promptly;
never a hang, a crash or a wrong byte."""

import threading
import time

import duckdb
import pytest

from helpers import blob_sha, sha256, stats

SPLIT = (
    "SET httpfs2_parallel_read_enabled = true; SET httpfs2_parallel_read_chunk_size_bytes = 1048576; "
    "SET httpfs2_parallel_read_max_fanout = 4"
)
# Bounded httpfs behaviour so a failing read gives up within seconds.
BOUNDED = "SET http_timeout = 3; SET http_retries = 1; SET http_retry_wait_ms = 10"
READ_ERRORS = (duckdb.IOException, duckdb.HTTPException)


def read_or_error(con, url):
    start = time.monotonic()
    try:
        return blob_sha(con, url), None, time.monotonic() - start
    except READ_ERRORS as error:
        return None, error, time.monotonic() - start


def test_connection_cut_mid_body_fails_the_read_naming_file_and_range(con, rig, big_object):
    key, data = big_object
    con.execute(SPLIT)
    con.execute(BOUNDED)
    # Every connection is closed after 300 KB: the HEAD of the open passes, every 1 MiB sub-read is cut.
    rig.add_toxic("cut", "limit_data", {"bytes": 300_000})
    digest, error, seconds = read_or_error(con, rig.url(key))
    assert digest is None, "a cut body must not be returned as data"
    assert isinstance(error, duckdb.IOException)
    message = str(error)
    assert f"httpfs2: parallel read of '{rig.url(key)}' failed: sub-read of bytes" in message
    assert rig.secret_key not in message and rig.access_key not in message
    assert seconds < 60
    assert stats(con)["errors"] >= 1


@pytest.mark.parametrize(
    "toxic,attributes,toxicity",
    [
        ("reset_peer", {"timeout": 50}, 0.3),
        ("slicer", {"average_size": 1500, "size_variation": 1000, "delay": 10}, 1.0),
        ("timeout", {"timeout": 500}, 0.2),
        ("limit_data", {"bytes": 2_000_000}, 0.5),
    ],
)
def test_flaky_network_gives_exact_bytes_or_a_clear_error(con, rig, big_object, toxic, attributes, toxicity):
    key, data = big_object
    con.execute(SPLIT)
    con.execute(BOUNDED)
    rig.add_toxic(toxic, toxic, attributes, toxicity=toxicity)
    for _ in range(2):
        digest, error, seconds = read_or_error(con, rig.url(key))
        assert seconds < 90
        if error is None:
            assert digest == sha256(data)
        else:
            assert str(error), "errors must say what failed"
    rig.remove_toxics()
    # the connection and the pool stay usable
    assert blob_sha(con, rig.url(key)) == sha256(data)


def test_interrupt_stops_a_long_split_read_promptly(con, rig, big_object):
    key, data = big_object
    # 24 MiB in 64 KiB pieces, two at a time, 100 ms per piece: about 19 s if it were not interrupted.
    con.execute(
        "SET httpfs2_parallel_read_enabled = true; SET httpfs2_parallel_read_chunk_size_bytes = 65536; "
        "SET httpfs2_parallel_read_min_bytes = 65536; SET httpfs2_parallel_read_max_fanout = 2"
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

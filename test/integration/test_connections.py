"""httpfs2's own range GETs keep their connections per host, as S3 clients do (issue 43 item 7): from a server that
keeps connections alive (the rig with `keep-alive`; the session's rig closes every connection, as versitygw does by
default), reading many objects opens about as many connections as GETs run at once, not a set per object."""

import hashlib
import os
import time

import pytest

from bench.connections import Connections
from helpers import SPLIT_HOST_PIECES, stats
from rig import S3Rig, duckdb_connect
from rig.s3rig import count_requests

OBJECTS, SIZE = 8, 4 << 20
# Split reads alone: read-ahead would fetch the objects after the first whole, ahead of their reads (test_read_ahead).
SPLIT = (
    "SET httpfs2_parallel_read_enabled = true; SET httpfs2_read_ahead_enabled = false; "
    "SET httpfs2_parallel_read_chunk_size_bytes = 1048576; SET httpfs2_parallel_read_min_bytes = 1048576"
    + SPLIT_HOST_PIECES
)


@pytest.fixture(scope="module")
def kept_rig():
    with S3Rig(bucket="kept", access_log=True, connections="keep-alive") as started:
        started.data = {f"many/{n}.bin": os.urandom(SIZE) for n in range(OBJECTS)}
        for key, data in started.data.items():
            started.put_object(key, data)
        yield started


@pytest.mark.parametrize("client", ["curl", "httplib"])
def test_range_gets_of_many_objects_share_kept_connections(kept_rig, client):
    con = duckdb_connect(kept_rig)
    con.execute(f"SET httpfs_client_implementation = '{client}'; SET enable_external_file_cache = false")
    con.execute(f"SET threads = 1; {SPLIT}; CALL httpfs2_reset_stats()")
    log_offset = kept_rig.access_log_path.stat().st_size
    connections = Connections(kept_rig.proxy_port)
    connections.start()
    try:
        rows = con.execute(
            "SELECT parse_filename(filename), sha256(content) FROM read_blob('s3://kept/many/*.bin') ORDER BY 1"
        ).fetchall()
    finally:
        connections.stop()
    assert rows == sorted((key.split("/")[1], hashlib.sha256(data).hexdigest()) for key, data in kept_rig.data.items())
    time.sleep(0.2)  # the access log is written after the answer
    gets = count_requests(kept_rig.access_log_path, log_offset).get("GetObject", 0)
    counters = stats(con)
    assert counters["sub_reads"] >= OBJECTS * (SIZE >> 20), counters
    # The GETs in flight at once, plus the listing's and the tails' on httpfs's own clients. Each object's reader
    # keeping connections of its own opened ~29 for these 72 GETs.
    assert len(connections.seen) <= counters["in_flight_peak"] + 2, (len(connections.seen), gets, counters)

"""A failed sub-read keeps the wrapped filesystem's own error: the same exception type and HTTP status code as
httpfs gives without httpfs2, with httpfs2's context (file, byte range) in front of the message."""

import os

import duckdb
import pytest

from helpers import stats
from rig import serve_http

SIZE = 12 << 20


@pytest.fixture(scope="module")
def failing_server(tmp_path_factory):
    directory = tmp_path_factory.mktemp("failing")
    (directory / "object.bin").write_bytes(os.urandom(SIZE))
    failing = {}
    with serve_http(directory, failing) as base_url:
        yield f"{base_url}/object.bin", failing


@pytest.mark.parametrize("status", [403, 404])
def test_status_mid_read_stays_an_http_exception_with_its_code(con, native_con, failing_server, status):
    url, failing = failing_server
    try:
        failing["object.bin"] = (status, 0)
        with pytest.raises(duckdb.HTTPException) as native:
            native_con.execute("SELECT content FROM read_blob(?)", [url]).fetchall()
        # 1 MiB pieces: the first ones succeed, those from 4 MiB on fail after the object opened fine.
        con.execute(
            "SET httpfs2_parallel_read_enabled = true; SET httpfs2_parallel_read_chunk_size_bytes = 1048576; "
            "SET httpfs2_parallel_read_min_bytes = 1048576; SET httpfs2_parallel_read_max_fanout = 2"
        )
        failing["object.bin"] = (status, 4 << 20)
        with pytest.raises(duckdb.HTTPException) as wrapped:
            con.execute("SELECT httpfs2_read_range(?, 0, ?)", [url, 8 << 20]).fetchall()
    finally:
        failing.clear()
    assert native.value.status_code == status
    assert wrapped.value.status_code == status
    message = str(wrapped.value)
    assert "httpfs2: parallel read of" in message and "sub-read of bytes" in message, message
    assert "of the read of 8388608 bytes at offset 0" in message, message
    assert stats(con, "HTTPFileSystem")["errors"] > 0

"""Helpers the integration tests share (fixtures live in conftest.py)."""

import hashlib


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def blob_sha(con, url: str) -> str:
    """The sha256 of the whole object as DuckDB reads it (read_blob: one sequential Read)."""
    return con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchone()[0]


def stats(con, filesystem: str = "S3FileSystem") -> dict:
    """httpfs2_stats() of one wrapped filesystem, by column name."""
    cursor = con.execute("SELECT * FROM httpfs2_stats() WHERE filesystem = ?", [filesystem])
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    assert row is not None, f"httpfs2_stats() has no row for {filesystem}: that filesystem was not wrapped"
    return dict(zip(names, row, strict=True))


def uncached(connection):
    """For a fixture: yields `connection` with DuckDB's external file cache off, so every read reaches the server,
    and closes it afterwards."""
    connection.execute("SET enable_external_file_cache = false")
    yield connection
    connection.close()

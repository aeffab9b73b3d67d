"""Fixtures: one real S3 rig (versitygw behind toxiproxy on 127.0.0.1) per session, objects with known bytes."""

import os

import pytest

from helpers import uncached
from hostile import connect, data, hostile_http, hostile_s3, normal_proxies  # noqa: F401 (the hostile tests' fixtures)
from rig import S3Rig, duckdb_connect, serve_http


@pytest.fixture(scope="session")
def rig():
    with S3Rig(bucket="test", access_log=True) as started:
        yield started


@pytest.fixture(autouse=True)
def clean_proxy(rig):
    """Every test starts with a proxy without toxics and leaves none behind, also when it fails."""
    rig.remove_toxics()
    rig.proxy_enabled(True)
    yield
    rig.remove_toxics()
    rig.proxy_enabled(True)


class Objects:
    """Random objects uploaded once; tests compare what DuckDB reads with these bytes."""

    def __init__(self, rig):
        self.rig = rig
        self.data = {}

    def put(self, key: str, size: int) -> bytes:
        if key not in self.data:
            data = os.urandom(size)
            self.rig.put_object(key, data)
            self.data[key] = data
        return self.data[key]


@pytest.fixture(scope="session")
def objects(rig):
    return Objects(rig)


@pytest.fixture(scope="session")
def big_object(objects):
    """24 MiB: larger than fanout x chunk of the small test configurations and than the default min_bytes."""
    key = "blobs/big.bin"
    return key, objects.put(key, 24 * 1024 * 1024 + 12345)


@pytest.fixture(scope="session")
def http_dir(tmp_path_factory, big_object):
    directory = tmp_path_factory.mktemp("http")
    (directory / "big.bin").write_bytes(big_object[1])
    with serve_http(directory) as base_url:
        yield base_url


@pytest.fixture
def con(rig):
    """httpfs then httpfs2, the S3 secret on the proxy, external file cache off so every read reaches S3."""
    yield from uncached(duckdb_connect(rig))


@pytest.fixture
def native_con(rig):
    yield from uncached(duckdb_connect(rig, load_httpfs2_too=False))

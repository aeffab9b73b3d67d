"""The block cache on az:// blobs (Azurite behind toxiproxy, rig/azurite.py): with the cache on, httpfs2 reads a blob
with range GETs of its own through the cache, so a fresh database reads a blob held in the cache with no range GET
(only the version lookup), none at all within a trust window, and a replaced blob at its new version. Every check
compares bytes, and counts requests in Azurite's access log."""

import random
import time

import pytest

from helpers import stats
from rig.azurite import ACCOUNT, AzuriteRig, azure_connect, azurite_installed, read_sas_token, require_azurite
from test_cache import blocks_of, cache_setup, sha256

AZURE_FS = "AzureBlobStorageFileSystem"
SIZE = 5 * 1024 * 1024 + 4321


@pytest.fixture(scope="module")
def azurite():
    if not azurite_installed():
        pytest.fail("Azurite is not installed (.tools/azurite/): run `bash scripts/setup_env.sh` first", pytrace=False)
    require_azurite()
    with AzuriteRig(container="cache", profile="lan", access_log=True) as started:
        yield started


def read_in_fresh_database(azurite, key, directory, trust_seconds=None):
    """The sha256 of the blob read whole by a fresh database (azure, httpfs for its HTTP client, httpfs2 with the cache
    in `directory`), its httpfs2_stats() for az:// after the cache's writes, and Azurite's requests for the blob."""
    con = azure_connect(azurite, httpfs=True)
    try:
        con.execute("SET enable_external_file_cache = false")
        for statement in cache_setup(directory, read_ahead=False, trust_seconds=trust_seconds):
            con.execute(statement)
        before = len(azurite.request_log())
        sha = con.execute("SELECT sha256(content) FROM read_blob(?)", [azurite.url(key)]).fetchone()[0]
        counters = stats(con, AZURE_FS)  # waits for the blocks handed to the cache's writer
        time.sleep(0.2)  # the log is written after the answer
        requests = [line for line in azurite.request_log()[before:] if f"/{key}" in line]
        return sha, counters, requests
    finally:
        con.close()


def test_an_az_blob_read_warm_is_served_from_the_cache_with_only_its_version_lookup(azurite, tmp_path):
    key, data = "cache/warm.bin", random.Random(44).randbytes(SIZE)
    azurite.put_blob(key, data)
    sha, cold, cold_requests = read_in_fresh_database(azurite, key, tmp_path / "cache")
    assert sha == sha256(data)
    assert cold["cache_misses"] >= 1 and len(cold_requests) >= 2, cold_requests  # the lookup and range GETs
    sha, warm, warm_requests = read_in_fresh_database(azurite, key, tmp_path / "cache")
    assert sha == sha256(data)
    assert warm["cache_misses"] == 0 and warm["cache_hits"] == blocks_of(SIZE)
    assert warm["cache_bytes_served"] == SIZE
    assert len(warm_requests) == 1 and warm["version_requests"] == 1, warm_requests  # the lookup: bytes 0-0


def test_an_az_blob_trusted_warm_makes_no_request_and_a_replaced_one_is_read_anew_without_trust(azurite, tmp_path):
    key, old = "cache/trusted.bin", random.Random(45).randbytes(SIZE)
    azurite.put_blob(key, old)
    directory = tmp_path / "cache"
    assert read_in_fresh_database(azurite, key, directory, trust_seconds=3600)[0] == sha256(old)
    sha, warm, requests = read_in_fresh_database(azurite, key, directory, trust_seconds=3600)
    assert sha == sha256(old) and requests == [], requests
    assert warm["cache_versions_trusted"] == 1 and warm["cache_misses"] == 0
    new = random.Random(46).randbytes(SIZE)
    azurite.put_blob(key, new)
    sha, again, requests = read_in_fresh_database(azurite, key, directory)
    assert sha == sha256(new), "stale bytes after an overwrite"
    assert again["cache_hits"] == 0 and again["cache_versions_trusted"] == 0


def test_an_az_blob_read_with_a_sas_token_is_cached_and_the_token_is_kept_nowhere(azurite, tmp_path):
    sas = read_sas_token()
    signature = sas.split("sig=")[1].split("&")[0]
    key, data = "cache/sas.bin", random.Random(47).randbytes(SIZE)
    azurite.put_blob(key, data)
    directory = tmp_path / "cache"
    for run in range(2):
        con = azure_connect(azurite, httpfs=True)
        try:
            con.execute(
                f"CREATE SECRET sas (TYPE azure, CONNECTION_STRING "
                f"'BlobEndpoint=http://{azurite.proxy_endpoint}/{ACCOUNT};SharedAccessSignature={sas}')"
            )
            con.execute("SET enable_external_file_cache = false")
            for statement in cache_setup(directory, read_ahead=False):
                con.execute(statement)
            sha = con.execute("SELECT sha256(content) FROM read_blob(?)", [azurite.url(key)]).fetchone()[0]
            assert sha == sha256(data)
            counters = stats(con, AZURE_FS)
            assert (counters["cache_misses"] > 0) if run == 0 else (counters["cache_hits"] == blocks_of(SIZE))
            text = str(con.execute("SELECT * FROM httpfs2_stats()").fetchall())
            text += str(con.execute("SELECT * FROM httpfs2_cache_info()").fetchall())
        finally:
            con.close()
        assert signature not in text
    on_disk = b"".join(f.read_bytes() for f in directory.rglob("*") if f.is_file())
    assert signature.encode() not in on_disk

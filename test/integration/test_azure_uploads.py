"""az:// writes through httpfs2's uploader against Azurite (rig/azurite.py): block blobs byte-equal to the same COPY
written to a local file (read back with azure-storage-blob), blocks of one size, a blob complete when the COPY returns
or left as it was, and the credentials in no message or log.

httpfs2 sends its requests through httpfs's HTTP client (DuckDB's built-in one cannot PUT), so the connections here
load httpfs too; without it the azure extension writes."""

from datetime import UTC, datetime, timedelta

import duckdb
import pytest

import test_azure
from helpers import uncached
from rig.azurite import ACCOUNT, ACCOUNT_KEY, azure_connect
from test_azure import AZURE_FS, _credential_fragments, az_stats
from test_uploads import PART, ROWS, copy_failing_mid_way, sha, uploads

# test_azure's fixtures: an Azurite for this module, each test on the lan profile with the proxy up.
azurite = test_azure.azurite
lan_profile = test_azure.lan_profile

CSV_OPTIONS = "FORMAT csv, HEADER false, QUOTE ''"


@pytest.fixture
def az_con(azurite):
    """azure, httpfs and httpfs2, the rig's secret, external file cache off."""
    yield from uncached(azure_connect(azurite, httpfs=True))


def copy_is_written_as_locally(con, azurite, tmp_path, key, options="FORMAT csv", query=ROWS) -> int:
    """COPYs `query` to a local file and to the blob `key`; asserts both hold the same bytes, returns their size."""
    local = tmp_path / key.replace("/", "_")
    con.execute(f"COPY ({query}) TO '{local}' ({options})")
    con.execute(f"COPY ({query}) TO '{azurite.url(key)}' ({options})")
    expected = local.read_bytes()
    assert sha(azurite.get_blob(key)) == sha(expected)
    return len(expected)


def committed_block_ids(azurite, key) -> list[str]:
    committed, _ = azurite.container_client.get_blob_client(key).get_block_list("committed")
    return [block.id for block in committed]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_copy_is_byte_equal_to_the_same_copy_written_locally(azurite, az_con, tmp_path, fmt):
    uploads(az_con)
    options = "FORMAT parquet, COMPRESSION uncompressed" if fmt == "parquet" else "FORMAT csv"
    key = f"uploads/out.{fmt}"
    size = copy_is_written_as_locally(az_con, azurite, tmp_path, key, options)
    assert size > 2 * PART
    parts = -(-size // PART)
    counters = az_stats(az_con)
    assert counters["files_uploaded"] == 1, counters
    assert counters["upload_parts"] == parts, counters
    assert counters["upload_bytes"] == size, counters
    assert counters["uploads_aborted"] == 0, counters
    assert 0 < counters["upload_memory_peak"] <= counters["upload_memory_limit"], counters
    # One block per part, in order, under ids of one length.
    assert committed_block_ids(azurite, key) == [f"{number:06d}" for number in range(1, parts + 1)]
    # and DuckDB reads it back as written, not from what it looked up before the COPY
    assert az_con.execute(f"SELECT count(*), sum(i) FROM '{azurite.url(key)}'").fetchone() == (300000, 44999850000)


@pytest.mark.parametrize("size", [0, 1, PART, PART + 1])
def test_sizes_around_a_part(azurite, az_con, size):
    """A CSV of one line of `size` bytes: one Put Blob up to one part, blocks and a block list beyond."""
    uploads(az_con)
    key = f"uploads/size-{size}.csv"
    query = "SELECT 1 WHERE false" if size == 0 else f"SELECT repeat('x', {size - 1})"
    az_con.execute(f"COPY ({query}) TO '{azurite.url(key)}' ({CSV_OPTIONS})")
    expected = b"" if size == 0 else b"x" * (size - 1) + b"\n"
    assert azurite.get_blob(key) == expected
    assert azurite.blob_properties(key).blob_type == "BlockBlob"
    counters = az_stats(az_con)
    assert counters["files_uploaded"] == 1, counters
    assert counters["upload_parts"] == max(1, -(-size // PART)), counters
    assert counters["upload_bytes"] == size, counters
    assert len(committed_block_ids(azurite, key)) == (2 if size > PART else 0)


def test_partitioned_copy_writes_every_file_as_locally(azurite, az_con, tmp_path):
    uploads(az_con)
    options = "FORMAT parquet, PARTITION_BY (k), COMPRESSION uncompressed"
    query = "SELECT i, i % 7 AS k, md5(i::VARCHAR) AS s FROM range(400000) r(i)"
    az_con.execute(f"COPY ({query}) TO '{tmp_path / 'parts'}' ({options})")
    az_con.execute(f"COPY ({query}) TO '{azurite.url('uploads/parts')}' ({options})")
    expected = {
        str(path.relative_to(tmp_path / "parts")): sha(path.read_bytes())
        for path in (tmp_path / "parts").rglob("*")
        if path.is_file()
    }
    got = {
        name.removeprefix("uploads/parts/"): sha(azurite.get_blob(name))
        for name in azurite.list_blobs("uploads/parts/")
    }
    assert len(expected) == 7
    assert got == expected
    assert az_stats(az_con)["files_uploaded"] == 7


def test_a_query_failing_mid_copy_leaves_the_old_blob(azurite, az_con, tmp_path):
    """Blocks are staged while the query runs; it then fails: no block list is committed, so the blob keeps its old
    bytes (Azure has no call to drop the staged blocks: they wait, uncommitted, until the next commit). A COPY to the
    same key afterwards commits its own blocks only."""
    key = "uploads/interrupted.csv"
    old = b"the old blob\n"
    azurite.put_blob(key, old)
    uploads(az_con)
    copy_failing_mid_way(az_con, azurite.url(key), AZURE_FS)
    assert azurite.get_blob(key) == old
    _, staged = azurite.container_client.get_blob_client(key).get_block_list("uncommitted")
    assert len(staged) >= 2

    copy_is_written_as_locally(az_con, azurite, tmp_path, key)


@pytest.mark.parametrize("httpfs", [True, False], ids=["writes-off", "no-httpfs"])
def test_the_azure_extension_writes_when_httpfs2_does_not(azurite, tmp_path, httpfs):
    """With httpfs2_write_enabled = false, or without httpfs (whose client httpfs2 sends with), the azure extension
    writes the blob: no upload counted, the same bytes."""
    con = azure_connect(azurite, httpfs=httpfs)
    try:
        uploads(con, enabled=not httpfs)
        copy_is_written_as_locally(con, azurite, tmp_path, f"uploads/azure-extension-{httpfs}.csv")
        counters = az_stats(con)
        assert counters["files_uploaded"] == 0 and counters["upload_parts"] == 0, counters
    finally:
        con.close()


def test_a_wrong_key_fails_the_copy_without_showing_a_key(azurite):
    """A connection string with a wrong account key: the first block is refused (403); the error names the file and
    the block, and neither key appears in it."""
    wrong_key = "A" * 86 + "=="
    key = "uploads/wrong-key.csv"
    azurite.put_blob(key, b"kept\n")
    con = azure_connect(azurite, httpfs=True)
    try:
        con.execute("DROP SECRET azrig")
        wrong = azurite.connection_string().replace(ACCOUNT_KEY, wrong_key)
        con.execute(f"CREATE SECRET wrong (TYPE azure, CONNECTION_STRING '{wrong}')")
        uploads(con)
        with pytest.raises(duckdb.HTTPException) as error:
            con.execute(f"COPY ({ROWS}) TO '{azurite.url(key)}' (FORMAT csv)")
        stats_text = str(con.execute("SELECT * FROM httpfs2_stats()").fetchall())
    finally:
        con.close()
    message = str(error.value)
    assert key in message and "block" in message and "403" in message, message
    for fragment in _credential_fragments(azurite) + [wrong_key, wrong_key[:16]]:
        assert fragment not in message
        assert fragment not in stats_text
    assert azurite.get_blob(key) == b"kept\n"


def test_a_sas_token_authorizes_the_upload(azurite, tmp_path):
    """A connection string with a SAS token instead of the key: blocks and block list are authorized by it; a token
    without write permission fails the COPY, and the token's signature appears in no message."""
    from azure.storage.blob import AccountSasPermissions, ResourceTypes, generate_account_sas

    def sas(**permissions):
        return generate_account_sas(
            account_name=ACCOUNT,
            account_key=ACCOUNT_KEY,
            resource_types=ResourceTypes(service=True, container=True, object=True),
            permission=AccountSasPermissions(**permissions),
            expiry=datetime.now(UTC) + timedelta(hours=1),
        )

    def copy_with(token, key):
        con = azure_connect(azurite, httpfs=True)
        try:
            con.execute("DROP SECRET azrig")
            con.execute(
                f"CREATE SECRET sas (TYPE azure, CONNECTION_STRING "
                f"'BlobEndpoint=http://{azurite.proxy_endpoint}/{ACCOUNT};SharedAccessSignature={token}')"
            )
            uploads(con)
            copy_is_written_as_locally(con, azurite, tmp_path, key)
            return az_stats(con)
        finally:
            con.close()

    counters = copy_with(sas(read=True, write=True, create=True, list=True), "uploads/sas.csv")
    assert counters["files_uploaded"] == 1, counters
    read_only = sas(read=True)
    with pytest.raises(duckdb.HTTPException) as error:
        copy_with(read_only, "uploads/sas-read-only.csv")
    message = str(error.value)
    assert "uploads/sas-read-only.csv" in message and "403" in message, message
    assert read_only.split("sig=")[1].split("&")[0] not in message


def test_the_upload_is_in_the_http_log_without_its_signature(azurite, az_con):
    """DuckDB's HTTP log records URLs and headers: httpfs2's upload requests are there, each part's PUT, with neither
    their signature nor their query (a SAS token would be in it)."""
    uploads(az_con)
    az_con.execute("CALL enable_logging('HTTP')")
    az_con.execute(f"COPY ({ROWS}) TO '{azurite.url('uploads/logged.csv')}' (FORMAT csv)")
    parts = az_stats(az_con)["upload_parts"]
    assert parts >= 2
    puts = az_con.execute(
        "SELECT count(*) FROM duckdb_logs_parsed('HTTP') WHERE request.type = 'PUT' AND request.url LIKE '%logged.csv%'"
    ).fetchone()[0]
    assert puts >= parts, (puts, parts)
    logs = az_con.execute("SELECT string_agg(message, ' ') FROM duckdb_logs WHERE type = 'HTTP'").fetchone()[0] or ""
    for fragment in ("SharedKey", "comp=block", ACCOUNT_KEY[:16]):
        assert fragment not in logs


def test_a_proxy_leaves_the_write_to_the_azure_extension(azurite, az_con):
    """azure_http_proxy routes the azure extension's requests; httpfs's client would not take that path, so httpfs2
    does not upload (whatever the extension then makes of the proxy)."""
    uploads(az_con)
    az_con.execute("SET azure_http_proxy = 'http://127.0.0.1:9'")
    try:
        az_con.execute(f"COPY (SELECT 1) TO '{azurite.url('uploads/proxied.csv')}' (FORMAT csv)")
    except duckdb.Error:
        pass
    counters = az_stats(az_con)
    assert counters["files_uploaded"] == 0 and counters["upload_parts"] == 0, counters

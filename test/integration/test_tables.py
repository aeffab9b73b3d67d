"""Tables written by the libraries people use (pyiceberg, deltalake, DuckDB's DuckLake), read through DuckDB's
iceberg, delta and ducklake extensions: their data files are opened with a catalog's size and no ETag, and must get
what read_parquet's files get (a version from one tail GET, read-ahead), with the same answers as native httpfs.
A data file replaced under the same path (a misbehaving writer) is read anew or fails: never a mix of both files."""

import io
import uuid

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog

from helpers import enable, gets_by_key, stats
from rig import duckdb_connect
from rig.paths import _wheel_extension

ROWS = 400_000
# Every column of every row: a different byte anywhere changes it.
CHECKSUM = "SELECT count(*), sum(hash(COLUMNS(*))) FROM {}"


def table_rows(seed: int = 0) -> pa.Table:
    """Fixed-width columns, so that two seeds give files of the same size."""
    relation = duckdb.connect().execute(
        f"SELECT i::INTEGER AS id, (i * 7 + {seed})::BIGINT AS amount, (i % 13)::INTEGER AS kind, "
        f"(i * 0.5 + {seed})::DOUBLE AS price FROM range({ROWS}) r(i)"
    )
    result = relation.arrow()
    return result.read_all() if hasattr(result, "read_all") else result


def parquet_bytes(table: pa.Table) -> bytes:
    """Four row groups, no compression nor dictionary: the size depends on the row count alone."""
    buffer = io.BytesIO()
    pq.write_table(table, buffer, compression="NONE", use_dictionary=False, row_group_size=ROWS // 4)
    return buffer.getvalue()


def load(con, *extensions):
    for name in extensions:
        con.execute(f"LOAD '{_wheel_extension('duckdb_extension_' + name, name)}'")
    return con


@pytest.fixture
def connections(rig):
    """A native connection and an httpfs2 one (read-ahead on at the rig's speed), both with the table extensions."""
    native = duckdb_connect(rig, load_httpfs2_too=False)
    fast = duckdb_connect(rig)
    for con in (native, fast):
        load(con, "avro", "iceberg", "delta", "ducklake")
        con.execute("SET enable_external_file_cache = false")
    enable(fast)
    yield native, fast
    native.close()
    fast.close()


def catalog(rig, tmp_path) -> SqlCatalog:
    return SqlCatalog(
        "tests",
        uri=f"sqlite:///{tmp_path / 'catalog.db'}",
        warehouse=f"s3://{rig.bucket}/iceberg",
        **{
            "s3.endpoint": "http://" + rig.direct_endpoint,
            "s3.access-key-id": rig.access_key,
            "s3.secret-access-key": rig.secret_key,
            "s3.region": "us-east-1",
        },
    )


def iceberg_table(rig, tmp_path, files: list[bytes]) -> tuple[str, list[str]]:
    """An Iceberg table (pyiceberg, SQL catalog) of `files` put through the S3 API: its metadata and data paths."""
    prefix = f"iceberg-data/{uuid.uuid4().hex}"
    paths = []
    for number, data in enumerate(files):
        key = f"{prefix}/part-{number}.parquet"
        rig.put_object(key, data)
        paths.append(rig.url(key))
    table = empty_table(rig, tmp_path)
    table.add_files(paths)
    return table.metadata_location, paths


def empty_table(rig, tmp_path):
    tables = catalog(rig, tmp_path)
    tables.create_namespace_if_not_exists("db")
    return tables.create_table(f"db.t{uuid.uuid4().hex[:8]}", schema=table_rows().schema)


def appended_table(rig, tmp_path, appends: int):
    """A table pyiceberg appended to `appends` times: as many manifests, and data files, as appends."""
    table = empty_table(rig, tmp_path)
    for seed in range(appends):
        table.append(table_rows(seed))
    return table


def test_an_iceberg_table_reads_as_native_with_read_ahead(rig, tmp_path, connections):
    native, fast = connections
    metadata, _ = iceberg_table(rig, tmp_path, [parquet_bytes(table_rows(seed)) for seed in range(3)])
    sql = CHECKSUM.format(f"iceberg_scan('{metadata}')")
    expected = native.execute(sql).fetchall()
    assert fast.execute(sql).fetchall() == expected
    counters = stats(fast)
    assert counters["version_requests"] >= 3, counters  # each data file opened from its tail
    assert counters["read_ahead_requests"] > 0, counters
    assert counters["read_ahead_bytes_used"] > 0, counters


def avro_long(value: int) -> bytes:
    """Avro's zigzag varint."""
    raw, out = (value << 1) ^ (value >> 63), bytearray()
    while raw > 0x7F:
        out.append(raw & 0x7F | 0x80)
        raw >>= 7
    return bytes(out + bytes([raw]))


def padded_avro(container: bytes, pad_bytes: int) -> bytes:
    """The same Avro container with one more entry in its header's metadata map (a block of its own before the
    writer's): the records are untouched, the file `pad_bytes` larger."""
    assert container[:4] == b"Obj\x01"
    key, value = b"httpfs2.test.padding", b"p" * pad_bytes
    entry = avro_long(len(key)) + key + avro_long(len(value)) + value
    return container[:4] + avro_long(1) + entry + container[4:]


@pytest.mark.parametrize("list_size", ["small", "past_the_tail"])
def test_an_iceberg_tables_manifests_are_fetched_side_by_side_each_once(rig, tmp_path, connections, list_size):
    """Three appends by pyiceberg make three manifests, which the iceberg extension reads one after another: httpfs2
    fetches them together when the manifest list opens, and each open takes its fetch (no second GET). A list larger
    than the open's tail GET (a table of thousands of manifests; here padded past 256 KiB) is completed from its start
    by one more GET, which the iceberg extension's own read of the list then finds done."""
    native, fast = connections
    table = appended_table(rig, tmp_path, 3)
    list_key = table.current_snapshot().manifest_list.removeprefix(f"s3://{rig.bucket}/")
    if list_size == "past_the_tail":
        original = rig.s3.get_object(Bucket=rig.bucket, Key=list_key)["Body"].read()
        rig.put_object(list_key, padded_avro(original, 400 * 1024))
    sql = CHECKSUM.format(f"iceberg_scan('{table.metadata_location}')")
    expected = native.execute(sql).fetchall()
    assert expected[0][0] == 3 * ROWS
    for _ in range(2):  # each query fetches anew: a later query sees a list or manifest rewritten meanwhile
        got = {}
        gets = gets_by_key(rig, lambda got=got: got.update(rows=fast.execute(sql).fetchall()))
        assert got["rows"] == expected
        manifests = {k: n for k, n in gets.items() if "/metadata/" in k and k.endswith(".avro") and "/snap-" not in k}
        assert len(manifests) == 3 and set(manifests.values()) == {1}, gets
        # The list: its tail GET, and for the padded one the GET of its start; none by the iceberg extension.
        assert gets[list_key] == (1 if list_size == "small" else 2), gets
        counters = stats(fast)
        # An open that comes while its manifest's fetch is still queued (the IO pool's threads starting) sends its own
        # GET, and the fetch is dropped: one GET a manifest either way.
        assert 1 <= counters["manifests_fetched_ahead"] <= 3, {k: v for k, v in counters.items() if v}
        fast.execute("CALL httpfs2_reset_stats()")


@pytest.mark.parametrize("threads", [1, 4])
def test_an_iceberg_scan_fetches_the_tails_of_the_next_data_files_ahead(rig, tmp_path, connections, threads):
    """The iceberg extension opens a table's data files one after another, each with a tail GET first: once the scan
    opens them in its manifests' order, the tails of the next ones are fetched ahead, and each open takes its tail
    (or sends its own while the fetch is still queued), so no tail is fetched twice."""
    native, fast = connections
    table = appended_table(rig, tmp_path, 4)
    sql = CHECKSUM.format(f"iceberg_scan('{table.metadata_location}')")
    expected = native.execute(sql).fetchall()
    assert expected[0][0] == 4 * ROWS
    fast.execute(f"SET threads = {threads}")
    for _ in range(2):
        assert fast.execute(sql).fetchall() == expected
        counters = stats(fast)
        shown = {k: v for k, v in counters.items() if v}
        assert 1 <= counters["manifests_fetched_ahead"] <= 4, shown
        # The first data file's open looks ahead. An open that comes before its tail's fetch left the queue (at
        # threads 4 the others open at once) sends its own GET and the fetch is dropped.
        assert (1 if threads == 1 else 0) <= counters["tails_fetched_ahead"] <= 3, shown
        assert counters["version_requests"] == 1 + 4, shown  # the list's tail, one tail per data file
        fast.execute("CALL httpfs2_reset_stats()")


def test_a_delta_table_reads_as_native_with_read_ahead(rig, connections):
    import deltalake

    native, fast = connections
    path = f"s3://{rig.bucket}/delta/{uuid.uuid4().hex}"
    options = {
        "AWS_ENDPOINT_URL": "http://" + rig.direct_endpoint,
        "AWS_ACCESS_KEY_ID": rig.access_key,
        "AWS_SECRET_ACCESS_KEY": rig.secret_key,
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "aws_conditional_put": "etag",
    }
    # Four row groups a file, as the other tables have: read-ahead has groups to fetch ahead.
    properties = deltalake.WriterProperties(max_row_group_size=ROWS // 4)
    for seed in range(2):
        deltalake.write_deltalake(
            path, table_rows(seed), mode="append", storage_options=options, writer_properties=properties
        )
    sql = CHECKSUM.format(f"delta_scan('{path}')")
    expected = native.execute(sql).fetchall()
    assert expected[0][0] == 2 * ROWS
    assert fast.execute(sql).fetchall() == expected
    counters = stats(fast)
    # Each data file's version from its tail, or from a listing of the table's folder (the files are opened by name:
    # when the second sorts right after the first, the folder is listed at its open).
    assert counters["version_requests"] + counters["folder_listings"] >= 2, counters
    assert counters["read_ahead_requests"] > 0, counters


def test_a_ducklake_table_reads_as_native_with_read_ahead(rig, tmp_path, connections):
    native, fast = connections
    lake = tmp_path / "lake.ducklake"
    data_path = f"s3://{rig.bucket}/ducklake/{uuid.uuid4().hex}/"
    native.execute(f"ATTACH 'ducklake:{lake}' AS lake (DATA_PATH '{data_path}')")
    native.register("source", table_rows())
    native.execute("CREATE TABLE lake.t AS SELECT * FROM source")
    native.execute("INSERT INTO lake.t SELECT * FROM source")
    expected = native.execute(CHECKSUM.format("lake.t")).fetchall()
    native.execute("DETACH lake")
    fast.execute(f"ATTACH 'ducklake:{lake}' AS lake (READ_ONLY)")
    assert fast.execute(CHECKSUM.format("lake.t")).fetchall() == expected
    counters = stats(fast)
    assert counters["version_requests"] >= 2, counters
    assert counters["read_ahead_requests"] > 0, counters


@pytest.mark.parametrize("replaced", [0, 2])
def test_a_data_file_replaced_under_its_path_is_read_anew_never_mixed(rig, tmp_path, connections, replaced):
    """A writer replaces a data file in place with another of the same size (formats never do; a misbehaving one
    might). The query after it gets the new file's answer or an error: the footer and layout httpfs2 remembered of the
    old file are never served with the new one's bytes. The first file opens with its own tail GET, the third with
    a tail fetched ahead as a rule (each query fetches anew)."""
    native, fast = connections
    old, new = parquet_bytes(table_rows(0)), parquet_bytes(table_rows(1))
    assert len(old) == len(new) and old != new
    metadata, paths = iceberg_table(rig, tmp_path, [old, parquet_bytes(table_rows(2)), old])
    fast.execute("SET threads = 1")  # the files opened one after another: the later ones' tails fetched ahead
    sql = CHECKSUM.format(f"iceberg_scan('{metadata}')")
    before = fast.execute(sql).fetchall()
    assert before == native.execute(sql).fetchall()
    assert stats(fast)["footer_bytes_reused"] > 0  # the old footers were served from memory

    rig.put_object(paths[replaced].removeprefix(f"s3://{rig.bucket}/"), new)
    expected = native.execute(sql).fetchall()
    assert expected != before
    try:
        after = fast.execute(sql).fetchall()
    except duckdb.Error as error:
        assert paths[replaced] in str(error), error
    else:
        assert after == expected

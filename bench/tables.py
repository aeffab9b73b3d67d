"""Tables in open formats on the rig's S3, written through the S3 API by the formats' own libraries (issue 32), and the
scans the `tables` suites time over them.

Every table holds TPC-H SF1 lineitem (bench/data.py), written as BATCHES appends of the row groups of the cached
lineitem.parquet in file order (one commit each, one data file each: 10 data files of ~20 MiB), with row groups of
ROW_GROUP_ROWS rows and snappy, as the workload data has:
  iceberg   pyiceberg, a SqlCatalog on a local sqlite file, its S3 FileIO pointed at versitygw
  delta     deltalake (delta-rs), unsafe rename allowed (no locking service: one writer)
  ducklake  DuckDB's ducklake extension, the catalog a local DuckDB file, DATA_PATH on the bucket
`iceberg-appends` is an often-appended Iceberg table: 100 appends of 2,000 rows (100 data files and manifests).
The writers talk to versitygw directly (no toxics): building the tables is not measured.
`ducklake-tpch` is the 8 TPC-H tables in one DuckLake catalog, one CREATE TABLE AS each.

Each table gives scans (bench/workloads.py Workload, with `{base}` where the bucket's folder goes):
  <format>          the catalog's own reader: iceberg_scan / delta_scan / the DuckLake table
  <format> files    read_parquet([...]) of the same data files: `{base}` is s3://<bucket> or, for the `local`
                    configuration, the folder where versitygw keeps the bucket (the very same files)
  delta log         a delta_scan whose filter skips every data file: the time of delta-kernel's _delta_log reads,
                    which go over its own connections, outside httpfs
"""

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import data
from bench.answers import normalize_rows
from bench.workloads import PROJECTION, Workload
from rig import ducklake_extension
from rig.paths import delta_extension, iceberg_extensions

BATCHES = 10
ROW_GROUP_ROWS = 100_000
APPENDS = 100  # iceberg-appends: that many appends of APPEND_ROWS rows
APPEND_ROWS = 2_000
MiB = 1 << 20
LINEITEM = "lineitem"


@dataclass(frozen=True)
class Scan:
    """A timed scan of a table: the workload, the extensions it needs (LOADed after httpfs, before httpfs2), the
    reference workload whose answers it must give (None: `expect`), and whether it can read local files."""

    workload: Workload
    load: tuple = ()
    reference: str | None = "lineitem-projection"
    expect: list | None = None
    local: bool = False


@dataclass
class Table:
    name: str
    files: list  # keys of its data files in the bucket
    scans: list
    sizes: list = field(default_factory=list)  # bytes of each data file, as versitygw stores it


def _log(text: str):
    print(f"[bench-tables] {text}", file=sys.stderr, flush=True)


def _batches() -> list:
    """lineitem.parquet as BATCHES Arrow tables of whole row groups, in file order."""
    import pyarrow.parquet as pq

    source = pq.ParquetFile(data.folder("tpch-sf1") / "lineitem.parquet")
    groups = list(range(source.num_row_groups))
    size = -(-len(groups) // BATCHES)
    return [source.read_row_groups(groups[n : n + size]) for n in range(0, len(groups), size)]


def _files_list(keys: list) -> str:
    return "[" + ", ".join(f"'{{base}}/{key}'" for key in keys) + "]"


def _files_scan(name: str, keys: list, expect: list | None = None) -> Scan:
    """The projection over the same data files through read_parquet (`expect`: its answer, when the table does not
    hold all of lineitem)."""
    workload = Workload(f"{name} files", "tpch-sf1", (PROJECTION + f"read_parquet({_files_list(keys)})",))
    if expect is not None:
        return Scan(workload, reference=None, expect=expect, local=True)
    return Scan(workload, local=True)


def _key(rig, url: str) -> str:
    return url.split(f"s3://{rig.bucket}/", 1)[1] if url.startswith("s3://") else url


def _keys_from_files(rig, urls) -> list:
    return sorted(_key(rig, u) for u in urls)


def _s3_options(rig) -> dict:
    return {"endpoint": f"http://{rig.direct_endpoint}", "key": rig.access_key, "secret": rig.secret_key}


def _iceberg_table(rig, scratch: Path, name: str, batches: list):
    """An Iceberg table pyiceberg wrote with one append (a data file and a manifest) per batch; its data files' keys."""
    from pyiceberg.catalog.sql import SqlCatalog

    s3 = _s3_options(rig)
    catalog = SqlCatalog(
        "bench",
        uri=f"sqlite:///{scratch / (name + '.db')}",
        warehouse=f"s3://{rig.bucket}/{name}",
        **{
            "s3.endpoint": s3["endpoint"],
            "s3.access-key-id": s3["key"],
            "s3.secret-access-key": s3["secret"],
            "s3.region": "us-east-1",
        },
    )
    catalog.create_namespace("tpch")
    table = catalog.create_table(
        "tpch.lineitem",
        schema=batches[0].schema,
        properties={
            "write.parquet.row-group-limit": str(ROW_GROUP_ROWS),
            "write.parquet.compression-codec": "snappy",
        },
    )
    for batch in batches:
        table.append(batch)
    table = catalog.load_table("tpch.lineitem")
    keys = _keys_from_files(rig, (task.file.file_path for task in table.scan().plan_files()))
    return PROJECTION + f"iceberg_scan('{table.metadata_location}')", keys


def iceberg(rig, scratch: Path, batches: list) -> Table:
    scan, keys = _iceberg_table(rig, scratch, "iceberg", batches)
    load = tuple(map(str, iceberg_extensions()))
    return Table(
        "iceberg",
        keys,
        [Scan(Workload("iceberg", "tpch-sf1", (scan,)), load), _files_scan("iceberg", keys)],
    )


def iceberg_appends(rig, scratch: Path, batches: list) -> Table:
    """An often-appended table (a stream's micro-batches): lineitem's first APPENDS x APPEND_ROWS rows, one small
    data file and one manifest per append, so that the scan is mostly opens, each a round trip."""
    import duckdb

    rows = batches[0].slice(0, APPENDS * APPEND_ROWS)
    appends = [rows.slice(n * APPEND_ROWS, APPEND_ROWS) for n in range(APPENDS)]
    scan, keys = _iceberg_table(rig, scratch, "iceberg-appends", appends)
    con = duckdb.connect()
    con.register("source", rows)
    expect = [normalize_rows(con.execute(PROJECTION + "source").fetchall())]
    load = tuple(map(str, iceberg_extensions()))
    workload = Workload("iceberg appends", "tpch-sf1", (scan,))
    return Table(
        "iceberg-appends",
        keys,
        [Scan(workload, load, reference=None, expect=expect), _files_scan("iceberg appends", keys, expect)],
    )


def delta(rig, scratch: Path, batches: list) -> Table:
    from deltalake import DeltaTable, WriterProperties, write_deltalake

    s3 = _s3_options(rig)
    options = {
        "AWS_ENDPOINT_URL": s3["endpoint"],
        "AWS_ACCESS_KEY_ID": s3["key"],
        "AWS_SECRET_ACCESS_KEY": s3["secret"],
        "AWS_REGION": "us-east-1",
        "AWS_ALLOW_HTTP": "true",
        "AWS_S3_ALLOW_UNSAFE_RENAME": "true",  # one writer, no DynamoDB lock
    }
    uri = f"s3://{rig.bucket}/delta/lineitem"
    properties = WriterProperties(max_row_group_size=ROW_GROUP_ROWS, compression="SNAPPY")
    for batch in batches:
        write_deltalake(uri, batch, mode="append", storage_options=options, writer_properties=properties)
    keys = _keys_from_files(rig, DeltaTable(uri, storage_options=options).file_uris())
    load = (str(delta_extension()),)
    # l_orderkey >= 1 in every row: the kernel's statistics skip every data file, so only the log is read.
    log_only = f"SELECT count(*) FROM delta_scan('{uri}') WHERE l_orderkey < 0"
    return Table(
        "delta",
        keys,
        [
            Scan(Workload("delta", "tpch-sf1", (PROJECTION + f"delta_scan('{uri}')",)), load),
            _files_scan("delta", keys),
            Scan(Workload("delta log", "tpch-sf1", (log_only,)), load, reference=None, expect=[[[0]]]),
        ],
    )


def _ducklake_connection(rig, catalog: Path, data_path: str):
    """A DuckDB writing a DuckLake on the rig (directly, no toxics), one thread: one data file per INSERT."""
    from bench.worker import connect
    from rig import httpfs_extension

    con = connect(
        {
            "load": [str(httpfs_extension()), str(ducklake_extension())],
            "threads": 1,
            "secret_sql": rig.secret_sql(rig.direct_endpoint),
        }
    )
    con.execute(f"ATTACH 'ducklake:{catalog}' AS lake (DATA_PATH '{data_path}')")
    con.execute(f"CALL lake.set_option('parquet_row_group_size', '{ROW_GROUP_ROWS}')")
    con.execute("CALL lake.set_option('data_inlining_row_limit', '0')")  # region's 5 rows in a file too
    return con


def _ducklake_files(rig, con, table: str) -> list:
    rows = con.execute(f"SELECT data_file FROM ducklake_list_files('lake', '{table}')").fetchall()
    return _keys_from_files(rig, (r[0] for r in rows))


def _ducklake_setup(catalog: Path) -> tuple:
    return (f"ATTACH 'ducklake:{catalog}' AS lake (READ_ONLY)", "USE lake")


def ducklake(rig, scratch: Path, batches: list) -> Table:
    catalog = scratch / "lineitem.ducklake"
    con = _ducklake_connection(rig, catalog, f"s3://{rig.bucket}/ducklake/")
    for n, batch in enumerate(batches):
        con.register("batch", batch)
        con.execute("CREATE TABLE lake.lineitem AS FROM batch" if n == 0 else "INSERT INTO lake.lineitem FROM batch")
        con.unregister("batch")
    keys = _ducklake_files(rig, con, LINEITEM)
    con.close()
    workload = Workload("ducklake", "tpch-sf1", (PROJECTION + LINEITEM,), _ducklake_setup(catalog))
    return Table("ducklake", keys, [Scan(workload, (str(ducklake_extension()),)), _files_scan("ducklake", keys)])


def ducklake_tpch(rig, scratch: Path, _batches) -> Table:
    """The 8 TPC-H tables in one DuckLake catalog: the 22 queries on the catalog, and on views over its files."""
    catalog = scratch / "tpch.ducklake"
    con = _ducklake_connection(rig, catalog, f"s3://{rig.bucket}/ducklake-tpch/")
    views, keys = [], []
    for table in data.TPCH_TABLES:
        con.execute(f"CREATE TABLE lake.{table} AS FROM read_parquet('{data.folder('tpch-sf1') / table}.parquet')")
        files = _ducklake_files(rig, con, table)
        views.append(f"CREATE OR REPLACE VIEW {table} AS FROM read_parquet({_files_list(files)})")
        keys += files
    con.close()
    name = "ducklake tpch-22"
    scans = [
        Scan(Workload(name, "tpch-sf1", None, _ducklake_setup(catalog)), (str(ducklake_extension()),), "tpch-22"),
        Scan(Workload(f"{name} files", "tpch-sf1", None, tuple(views)), reference="tpch-22", local=True),
    ]
    return Table("ducklake-tpch", keys, scans)


BUILDERS = {
    "iceberg": iceberg,
    "iceberg-appends": iceberg_appends,
    "delta": delta,
    "ducklake": ducklake,
    "ducklake-tpch": ducklake_tpch,
}


def build(rig, names, scratch: Path) -> list:
    """The tables named, written to the rig; each one's data files are logged with their sizes."""
    batches = _batches() if any(n != "ducklake-tpch" for n in names) else None
    tables = []
    for name in names:
        start = time.monotonic()
        table = BUILDERS[name](rig, scratch, batches)
        table.sizes = sizes = [(rig.bucket_folder / key).stat().st_size for key in table.files]
        _log(
            f"{name}: {len(sizes)} data files, {sum(sizes) / MiB:.0f} MiB "
            f"({min(sizes) / MiB:.1f}-{max(sizes) / MiB:.1f} MiB each), written in {time.monotonic() - start:.0f} s"
        )
        tables.append(table)
    return tables


def describe(tables) -> dict:
    """What meta.json records of each table: its data files and sizes, and the text of each scan (cut short)."""
    return {
        t.name: {
            "data_files": dict(zip(t.files, t.sizes, strict=True)),
            "scans": {s.workload.name: json.dumps(s.workload.setup + s.workload.texts())[:600] for s in t.scans},
        }
        for t in tables
    }

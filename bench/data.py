"""The data every suite reads, and the answers a correct read of it gives.

Cached datasets (workload, TPC-H and write suites): TPC-H SF1 and files cut from it, generated once per machine into
$HTTPFS2_CACHE_DIR/bench-data/ (default ~/.cache/httpfs2/bench-data/), one folder per dataset with a `.done` stamp
naming the generator version, so an interrupted generation is redone and a changed one too; uploaded into the rig's
bucket by each run that needs them.
Per-run objects (blob sweeps): a random blob and two parquet files of the size a run asks for, made into the rig
and checked against what DuckDB computes from the same bytes locally.

python -m bench.data [dataset ...]   generates the cached datasets (if missing) and prints where they are.
"""

import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from bench.answers import normalize_rows
from bench.worker import connect
from rig.paths import _wheel_extension

CACHE = Path(os.environ.get("HTTPFS2_CACHE_DIR", Path.home() / ".cache" / "httpfs2")) / "bench-data"
MiB = 1 << 20
TPCH_TABLES = ("customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier")
TPCH_ROW_GROUP = 100_000  # lineitem: 60 row groups of ~3.3 MiB (DuckDB rounds to 100352 rows)
CSV_ROWS = 2_000_000
SMALL_FILES = 64
SMALL_ROWS = 30_000  # ~1 MiB of lineitem parquet per file
BLOB_MIB = 256


def _log(text: str):
    print(f"[bench-data] {text}", file=sys.stderr, flush=True)


def _tpch_connection(sf: int = 1):
    """An in-memory database holding TPC-H at scale factor sf, made by the tpch extension of the 1.5.5 wheel."""
    con = connect({"load": [str(_wheel_extension("duckdb_extension_tpch", "tpch"))]})
    start = time.monotonic()
    con.execute(f"CALL dbgen(sf = {sf})")
    _log(f"dbgen sf={sf} in {time.monotonic() - start:.0f} s")
    return con


def _gen_tpch(con, folder: Path):
    for table in TPCH_TABLES:
        con.execute(f"COPY {table} TO '{folder / table}.parquet' (FORMAT parquet, ROW_GROUP_SIZE {TPCH_ROW_GROUP})")
    queries = con.execute("SELECT query_nr, query FROM tpch_queries() ORDER BY query_nr").fetchall()
    (folder / "queries.json").write_text(json.dumps({str(n): q for n, q in queries}, indent=1))


def _gen_lineitem_one_row_group(con, folder: Path):
    rows = con.execute("SELECT count(*) FROM lineitem").fetchone()[0]
    con.execute(f"COPY lineitem TO '{folder}/lineitem.parquet' (FORMAT parquet, ROW_GROUP_SIZE {rows})")
    groups = con.execute(f"SELECT count(DISTINCT row_group_id) FROM parquet_metadata('{folder}/lineitem.parquet')")
    if groups.fetchone()[0] != 1:
        raise RuntimeError("lineitem-1rg: DuckDB wrote more than one row group")


def _gen_csv(con, folder: Path):
    con.execute(
        f"COPY (SELECT * FROM lineitem ORDER BY l_orderkey, l_linenumber LIMIT {CSV_ROWS}) "
        f"TO '{folder}/lineitem-2m.csv' (FORMAT csv, HEADER true)"
    )


def _gen_small(con, folder: Path):
    for n in range(SMALL_FILES):
        con.execute(
            f"COPY (SELECT * FROM lineitem ORDER BY l_orderkey, l_linenumber "
            f"LIMIT {SMALL_ROWS} OFFSET {n * SMALL_ROWS}) TO '{folder}/part-{n:02d}.parquet' (FORMAT parquet)"
        )


def _gen_blob(_con, folder: Path):
    with open(folder / "blob.bin", "wb") as out:
        for _ in range(BLOB_MIB):
            out.write(os.urandom(MiB))


# name -> (generator, needs the TPC-H database, version: bump to regenerate on every machine)
DATASETS = {
    "tpch-sf1": (_gen_tpch, True, 1),
    "lineitem-1rg": (_gen_lineitem_one_row_group, True, 1),
    "lineitem-csv": (_gen_csv, True, 1),
    "small-64": (_gen_small, True, 1),
    "blob-256m": (_gen_blob, False, 1),
}


def _stamp(name: str) -> str:
    return f"{name} v{DATASETS[name][2]}"


def folder(name: str) -> Path:
    return CACHE / name


def ready(name: str) -> bool:
    stamp = folder(name) / ".done"
    return stamp.exists() and stamp.read_text().strip() == _stamp(name)


def ensure(names) -> dict:
    """Generates the missing datasets (one dbgen for all that need it); returns name -> local folder."""
    missing = [n for n in dict.fromkeys(names) if not ready(n)]
    con = None
    for name in missing:
        generate, needs_tpch, _ = DATASETS[name]
        if needs_tpch and con is None:
            con = _tpch_connection()
        start = time.monotonic()
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=CACHE))
        try:
            generate(con, tmp)
            (tmp / ".done").write_text(_stamp(name) + "\n")
            shutil.rmtree(folder(name), ignore_errors=True)
            tmp.rename(folder(name))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _log(f"{name}: generated in {time.monotonic() - start:.0f} s into {folder(name)}")
    return {n: folder(n) for n in names}


def files(name: str) -> list:
    """The data files of a dataset (not the stamp or the query texts), sorted."""
    return sorted(p for p in folder(name).iterdir() if not p.name.startswith(".") and p.suffix != ".json")


def data_bytes(name: str) -> int:
    return sum(p.stat().st_size for p in files(name))


def tpch_queries() -> dict:
    """query number (1..22) -> SQL text, as the tpch extension gives them."""
    return {int(n): q for n, q in json.loads((folder("tpch-sf1") / "queries.json").read_text()).items()}


def upload(rig, names):
    """Puts each dataset's files under <dataset>/ in the rig's bucket (multipart for the large ones)."""
    from boto3.s3.transfer import TransferConfig

    transfer = TransferConfig(multipart_threshold=64 * MiB, multipart_chunksize=64 * MiB, max_concurrency=4)
    start, total = time.monotonic(), 0
    for name in dict.fromkeys(names):
        for path in files(name):
            rig.s3.upload_file(str(path), rig.bucket, f"{name}/{path.name}", Config=transfer)
            total += path.stat().st_size
    _log(f"uploaded {total / MiB:.0f} MiB in {time.monotonic() - start:.0f} s")


# --- per-run objects of the blob sweeps ---------------------------------------------------------------------

# DuckDB's hash() reads every byte far faster than sha256(), which would add seconds of serial CPU after the read
# and swamp what is measured (docs/benchmarks.md). The expected values come from DuckDB reading the same bytes locally.
BLOB_SQL = "SELECT hash(content), octet_length(content) FROM read_blob('{url}')"
PARQUET_SQL = "SELECT count(*), sum(i), sum(a), sum(b), sum(c), sum(length(s)) FROM read_parquet('{url}')"
PARQUET_FILES = 2
ROW_GROUPS_PER_FILE = 10
PARQUET_ROW_BYTES = 55  # about: 8 (i) + 3 x 8 (doubles) + ~23 (32 hex chars, snappy)


@dataclass(frozen=True)
class Objects:
    """What a blob sweep reads: an object (or a glob of them), its size and the query whose answer is checked."""

    key: str
    url: str
    bytes: int
    sql: str
    expect: list  # the rows the query must return


def blob(rig, size_mib: int) -> Objects:
    """Random bytes; the worker checks DuckDB's 64-bit hash() and the length, computed here by DuckDB itself."""
    payload = os.urandom(size_mib * MiB)
    rig.put_object("blob.bin", payload)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "blob.bin"
        path.write_bytes(payload)
        expect = duckdb.connect().execute(BLOB_SQL.format(url=path)).fetchall()
    url = rig.url("blob.bin")
    return Objects("blob.bin", url, len(payload), BLOB_SQL.format(url=url), normalize_rows(expect))


def parquet(rig, size_mib: int) -> Objects:
    """PARQUET_FILES files of ROW_GROUPS_PER_FILE row groups: an int, three random doubles, a random string."""
    rows_per_file = size_mib * MiB // PARQUET_ROW_BYTES // PARQUET_FILES
    con = duckdb.connect()
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(PARQUET_FILES):
            path = Path(tmp) / f"part-{n}.parquet"
            con.execute(f"""COPY (SELECT (random() * 1e9)::BIGINT AS i, random() AS a, random() AS b,
                                         random() AS c, md5(random()::VARCHAR) AS s
                                  FROM range({rows_per_file}))
                            TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE {rows_per_file // ROW_GROUPS_PER_FILE})""")
            total += path.stat().st_size
            rig.s3.upload_file(str(path), rig.bucket, f"parquet/{path.name}")
        expect = con.execute(PARQUET_SQL.format(url=f"{tmp}/*.parquet")).fetchall()
    url = rig.url("parquet/*.parquet")
    return Objects("parquet/*.parquet", url, total, PARQUET_SQL.format(url=url), normalize_rows(expect))


if __name__ == "__main__":
    for name, path in ensure(sys.argv[1:] or list(DATASETS)).items():
        print(f"{name}: {path} ({data_bytes(name) / MiB:.0f} MiB)")

"""The objects a bench run reads, generated once per run into the rig, with the answers a correct read gives."""

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import duckdb

from bench.worker import BLOB_SQL, PARQUET_SQL

MiB = 1 << 20
PARQUET_FILES = 2
ROW_GROUPS_PER_FILE = 10
PARQUET_ROW_BYTES = 55  # about: 8 (i) + 3 x 8 (doubles) + ~23 (32 hex chars, snappy)


@dataclass(frozen=True)
class Dataset:
    key: str  # object key, or a glob of keys
    url: str
    bytes: int
    expect: list  # the row the worker's query must return


def blob(rig, size_mib: int) -> Dataset:
    """Random bytes; the worker checks DuckDB's 64-bit hash() and the length, computed here by DuckDB itself."""
    data = os.urandom(size_mib * MiB)
    rig.put_object("blob.bin", data)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "blob.bin"
        path.write_bytes(data)
        expect = list(duckdb.connect().execute(BLOB_SQL.format(url=path)).fetchone())
    return Dataset("blob.bin", rig.url("blob.bin"), len(data), expect)


def parquet(rig, size_mib: int) -> Dataset:
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
        expect = list(con.execute(PARQUET_SQL.format(url=f"{tmp}/*.parquet")).fetchone())
    return Dataset("parquet/*.parquet", rig.url("parquet/*.parquet"), total, expect)

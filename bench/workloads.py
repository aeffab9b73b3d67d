"""The workloads of issue 9: queries users run on object storage, each with the answer a correct read gives.

Every SQL text has `{base}` where the data lives: `s3://<bucket>` in the bench, the local cache folder for the
reference answers. bench/README.md describes each workload; keep the two in step.
"""

import hashlib
import json
from dataclasses import dataclass

from bench import data
from bench.answers import normalize_rows


@dataclass(frozen=True)
class Workload:
    name: str
    dataset: str  # a bench.data dataset, uploaded under <dataset>/ in the bucket
    queries: tuple | None  # timed together, in order: the measurement is their total; None: the 22 TPC-H queries
    setup: tuple = ()  # run before timing (views); its requests are not counted either
    about: str = ""

    def texts(self) -> tuple:
        if self.queries is None:  # generated with the data by the tpch extension
            return tuple(q for _, q in sorted(data.tpch_queries().items()))
        return self.queries

    def sql(self, base: str) -> tuple:
        return tuple(q.replace("{base}", base) for q in self.texts())

    def setup_sql(self, base: str) -> tuple:
        return tuple(q.replace("{base}", base) for q in self.setup)

    @property
    def key(self) -> str:
        """Names the query texts, so cached reference answers are recomputed when a query changes."""
        return hashlib.sha256(json.dumps([self.setup, self.texts()]).encode()).hexdigest()[:16]


LINEITEM = "read_parquet('{base}/tpch-sf1/lineitem.parquet')"
SMALL_GLOB = "read_parquet('{base}/small-64/*.parquet')"
# The same 64 files named one by one, in the folder's order (DuckDB expands such a list one path at a time).
SMALL_LIST = "read_parquet([" + ", ".join(f"'{{base}}/small-64/part-{n:02d}.parquet'" for n in range(64)) + "])"
SMALL_AGG = "SELECT l_returnflag, count(*), sum(l_quantity), avg(l_extendedprice) FROM {} GROUP BY ALL ORDER BY ALL"
# The 6-column scan: its requests and bytes are in docs/benchmarks.md.
PROJECTION = (
    "SELECT sum(l_quantity), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)), min(l_shipdate), "
    "max(l_shipdate), count(*) FILTER (WHERE l_returnflag = 'R') FROM "
)

WORKLOADS = {
    w.name: w
    for w in [
        Workload(
            "lineitem-all",
            "tpch-sf1",
            (f"SELECT count(*), sum(hash(COLUMNS(*))) FROM {LINEITEM}",),
            about="every column of lineitem: one read of each row group's whole span",
        ),
        Workload(
            "lineitem-projection",
            "tpch-sf1",
            (PROJECTION + LINEITEM,),
            about="6 of 16 columns: the column chunks of each row group one after another",
        ),
        Workload(
            "lineitem-selective",
            "tpch-sf1",
            (
                f"SELECT count(*), sum(l_extendedprice), sum(l_quantity) FROM {LINEITEM} "
                "WHERE l_orderkey BETWEEN 3000000 AND 3150000",
            ),
            about="an l_orderkey range that min/max statistics narrow to 2-3 of 60 row groups",
        ),
        Workload(
            "tpch-22",
            "tpch-sf1",
            None,
            tuple(
                f"CREATE OR REPLACE VIEW {t} AS FROM read_parquet('{{base}}/tpch-sf1/{t}.parquet')"
                for t in data.TPCH_TABLES
            ),
            about="the 22 TPC-H queries over views on the parquet files",
        ),
        Workload(
            "csv",
            "lineitem-csv",
            (
                "SELECT count(*), sum(l_quantity), sum(l_extendedprice), sum(l_discount), max(l_shipdate), "
                "sum(length(l_comment)) FROM read_csv('{base}/lineitem-csv/lineitem-2m.csv')",
            ),
            about="2M lineitem rows as CSV (~250 MB), sniffed, one sequential scan",
        ),
        Workload(
            "parquet-1rg",
            "lineitem-1rg",
            (PROJECTION + "read_parquet('{base}/lineitem-1rg/lineitem.parquet')",),
            about="the 6-column scan of lineitem written as one row group",
        ),
        Workload(
            "glob-count",
            "small-64",
            (f"SELECT count(*) FROM {SMALL_GLOB}",),
            about="count(*) over 64 parquet files of ~1 MiB: a LIST, then each file's footer",
        ),
        Workload(
            "glob-agg",
            "small-64",
            (SMALL_AGG.format(SMALL_GLOB),),
            about="a small aggregate over the same 64 files",
        ),
        Workload(
            "list-agg",
            "small-64",
            (SMALL_AGG.format(SMALL_LIST),),
            about="the same aggregate over the 64 files named in a list, in the folder's order",
        ),
        Workload(
            "blob",
            "blob-256m",
            ("SELECT hash(content), octet_length(content) FROM read_blob('{base}/blob-256m/blob.bin')",),
            about="read_blob of a 256 MiB object (128 MiB sequential reads)",
        ),
    ]
}


# Issue 9's targets for httpfs2 (read-ahead on) against native, DuckDB threads=1.
SPEED_TARGETS = {  # (profile, workload, external file cache) -> minimum native s / httpfs2 s
    ("region", "lineitem-projection", False): 7.0,
    ("region", "tpch-22", False): 5.0,
    ("region", "glob-count", False): 5.0,
    ("region", "glob-agg", False): 5.0,
    ("region", "csv", False): 3.0,
    ("region", "parquet-1rg", False): 4.5,
    ("region", "tpch-22", True): 2.0,
}
# Issue 24: at lan (no latency to hide) httpfs2 must cost nothing, whatever the threads and cache: TPC-H at least
# native's speed, every other workload within 3%, and the DuckDB process's CPU within 5% of native's.
LAN_FLOORS = {"tpch-22": 1.0}
LAN_FLOOR = 0.97
LAN_CPU_CEILING = 1.05  # httpfs2 CPU s / native CPU s, at most
BYTES_TARGETS = {"lineitem-projection": 1.25, "lineitem-selective": 1.25}  # httpfs2 bytes / native bytes, at most


def speed_target(profile: str, name: str, file_cache: bool, threads: int):
    if profile == "lan":
        return LAN_FLOORS.get(name, LAN_FLOOR)
    return SPEED_TARGETS.get((profile, name, file_cache)) if threads == 1 else None


def cpu_target(profile: str):
    return LAN_CPU_CEILING if profile == "lan" else None


def bytes_target(profile: str, name: str, threads: int):
    return BYTES_TARGETS.get(name) if profile == "region" and threads == 1 else None


# --- reference answers ---


def reference_answers(w: Workload) -> list:
    """The rows each query of w returns from the local copy of its data, computed by DuckDB without httpfs and
    cached beside the data (recomputed when the query texts change)."""
    path = data.CACHE / "answers.json"
    cached = json.loads(path.read_text()) if path.exists() else {}
    if cached.get(w.name, {}).get("key") != w.key:
        import duckdb

        con = duckdb.connect()
        base = str(data.CACHE)
        for sql in w.setup_sql(base):
            con.execute(sql)
        cached[w.name] = {"key": w.key, "rows": [normalize_rows(con.execute(q).fetchall()) for q in w.sql(base)]}
        path.write_text(json.dumps(cached))
    return cached[w.name]["rows"]

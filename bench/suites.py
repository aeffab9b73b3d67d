"""The suites `python -m bench run SUITE` knows, as data: what each measures by default. Command-line options
(--profiles, --configs, --threads, ...) replace a suite's defaults. bench/README.md says why each suite exists; keep
the two in step.

Eight kinds, each carried out by one module:
  BlobSweep    bench/sweep.py           read_blob (or a parquet scan) of one object: MiB/s per configuration and
                                        DuckDB threads at toxiproxy latencies, beside curl's parallel ceiling
  Workloads    bench/workload_bench.py  queries users run (TPC-H among them) under a network profile: seconds, CPU,
                                        requests and bytes, against targets
  Writes       bench/write_bench.py     COPY and DuckLake writes to s3://, every one read back and checked
  AzureMatrix  bench/azure_matrix.py    the seed's az:// vs s3:// steps (writes, cold, warm, selective, glob reads)
  Tables       bench/table_bench.py     Iceberg, Delta and DuckLake tables written by their own libraries: the
                                        catalog's scan vs read_parquet of the same data files
  Peers        bench/peer_bench.py      a big instance's network: DuckDB reads and writes beside the AWS CRT client
                                        and obstore moving the same bytes, with the connections each opened
  Warm         bench/warm_bench.py      httpfs2's block cache: cold (an empty cache) and warm (a fresh process)
  Pressure     bench/pressure_bench.py  reads and a COPY while the store throttles, stalls GETs or lets the session
                                        token expire mid-query, each beside its clean run (issue 45)
"""

from dataclasses import dataclass, field

from bench.configs import CONFIGS, Point, points, sweep

NATIVE, HTTPFS2, SPLIT, LOCAL = (CONFIGS[n] for n in ("native", "httpfs2", "httpfs2 split", "local"))
NO_HEDGING = CONFIGS["httpfs2 no hedging"]
V2, V2_TUNED, V2_HTTPFS2, V2_HTTPFS2_TUNED = (
    CONFIGS[n] for n in ("2.0.1", "2.0.1 tuned", "2.0.1 httpfs2", "2.0.1 httpfs2 tuned")
)


@dataclass(frozen=True)
class BlobSweep:
    blob: tuple  # Points reading the random blob
    threads: tuple = (1, 2, 4)
    clients: tuple = ("curl",)
    ceiling: tuple = (4, 8, 16)  # concurrent ranged GETs of size/N bytes each
    parquet: tuple = ()  # Points scanning the two parquet files
    timeout: float = 300

    def run(self, run):
        from bench import sweep as executor

        executor.run(self, run)


@dataclass(frozen=True)
class Workloads:
    workloads: tuple  # names in bench/workloads.py WORKLOADS
    profiles: tuple = ("lan", "region")  # rig/s3rig.py PROFILES
    configs: tuple = (NATIVE, SPLIT, HTTPFS2)
    threads: tuple = (1,)
    clients: tuple = ("curl",)
    max_repeats: dict = field(default_factory=dict)  # workload -> at most this many repeats whatever --repeats says
    # workload -> at least this many repeats: a query of tens of ms in a fresh process on a shared machine varies by
    # a third from run to run, so its p50 needs more runs than one of seconds (each still a fresh process, interleaved)
    min_repeats: dict = field(default_factory=dict)
    timeout: float = 1800

    def repeats(self, workload: str, asked: int) -> int:
        return min(max(asked, self.min_repeats.get(workload, 0)), self.max_repeats.get(workload, 1 << 30))

    def run(self, run):
        from bench import workload_bench

        workload_bench.run(self, run)


@dataclass(frozen=True)
class Writes:
    workloads: tuple = ("parquet", "partitioned", "csv", "ducklake")  # bench/write_bench.py WRITES
    profiles: tuple = ("lan", "region", "far")
    configs: tuple = (NATIVE, HTTPFS2, LOCAL)
    threads: tuple = (4,)
    clients: tuple = ("curl",)
    timeout: float = 1800

    def run(self, run):
        from bench import write_bench

        write_bench.run(self, run)


@dataclass(frozen=True)
class Tables:
    tables: tuple  # names in bench/tables.py BUILDERS (the option --workloads picks among them)
    profiles: tuple = ("region",)
    configs: tuple = (NATIVE, HTTPFS2, LOCAL)
    threads: tuple = (1,)
    clients: tuple = ("curl",)
    timeout: float = 1800

    def run(self, run):
        from bench import table_bench

        table_bench.run(self, run)


@dataclass(frozen=True)
class Peers:
    writes: tuple = ()  # names in bench/write_bench.py WRITES (--workloads picks among them); none: the reads
    profiles: tuple = ("bigbox",)
    configs: tuple = (NATIVE, HTTPFS2)
    threads: tuple = (1, 4)
    peers: tuple = ("crt", "obstore")  # bench/peers.py CLIENTS
    blobs: tuple = ("8x128",)  # shapes of the read_blob objects, `<count>x<MiB>` (--blobs)
    projection: bool = True  # the lineitem projection after the blobs
    connections: tuple = ("plain",)  # the rig's connection modes, a rig each (rig/s3rig.py CONNECTIONS)
    crt_target_gbps: float = 5.0  # 50 Gbit/s scaled down 10x, as the bigbox profile
    obstore_concurrency: int = 64
    timeout: float = 1800

    def run(self, run):
        from bench import peer_bench

        peer_bench.run(self, run)


@dataclass(frozen=True)
class AzureMatrix:
    rows: tuple = (5_000, 50_000, 500_000, 2_000_000)
    profiles: tuple = ("lan", "region")
    paths: tuple = ("az", "az+httpfs2", "s3", "s3+httpfs2")  # the store, and whether httpfs2 reads it
    threads: tuple = (1,)
    timeout: float = 600

    def run(self, run):
        from bench import azure_matrix

        azure_matrix.run(self, run)


@dataclass(frozen=True)
class Warm:
    workloads: tuple = ("lineitem-projection", "glob-agg", "blob")  # names in bench/workloads.py WORKLOADS
    profiles: tuple = ("region",)
    # The order each point runs them in (bench/warm_bench.py names the three with the cache).
    configs: tuple = (
        "native",
        "httpfs2",
        "httpfs2 cache cold",
        "httpfs2 cache warm",
        "httpfs2 cache trusted",
        "local",
        "httpfs2 cache cold x2",
    )
    threads: tuple = (1,)
    clients: tuple = ("curl",)
    timeout: float = 1800

    def run(self, run):
        from bench import warm_bench

        warm_bench.run_suite(self, run)


@dataclass(frozen=True)
class Pressure:
    workloads: tuple = ("lineitem-projection", "glob-agg")  # reads: names in bench/workloads.py WORKLOADS
    writes: tuple = ("csv",)  # COPYs: names in bench/write_bench.py WRITES (`--workloads copy-<name>`)
    conditions: tuple = (
        "clean",
        "throttled",
        "throttled-rate",
        "stragglers",
        "rotation",
    )  # bench/pressure_bench.py CONDITIONS
    profiles: tuple = ("region",)
    configs: tuple = (NATIVE, HTTPFS2)
    # In the reads' clean runs too (what hedging costs where nothing stalls); none when --configs names the configs.
    clean_only: tuple = (NO_HEDGING,)
    threads: tuple = (1,)
    timeout: float = 300  # a run past it is a hang

    def run(self, run):
        from bench import pressure_bench

        pressure_bench.run(self, run)


ALL_WORKLOADS = (
    "lineitem-all",
    "lineitem-projection",
    "lineitem-selective",
    "tpch-22",
    "csv",
    "parquet-1rg",
    "glob-count",
    "glob-agg",
    "list-agg",
    "blob",
)
BEST = sweep(io=8, fanout=8)
RECOMMENDED = sweep(preset=True)

SUITES = {
    # What scripts/demo.sh runs: at region, native vs httpfs2 on the parquet projection, the 22 TPC-H queries (once:
    # native is by far the slowest there) and the small files by glob and by list, with the same queries on local
    # files as the floor.
    "demo": Workloads(
        workloads=("lineitem-projection", "glob-agg", "list-agg", "tpch-22"),
        profiles=("region",),
        configs=(NATIVE, HTTPFS2, LOCAL),
        max_repeats={"tpch-22": 1},
    ),
    # Issue 24: every workload on a LAN store (no latency toxic) at DuckDB threads 1 and 4, native vs httpfs2 with its
    # defaults: httpfs2 must cost nothing where there is no wait to hide (ratio and CPU targets per row).
    # The selective query takes ~30 ms at lan: 15 runs at least.
    "lan": Workloads(
        workloads=ALL_WORKLOADS,
        profiles=("lan",),
        configs=(NATIVE, HTTPFS2),
        threads=(1, 4),
        min_repeats={"lineitem-selective": 15},
    ),
    # Issue 9's whole matrix: every workload, native vs splitting alone vs read-ahead, and the local floor.
    "workloads": Workloads(workloads=ALL_WORKLOADS, configs=(NATIVE, SPLIT, HTTPFS2, LOCAL)),
    # The 22 TPC-H queries alone, at region.
    "tpch": Workloads(workloads=("tpch-22",), profiles=("region",), configs=(NATIVE, HTTPFS2, LOCAL)),
    # Issue 43: every read workload in DuckDB 2.0.1 alone (its defaults, and tuned), 2.0.1 + httpfs2 (with 2.0's
    # defaults, and tuned as alone), and 1.5.5 + httpfs2, side by side (bench/report_versions.py). TPC-H once per
    # repeat as elsewhere; --threads 1 4 for both.
    "versions": Workloads(
        workloads=ALL_WORKLOADS,
        profiles=("lan", "region"),
        configs=(HTTPFS2, V2, V2_TUNED, V2_HTTPFS2, V2_HTTPFS2_TUNED),
        min_repeats={"lineitem-selective": 5},
    ),
    # Issue 43 item 3: which of httpfs2's mechanisms still add inside DuckDB 2.0.1. httpfs2 whole, less read-ahead
    # (split reads alone), less split reads (read-ahead alone), less both (checked GETs alone), beside 2.0.1 tuned.
    "mechanisms": Workloads(
        workloads=("lineitem-projection", "lineitem-all", "csv", "glob-agg", "list-agg", "tpch-22"),
        profiles=("region",),
        configs=tuple(
            CONFIGS[n]
            for n in (
                "2.0.1 tuned",
                "2.0.1 httpfs2",
                "2.0.1 httpfs2 split",
                "2.0.1 httpfs2 read-ahead",
                "2.0.1 httpfs2 checked",
            )
        ),
    ),
    # Issue 22: writes to s3:// at every profile, each read back.
    "writes": Writes(),
    # Issue 32: lineitem as Iceberg (pyiceberg), Delta (delta-rs) and DuckLake tables on S3, 10 data files each, read
    # by the catalog's own reader and by read_parquet of the same files, native vs httpfs2 vs those files locally.
    # iceberg-appends: an often-appended table of 100 small data files.
    "tables": Tables(tables=("iceberg", "iceberg-appends", "delta", "ducklake")),
    # Issue 32: the 22 TPC-H queries on a DuckLake catalog of the 8 tables, and on views over its data files.
    "tables-tpch": Tables(tables=("ducklake-tpch",)),
    # Issue 44: the block cache, cold (an empty cache), warm (a fresh process) and warm trusting the versions cold
    # learnt, beside native, no cache and local.
    "warm": Warm(),
    # Issue 45: object storage under pressure at region, threads 1: throttled (20% 503 SlowDown), stragglers (2% of
    # GETs 10 s late), credentials rotated mid-query, each beside its clean run; the lineitem projection, the glob
    # and a COPY (not under stragglers), native vs httpfs2 (and httpfs2 without hedged reads in the reads' clean runs).
    "pressure": Pressure(),
    # Issues 31 and 32 at bigbox: 8 x 128 MiB read_blob and the lineitem projection, native vs httpfs2 at threads 1 and
    # 4, beside the AWS CRT client and obstore downloading the same objects, with the connections each opened.
    "bigbox": Peers(),
    # Issue 43 item 7: as S3 connects (keep-alive, then TLS too) beside the rig as it was (plain: every connection
    # closed), many small objects and two large ones, with the GETs and connections of each client.
    "bigbox-connections": Peers(blobs=("16x16", "2x128"), projection=False, connections=("plain", "keep-alive", "tls")),
    # Issue 31 at bigbox: one 256 MiB object and 16 files of 16 MiB written by COPY (threads 4; local: the floor), and
    # the same bytes uploaded by the CRT client and obstore; every object read back and checked.
    "bigbox-writes": Peers(writes=("csv-256m", "csv-16x16m"), configs=(NATIVE, HTTPFS2, LOCAL), threads=(4,)),
    # The seed's Azure benchmark (docs/azure.md): az:// and s3://, each native and with httpfs2.
    "azure": AzureMatrix(),
    # The earlier demo: read_blob MiB/s at two latencies, threads 1 2, and the parquet probe at 50 ms.
    "blob-demo": BlobSweep(
        blob=points(NATIVE, RECOMMENDED, BEST),
        threads=(1, 2),
        ceiling=(8,),
        parquet=(Point(NATIVE, (1,), (50,)), Point(BEST, (1,), (50,))),
    ),
    # The seed's nine modes: full to fanout-sweep.
    "full": BlobSweep(
        blob=points(NATIVE, RECOMMENDED, sweep(fanout=8, auto=True, adaptive=True), BEST),
        clients=("curl", "httplib"),
        parquet=points(NATIVE, BEST),
    ),
    "recommended": BlobSweep(blob=points(NATIVE, RECOMMENDED)),
    "auto-adaptive": BlobSweep(
        blob=points(NATIVE, sweep(fanout=8, auto=True), sweep(fanout=8, auto=True, adaptive=True))
    ),
    "overhead-sweep": BlobSweep(
        blob=points(NATIVE, *(sweep(fanout=8, auto=True, overhead_ms=ms) for ms in (0, 10, 50, 200, 500, 2000))),
        threads=(1,),
    ),
    "low-threads": BlobSweep(blob=points(NATIVE, sweep(), BEST), clients=("curl", "httplib")),
    "single-scan": BlobSweep(
        blob=points(
            NATIVE,
            RECOMMENDED,
            sweep(io=4, fanout=4),
            BEST,
            sweep(io=8, fanout=8, dedicated=True),
            sweep(io=16, fanout=16, chunk_mib=8),
        ),
        threads=(1,),
    ),
    "pool-tasks": BlobSweep(blob=points(NATIVE, *(sweep(io=n, fanout=8) for n in (1, 2, 4, 8, 16))), threads=(1,)),
    "pool-fanout": BlobSweep(blob=points(NATIVE, *(sweep(fanout=f) for f in (1, 2, 4, 8))), threads=(1,)),
    "fanout-sweep": BlobSweep(
        blob=points(NATIVE, *(sweep(fanout=f, chunk_mib=c) for f in (2, 4, 8) for c in (8, 16, 32, 64))),
        threads=(1,),
    ),
    "ceiling": BlobSweep(blob=(), ceiling=(2, 4, 8, 16, 32)),
    "parquet": BlobSweep(blob=(), clients=("curl", "httplib"), parquet=points(NATIVE, RECOMMENDED, BEST)),
}

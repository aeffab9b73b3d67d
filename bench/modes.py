"""What each bench mode measures: httpfs2 configurations, DuckDB thread counts, clients and ceiling points,
or for the workload modes (issue 9) which workloads, network profiles and configurations.

bench/README.md says why each mode exists; keep the two in step.
"""

from dataclasses import dataclass, field

PREFIX = "httpfs2_parallel_read_"
MiB = 1 << 20


def h2(
    io=16, fanout=4, chunk_mib=16, min_mib=2, preset=False, dedicated=False, auto=False, adaptive=False, overhead_ms=500
) -> dict:
    """Every httpfs2 setting, spelled out so each CSV row records what was in force (defaults as in README)."""
    if preset:  # the values the preset forces, so the row shows what the read really used
        fanout, chunk_mib, min_mib = 2, 16, 2
    return {
        PREFIX + "enabled": True,
        PREFIX + "io_threads": io,
        PREFIX + "max_fanout": fanout,
        PREFIX + "chunk_size_bytes": chunk_mib * MiB,
        PREFIX + "min_bytes": min_mib * MiB,
        PREFIX + "recommended_preset_enabled": preset,
        PREFIX + "dedicated_handles": dedicated,
        PREFIX + "auto_fanout_enabled": auto,
        PREFIX + "auto_fanout_overhead_adaptive_enabled": adaptive,
        PREFIX + "auto_fanout_overhead_ms": overhead_ms,
    }


def label(settings: dict | None) -> str:
    if settings is None:
        return "native"
    s = {k[len(PREFIX) :]: v for k, v in settings.items()}
    if s["recommended_preset_enabled"]:
        return "httpfs2 recommended"
    text = f"httpfs2 io{s['io_threads']} f{s['max_fanout']} c{s['chunk_size_bytes'] // MiB}M"
    if s["auto_fanout_enabled"]:
        text += (
            " auto+adaptive"
            if s["auto_fanout_overhead_adaptive_enabled"]
            else f" auto oh{s['auto_fanout_overhead_ms']}ms"
        )
    return text + (" dedicated" if s["dedicated_handles"] else "")


@dataclass(frozen=True)
class Config:
    settings: dict | None  # None: native httpfs, httpfs2 not loaded at all
    threads: tuple | None = None  # fixed DuckDB thread counts instead of the run's list
    latencies: tuple | None = None  # only at these latencies (None: all of the run's)

    @property
    def label(self) -> str:
        return label(self.settings)


@dataclass(frozen=True)
class Mode:
    blob: list
    threads: tuple = (1, 2, 4)
    clients: tuple = ("curl",)
    ceiling: tuple = (4, 8, 16)  # concurrent ranged GETs of size/N bytes each
    parquet: list = field(default_factory=list)


NATIVE = Config(None)
RECOMMENDED = Config(h2(preset=True))
DEFAULTS = Config(h2())
BEST = Config(h2(io=8, fanout=8))
AUTO = Config(h2(fanout=8, auto=True))
AUTO_ADAPTIVE = Config(h2(fanout=8, auto=True, adaptive=True))


@dataclass(frozen=True)
class WorkloadConfig:
    """A configuration of the workload modes. settings: what the worker SETs (None: native, httpfs2 not loaded);
    optional: settings left out, not an error, when the build lacks them (read-ahead before it landed);
    fallback: the configuration measured instead when this one's settings do not exist; local: the query reads the
    local copy of the data instead of the rig (no network, no request)."""

    label: str
    settings: dict | None
    optional: tuple = ()
    fallback: str | None = None
    local: bool = False

    @property
    def engine(self) -> str:
        return "local" if self.local else "native" if self.settings is None else "httpfs2"


RA = "httpfs2_read_ahead_enabled"
WORKLOAD_CONFIGS = {
    c.label: c
    for c in [
        WorkloadConfig("native", None),
        # Parallel range splitting alone: what httpfs2 did before read-ahead.
        WorkloadConfig("httpfs2 split", {PREFIX + "enabled": True, RA: False}, optional=(RA,)),
        WorkloadConfig("httpfs2", {PREFIX + "enabled": True, RA: True}, fallback="httpfs2 split"),
        # The same query on the local files the rig serves: the floor no remote read can go under at these threads.
        WorkloadConfig("local", None, local=True),
    ]
}


@dataclass(frozen=True)
class WorkloadMode:
    workloads: tuple  # names in bench/workloads.py WORKLOADS
    profiles: tuple = ("lan", "region")  # rig/s3rig.py PROFILES
    configs: tuple = ("native", "httpfs2 split", "httpfs2")
    threads: tuple = (1,)
    clients: tuple = ("curl",)
    max_repeats: dict = field(default_factory=dict)  # workload -> at most this many repeats whatever --repeats says


ALL_WORKLOADS = (
    "lineitem-all",
    "lineitem-projection",
    "lineitem-selective",
    "tpch-22",
    "csv",
    "parquet-1rg",
    "glob-count",
    "glob-agg",
    "blob",
)

MODES = {
    # What scripts/demo.sh runs: at region, native vs httpfs2 on the parquet projection, the 22 TPC-H queries (once:
    # native takes ~157 s) and the glob of small files, with the same queries on local files as the floor; under 10
    # minutes once the data is cached.
    "demo": WorkloadMode(
        workloads=("lineitem-projection", "glob-agg", "tpch-22"),
        profiles=("region",),
        configs=("native", "httpfs2", "local"),
        max_repeats={"tpch-22": 1},
    ),
    # Issue 24: every workload on a LAN store (no latency toxic) at DuckDB threads 1 and 4, native vs httpfs2 with its
    # defaults: httpfs2 must cost nothing where there is no wait to hide (ratio and CPU targets per row).
    "lan": WorkloadMode(workloads=ALL_WORKLOADS, profiles=("lan",), configs=("native", "httpfs2"), threads=(1, 4)),
    # Issue 9's whole matrix: every workload, native vs splitting alone vs read-ahead, and the local floor.
    "workloads": WorkloadMode(workloads=ALL_WORKLOADS, configs=("native", "httpfs2 split", "httpfs2", "local")),
    # The earlier demo: read_blob MiB/s at two latencies, threads 1 2, and the parquet probe at 50 ms.
    "blob-demo": Mode(
        blob=[NATIVE, RECOMMENDED, BEST],
        threads=(1, 2),
        ceiling=(8,),
        parquet=[Config(None, (1,), (50,)), Config(BEST.settings, (1,), (50,))],
    ),
    "full": Mode(blob=[NATIVE, RECOMMENDED, AUTO_ADAPTIVE, BEST], clients=("curl", "httplib"), parquet=[NATIVE, BEST]),
    "recommended": Mode(blob=[NATIVE, RECOMMENDED]),
    "auto-adaptive": Mode(blob=[NATIVE, AUTO, AUTO_ADAPTIVE]),
    "overhead-sweep": Mode(
        blob=[NATIVE] + [Config(h2(fanout=8, auto=True, overhead_ms=ms)) for ms in (0, 10, 50, 200, 500, 2000)],
        threads=(1,),
    ),
    "low-threads": Mode(blob=[NATIVE, DEFAULTS, BEST], clients=("curl", "httplib")),
    "single-scan": Mode(
        blob=[
            NATIVE,
            RECOMMENDED,
            Config(h2(io=4, fanout=4)),
            BEST,
            Config(h2(io=8, fanout=8, dedicated=True)),
            Config(h2(io=16, fanout=16, chunk_mib=8)),
        ],
        threads=(1,),
    ),
    "pool-tasks": Mode(blob=[NATIVE] + [Config(h2(io=n, fanout=8)) for n in (1, 2, 4, 8, 16)], threads=(1,)),
    "pool-fanout": Mode(blob=[NATIVE] + [Config(h2(fanout=f)) for f in (1, 2, 4, 8)], threads=(1,)),
    "fanout-sweep": Mode(
        blob=[NATIVE] + [Config(h2(fanout=f, chunk_mib=c)) for f in (2, 4, 8) for c in (8, 16, 32, 64)], threads=(1,)
    ),
    "ceiling": Mode(blob=[], ceiling=(2, 4, 8, 16, 32)),
    "parquet": Mode(blob=[], clients=("curl", "httplib"), parquet=[NATIVE, RECOMMENDED, BEST]),
}

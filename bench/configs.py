"""Named configurations: what one measured configuration sets on top of the build's own defaults.

The defaults are never restated here: bench/child.py reads them from the built extension (duckdb_settings()), and
resolve() stops a run before its first measurement when a configuration sets a setting the build does not have.
"""

from dataclasses import dataclass, field, replace

from bench.hosts import BASE_VERSION

PARALLEL = "httpfs2_parallel_read_"
READ_AHEAD = "httpfs2_read_ahead_enabled"
MiB = 1 << 20
# DuckDB 2.0's async IO at its best on the rig (issue 43's table): a deeper read-ahead queue, more async IO threads.
TUNED_2_0 = {"read_ahead_depth": 64, "async_threads": 48}
# httpfs2 on (httpfs2_parallel_read_enabled is its master switch) but no read split: none reaches this size.
NO_SPLIT = {PARALLEL + "min_bytes": 1024 << 30}


@dataclass(frozen=True)
class Config:
    """name: how tables call it (None: named by resolve() after the parallel-read settings in force, for the points
    of a sweep); settings: the httpfs2 settings SET (None: httpfs2 not loaded at all); local: the query reads the
    local copy of the data instead of the rig (no network, no request); duckdb: the DuckDB version it runs in
    (bench/hosts.py); duckdb_settings: DuckDB's own settings SET before httpfs2's; httpfs_variant: the host's httpfs
    built with a variant's patches (scripts/build_host_httpfs.sh HTTPFS_VARIANT), empty for the plain one."""

    name: str | None
    settings: dict | None
    local: bool = False
    duckdb: str = BASE_VERSION
    duckdb_settings: dict = field(default_factory=dict)
    httpfs_variant: str = ""

    @property
    def engine(self) -> str:
        return "local" if self.local else "native" if self.settings is None else "httpfs2"


CONFIGS = {
    c.name: c
    for c in [
        Config("native", None),  # the official httpfs 1.5.5 alone
        # Parallel range splitting alone: what httpfs2 did before read-ahead.
        Config("httpfs2 split", {PARALLEL + "enabled": True, READ_AHEAD: False}),
        Config("httpfs2", {PARALLEL + "enabled": True, READ_AHEAD: True}),  # splitting plus read-ahead
        # The same without hedged reads (issue 45): what hedging costs where nothing stalls, and buys where GETs do.
        Config("httpfs2 no hedging", {PARALLEL + "enabled": True, READ_AHEAD: True, "httpfs2_hedge_reads": False}),
        # The same query on the local files the rig serves: the floor no remote read can go under at these threads.
        Config("local", None, local=True),
        # DuckDB 1.5.6, the 1.5 line's newest (issue 43): its httpfs (built from ../shared/vendor)
        # alone and with httpfs2.
        Config("1.5.6", None, duckdb="1.5.6"),
        Config("1.5.6 httpfs2", {PARALLEL + "enabled": True, READ_AHEAD: True}, duckdb="1.5.6"),
        # DuckDB 2.0.1 (issue 43): alone with its defaults, alone tuned as its async IO is best on the rig, with
        # httpfs2, and with httpfs2 less one of its mechanisms (which of them still add on 2.0).
        Config("2.0.1", None, duckdb="2.0.1"),
        Config("2.0.1 tuned", None, duckdb="2.0.1", duckdb_settings=TUNED_2_0),
        # 2.0.1 tuned with the concurrent S3 uploads of httpfs PR 389 (the vendored port), which the httpfs 2.0.1 users
        # run has and the stored 2a6481d lacks: what httpfs2's writes are compared with.
        Config("2.0.1 pr389 tuned", None, duckdb="2.0.1", duckdb_settings=TUNED_2_0, httpfs_variant="pr389"),
        Config("2.0.1 httpfs2", {PARALLEL + "enabled": True, READ_AHEAD: True}, duckdb="2.0.1"),
        Config(
            "2.0.1 httpfs2 tuned",
            {PARALLEL + "enabled": True, READ_AHEAD: True},
            duckdb="2.0.1",
            duckdb_settings=TUNED_2_0,
        ),
        # Hedging's share on 2.0, where the host's own pieces are httpfs2's checked GETs (issue 43/45).
        Config(
            "2.0.1 httpfs2 tuned no hedging",
            {PARALLEL + "enabled": True, READ_AHEAD: True, "httpfs2_hedge_reads": False},
            duckdb="2.0.1",
            duckdb_settings=TUNED_2_0,
        ),
        Config("2.0.1 httpfs2 split", {PARALLEL + "enabled": True, READ_AHEAD: False}, duckdb="2.0.1"),
        Config("2.0.1 httpfs2 read-ahead", {PARALLEL + "enabled": True, READ_AHEAD: True} | NO_SPLIT, duckdb="2.0.1"),
        Config("2.0.1 httpfs2 checked", {PARALLEL + "enabled": True, READ_AHEAD: False} | NO_SPLIT, duckdb="2.0.1"),
    ]
}


@dataclass(frozen=True)
class Point:
    """A configuration of a sweep, optionally only at some DuckDB threads or latencies (None: the run's)."""

    config: Config
    threads: tuple | None = None
    latencies: tuple | None = None


def points(*configs) -> tuple:
    return tuple(Point(c) for c in configs)


def sweep(
    io=None, fanout=None, chunk_mib=None, preset=False, dedicated=False, auto=False, adaptive=False, overhead_ms=None
):
    """A point of a parallel-read sweep: parallel reads on, and only what differs from the build's defaults."""
    wanted = {
        "io_threads": io,
        "max_fanout": fanout,
        "chunk_size_bytes": chunk_mib and chunk_mib * MiB,
        "recommended_preset_enabled": preset or None,
        "dedicated_handles": dedicated or None,
        "auto_fanout_enabled": auto or None,
        "auto_fanout_overhead_adaptive_enabled": adaptive or None,
        "auto_fanout_overhead_ms": overhead_ms,
    }
    return Config(None, {PARALLEL + "enabled": True} | {PARALLEL + k: v for k, v in wanted.items() if v is not None})


def sweep_name(in_force: dict) -> str:
    s = {k.removeprefix(PARALLEL): v for k, v in in_force.items()}
    if s["recommended_preset_enabled"]:
        return "httpfs2 recommended"
    text = f"httpfs2 io{s['io_threads']} f{s['max_fanout']} c{s['chunk_size_bytes'] // MiB}M"
    if s["auto_fanout_enabled"]:
        adaptive = s["auto_fanout_overhead_adaptive_enabled"]
        text += " auto+adaptive" if adaptive else f" auto oh{s['auto_fanout_overhead_ms']}ms"
    return text + (" dedicated" if s["dedicated_handles"] else "")


def named(names) -> list:
    """The configurations of a comma list or a list of names; SystemExit naming the unknown ones."""
    if isinstance(names, str):
        names = names.split(",")
    names = [n.strip() for n in names if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise SystemExit(f"[bench] unknown configuration {', '.join(map(repr, unknown))}; known: {', '.join(CONFIGS)}")
    return [CONFIGS[n] for n in names]


def _value(text: str):
    """duckdb_settings() gives every value as text."""
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.lstrip("-").isdigit() else text


def resolve(config: Config, defaults: dict | None, build_name: str) -> Config:
    """config checked against the build's settings ({name: default as text}, None: no build), and a sweep point
    named after the parallel-read settings in force, which it then SETs in full, so each row records them."""
    if config.settings is None:
        return config
    if defaults is None:
        raise SystemExit(f"[bench] configuration '{config.name}' needs an httpfs2 build: run scripts/build.sh")
    unknown = [k for k in config.settings if k not in defaults]
    if unknown:
        raise SystemExit(
            f"[bench] configuration '{config.name or config.settings}' sets {', '.join(unknown)}, which {build_name} "
            f"does not have; its settings: {', '.join(sorted(defaults))}"
        )
    if config.name is not None:
        return config
    in_force = {k: _value(v) for k, v in defaults.items() if k.startswith(PARALLEL)} | config.settings
    return replace(config, name=sweep_name(in_force), settings=in_force)

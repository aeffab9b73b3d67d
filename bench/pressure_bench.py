"""Carries out the pressure suite (bench/suites.py Pressure; issue 45): reads and a COPY while the store throttles,
stalls a few GETs or lets the session token expire mid-query, each beside the same run with nothing played.

The project's misbehaving proxy (rig/hostile_proxy.py) sits in front of toxiproxy (the network profile) and
versitygw, every run included: the clean runs pay it too. For each profile, repeat and workload (the reads of
bench/workloads.py, then the COPYs of bench/write_bench.py WRITES as `copy-<name>`), in that nesting, each condition
in turn, the configurations back to back, each a fresh worker (bench/workload_bench.py's measure, the writes'
Writer.write_once): so every condition's run has its own clean run of the same repeat beside it. The reads' clean
runs add the configurations the suite runs there alone (httpfs2 without hedged reads: what hedging costs). A run that
fails, answers wrong, writes wrong or hangs (the suite's timeout) is a row with its `error`; the suite goes on.

Conditions (CONDITIONS; `--conditions` picks among them):
  clean       the proxy passing everything
  throttled   503 SlowDown to every 5th request of each kind (20%, the first included), the whole run
  throttled-rate  503 SlowDown to each request past 25 a second to its prefix (S3 throttles by request rate per
              prefix), the whole run
  stragglers  every 50th object GET of a range not asked before (2%) waits 10 s before its first byte (reads only)
  rotation    the secret carries session token `token-1`; at the 10th object GET (the 2nd upload part) the proxy asks
              the worker to replace the secret with one of token `token-2` from another connection, waits for it,
              then answers 400 ExpiredToken to every request signed with token-1 (as test_hostile_servers.py's
              expiring-token tests do; the proxy signs the others again without their token)
Each row records the requests the client sent the proxy (proxy_requests: throttled and refused ones included; the
`requests` column counts those that reached versitygw) and the faults the proxy played (proxy_faults).
"""

import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import data
from bench.workload_bench import measure, prepare, rig_cpu_since
from bench.workloads import WORKLOADS
from bench.write_bench import SOURCE, WRITES, Writer, abort_open_uploads, references
from rig import S3Rig
from rig.hostile_proxy import serve_hostile
from rig.s3rig import PROFILES

COPY = "copy-"  # a write of bench/write_bench.py WRITES, named among the workloads
EXPIRED, FRESH = "token-1", "token-2"
ROTATION_WAIT_S = 10.0  # how long the proxy waits for the worker to replace its secret
METHODS = ("GET", "HEAD", "PUT", "POST", "DELETE")


@dataclass(frozen=True)
class Condition:
    """What the proxy plays for a whole run: its mode and the settings of that mode; writes: also for COPYs."""

    mode: str
    settings: dict = field(default_factory=dict)
    writes: bool = True


CONDITIONS = {
    "clean": Condition("normal"),
    "throttled": Condition("slow_down", {"slow_down_every": 5}),
    "throttled-rate": Condition("slow_down_rate", {"rate_limit": 25}),
    "stragglers": Condition("stall_first_byte", {"stall_every": 50, "stall_seconds": 10.0}, writes=False),
    "rotation": Condition("expiring_token"),
}
ROTATE_AT = {"read": ("on_get", 10), "write": ("on_part", 2)}


def secret_sql(rig, proxy, token=None) -> str:
    """The rig's secret on the proxy, with a session token when given (the rig is plain HTTP: one statement)."""
    secret = rig.secret_sql(endpoint=proxy.endpoint)
    return secret if token is None else secret.replace(")", f", SESSION_TOKEN '{token}')")


class Pressure:
    """The proxy of one suite run and what each worker needs to play a condition against it."""

    def __init__(self, run, rig, proxy, expect: dict, timeout: float, scratch: Path):
        """expect: the reads' reference answers."""
        self.run, self.rig, self.proxy, self.expect, self.timeout = run, rig, proxy, expect, timeout
        self.signal, self.done = run.out / "rotate-signal", run.out / "rotate-done"
        self.scratch, self.writer, self.written = scratch, None, {}

    def prepare_writes(self, writes: list, threads: int):
        """The writer of the COPYs (WRITES names) and what each must read back as."""
        data.ensure(["tpch-sf1"])
        source = SOURCE.format(source=data.folder("tpch-sf1") / "lineitem.parquet")
        self.writer = Writer(self.run, self.rig, source, threads, self.timeout, watch=self.writing)
        self.written = references(self.writer.check_con, writes, source, self.scratch)

    def measure(self, row: dict, config):
        """One run of the row's read or COPY under its condition; a hang or a dead worker is the row's error."""
        name, extra = row["workload"], self.spec_extra(row["condition"])
        try:
            if name in WORKLOADS:
                self.rig.set_profile(row["profile"])
                w, expect = WORKLOADS[name], self.expect[name]
                measure(self.run, self.rig, row, w, config, expect, self.timeout, watch=self.reading, spec_extra=extra)
            else:
                write = name.removeprefix(COPY)
                folder = Path(tempfile.mkdtemp(dir=self.scratch))
                self.writer.write_once(row, config, folder, self.written[write], write, extra)
        except (subprocess.TimeoutExpired, SystemExit) as error:
            failed(self.run, self.rig, row, error)

    def spec_extra(self, condition: str) -> dict:
        extra = {"secret_sql": secret_sql(self.rig, self.proxy), "keep_going": True}
        if condition == "rotation":
            extra["secret_sql"] = secret_sql(self.rig, self.proxy, EXPIRED)
            rotate = {"signal": str(self.signal), "done": str(self.done)}
            extra["rotate"] = dict(rotate, sql=secret_sql(self.rig, self.proxy, FRESH))
        return extra

    def expire(self):
        """At the proxy's hook: the worker replaces its secret, then the old token is refused."""
        self.signal.touch()
        deadline = time.monotonic() + ROTATION_WAIT_S
        while not self.done.exists() and time.monotonic() < deadline:
            time.sleep(0.005)
        self.proxy.expired_tokens = {EXPIRED}

    @contextlib.contextmanager
    def playing(self, row: dict, kind: str):
        """Around one worker of a "read" or a "write": the proxy plays the row's condition, then its counts go into
        the row, and for a write the rig's CPU (measure() takes a read's itself)."""
        proxy, played = self.proxy, CONDITIONS[row["condition"]]
        self.signal.unlink(missing_ok=True)
        self.done.unlink(missing_ok=True)
        proxy.reset()
        for name, value in played.settings.items():
            setattr(proxy, name, value)
        proxy.mode = played.mode
        if row["condition"] == "rotation":
            hook, k = ROTATE_AT[kind]
            getattr(proxy, hook)(k, self.expire)
        cpu_before = self.rig.server_cpu_seconds()
        try:
            yield
        finally:
            proxy.mode = "normal"
            counts = proxy.counts
            row.update(
                proxy_requests=sum(counts.get(m, 0) for m in METHODS),
                proxy_faults=counts.get(f"hit:{played.mode}", 0),
            )
            if kind == "write":
                row.update(rig_cpu_since(self.rig, cpu_before))

    def reading(self, row: dict):
        return self.playing(row, "read")

    def writing(self, row: dict):
        return self.playing(row, "write")


def failed(run, rig, row: dict, error: BaseException):
    """A worker that hung (timeout) or died: its row, with what happened (and the uploads it left open aborted)."""
    abort_open_uploads(rig)
    text = f"hang: no end in {error.timeout:.0f} s" if isinstance(error, subprocess.TimeoutExpired) else str(error)
    row.update(error=text[:300])
    run.results.write(row)
    print(f"[pressure] {row['workload']} {row['condition']} {row['config']}: {text[:300]}", file=sys.stderr)


def point(run, profile_name: str, threads: int, repeat: int, name: str, condition: str, config) -> dict:
    profile = PROFILES[profile_name]
    return {
        "suite": run.name,
        "kind": "pressure",
        "workload": name,
        "condition": condition,
        "profile": profile_name,
        "latency_ms": profile.latency_ms,
        "bandwidth_kbs": profile.bandwidth_kbs or "",
        "file_cache": False,
        "client": "curl",
        "duckdb_threads": threads,
        "repeat": repeat,
        "engine": config.engine,
        "duckdb_version": config.duckdb,
        "config": config.name,
    }


def plan(names, conditions, configs, clean_only):
    """(workload, condition, configuration) in the order they run within a repeat; COPYs not under read-only
    conditions; clean_only: configurations of the reads' clean runs alone."""
    for name in names:
        is_write = name not in WORKLOADS
        for condition in (c for c in conditions if not is_write or CONDITIONS[c].writes):
            for config in configs + (clean_only if condition == "clean" and not is_write else []):
                yield name, condition, config


def run(suite, run):
    known = list(WORKLOADS) + [COPY + w for w in WRITES]
    names = run.pick("workloads", suite.workloads + tuple(COPY + w for w in suite.writes), known)
    workloads = [WORKLOADS[n] for n in names if n in WORKLOADS]
    writes = [n.removeprefix(COPY) for n in names if n not in WORKLOADS]
    conditions = run.pick("conditions", suite.conditions, CONDITIONS)
    profiles = run.pick("profiles", suite.profiles, PROFILES)
    threads = run.numbers("threads", suite.threads)[0]  # one count, as the writes
    configs = run.configs(suite.configs)
    clean_only = [] if run.opts.configs else [run.resolve(c) for c in suite.clean_only]
    run.save_meta(
        configs={c.name: c.settings for c in configs + clean_only},
        profiles={p: vars(PROFILES[p]) for p in profiles},
        conditions={c: vars(CONDITIONS[c]) for c in conditions},
    )
    scratch = Path(tempfile.mkdtemp(prefix="httpfs2-pressure-"))
    try:
        with S3Rig(access_log=True) as rig:
            expect = prepare(run, rig, workloads)
            host, port = rig.proxy_endpoint.split(":")
            with serve_hostile(host, int(port), secret_key=rig.secret_key) as proxy:
                pressure = Pressure(run, rig, proxy, expect, run.timeout(suite), scratch)
                if writes:
                    pressure.prepare_writes(writes, threads)
                for profile, repeat in ((p, r) for p in profiles for r in range(run.opts.repeats)):
                    for name, condition, config in plan(names, conditions, configs, clean_only):
                        pressure.measure(point(run, profile, threads, repeat, name, condition, config), config)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

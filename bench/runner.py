"""Runs one bench mode against a fresh local S3 rig and writes results.csv, meta.json and plot.png.

python -m bench.runner [--mode demo] [--threads "1 2"] [--repeats 3] [--clients curl] [--out DIR]
    workload modes (demo, workloads): [--profiles "lan region"] [--workloads "..."] [--configs "..."]
                                      [--file-cache "off on"]
    read_blob modes (the others):     [--latencies "0 50"] [--size-mib 512]
(each also as HTTPFS2_BENCH_<OPTION> in the environment, e.g. HTTPFS2_BENCH_FILE_CACHE).
A latency of 'direct' reads versitygw without the proxy; a number goes through toxiproxy with that latency
toxic (0 included, which is faster and fairer than no toxic at all). Any failed or wrong read stops the run.
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from bench import ceiling, datasets, plot, workload_bench
from bench.child import run_module
from bench.modes import MODES, WORKLOAD_CONFIGS, WorkloadMode
from bench.results import Writer, setting_columns
from bench.workloads import WORKLOADS
from rig import HTTPFS2_EXTENSION, REPO_ROOT, S3Rig, httpfs_extension
from rig.s3rig import PROFILES

MiB = 1 << 20


def parse_args():
    def env(name, default):
        return os.environ.get(f"HTTPFS2_BENCH_{name}", default)

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", default=env("MODE", "demo"), choices=sorted(MODES))
    parser.add_argument(
        "--profiles",
        default=env("PROFILES", ""),
        help=f"workload modes: network profiles, of {' '.join(PROFILES)} (mode default)",
    )
    parser.add_argument(
        "--workloads",
        default=env("WORKLOADS", ""),
        help=f"workload modes: a subset of {' '.join(WORKLOADS)} (mode default)",
    )
    parser.add_argument(
        "--configs",
        default=env("CONFIGS", ""),
        help=f"workload modes: configurations, of {', '.join(map(repr, WORKLOAD_CONFIGS))}; "
        "several as a comma list (mode default)",
    )
    parser.add_argument(
        "--file-cache",
        default=env("FILE_CACHE", "off"),
        help="workload modes: enable_external_file_cache values, 'off' and/or 'on'",
    )
    parser.add_argument("--latencies", default=env("LATENCIES", "0 50"), help="ms values and/or 'direct'")
    parser.add_argument("--threads", default=env("THREADS", ""), help="DuckDB thread counts (mode default)")
    parser.add_argument("--clients", default=env("CLIENTS", ""), help="curl and/or httplib (mode default)")
    parser.add_argument("--repeats", type=int, default=int(env("REPEATS", "3")))
    parser.add_argument("--size-mib", type=int, default=int(env("SIZE_MIB", "512")), help="blob and parquet size")
    parser.add_argument(
        "--timeout",
        type=float,
        default=env("TIMEOUT", None),
        help="seconds one run may take (default 300, workload modes 1800)",
    )
    parser.add_argument("--out", type=Path, default=env("OUT", None))
    opts = parser.parse_args()
    workload_mode = isinstance(MODES[opts.mode], WorkloadMode)
    opts.timeout = float(opts.timeout or (1800 if workload_mode else 300))
    for name, allowed in (("profiles", PROFILES), ("workloads", WORKLOADS)):
        unknown = [v for v in getattr(opts, name).split() if v not in allowed]
        if unknown:
            parser.error(f"--{name}: unknown {' '.join(unknown)}; known: {' '.join(allowed)}")
    opts.config_labels = [c.strip() for c in opts.configs.split(",") if c.strip()]
    unknown = [c for c in opts.config_labels if c not in WORKLOAD_CONFIGS]
    if unknown or any(v not in ("off", "on") for v in opts.file_cache.split()):
        parser.error(f"--configs: known {', '.join(WORKLOAD_CONFIGS)}; --file-cache: off and/or on")
    return opts


def snapshot_extension(out: Path, required: bool) -> Path | None:
    """A copy of the build: a rebuild during the run must not change what is measured (or break LOAD)."""
    if not HTTPFS2_EXTENSION.exists():
        if required:
            raise SystemExit(f"[bench] {HTTPFS2_EXTENSION} not built: run scripts/build.sh")
        return None
    copy = out / HTTPFS2_EXTENSION.name
    shutil.copyfile(HTTPFS2_EXTENSION, copy)
    return copy


class Bench:
    def __init__(self, opts, rig, out: Path, extension: Path):
        self.opts, self.rig = opts, rig
        self.mode = MODES[opts.mode]
        self.threads = [int(t) for t in opts.threads.split()] or list(self.mode.threads)
        self.clients = opts.clients.split() or list(self.mode.clients)
        self.extension = extension
        self.writer = Writer(out / "results.csv")

    def run(self, data: dict):
        for token in self.opts.latencies.split():
            path = "direct" if token == "direct" else "proxy"
            latency = 0 if path == "direct" else int(token)
            if path == "proxy":
                self.rig.set_latency(latency)
            endpoint = self.rig.direct_endpoint if path == "direct" else self.rig.proxy_endpoint
            where = {"path": path, "latency_ms": latency}
            for repeat in range(self.opts.repeats):
                for streams in self.mode.ceiling:
                    self.ceiling(data["blob"], endpoint, dict(where, repeat=repeat), streams)
                for workload, configs in (("blob", self.mode.blob), ("parquet", self.mode.parquet)):
                    for client in self.clients:
                        for config in configs:
                            if config.latencies and (path == "direct" or latency not in config.latencies):
                                continue
                            for threads in config.threads or self.threads:
                                self.duckdb(
                                    data[workload],
                                    endpoint,
                                    config,
                                    dict(
                                        where, repeat=repeat, workload=workload, client=client, duckdb_threads=threads
                                    ),
                                )
        self.writer.close()

    def measure(self, row: dict, nbytes: int, measurement) -> dict:
        """Runs measurement(), adds the rig's CPU over it and the common columns, writes the row."""
        before = self.rig.server_cpu_seconds()
        result = measurement()
        after = self.rig.server_cpu_seconds()
        row.update(
            result,
            timestamp=datetime.now().isoformat(timespec="seconds"),
            bytes=nbytes,
            mib_s=nbytes / MiB / result["wall_s"],
            loadavg_1m=os.getloadavg()[0],
            server_cpu_s=after["versitygw"] - before["versitygw"],
            proxy_cpu_s=after["toxiproxy"] - before["toxiproxy"],
        )
        self.writer.write(row)
        print(
            f"[bench] {row['latency_ms']:g} ms {row['path']} {row['client']} t={row['duckdb_threads']} "
            f"{row['workload']} {row['config']} #{row['repeat']}: {row['mib_s']:.0f} MiB/s, "
            f"cpu {row['client_cpu_s']:.2f} s",
            file=sys.stderr,
            flush=True,
        )
        return row

    def ceiling(self, blob, endpoint: str, row: dict, streams: int):
        row.update(
            mode="ceiling",
            engine="curl-cli",
            config=f"curl {streams}x{blob.bytes // streams // MiB}MiB",
            workload="blob",
            client="-",
            duckdb_threads="",
            ceiling_streams=streams,
        )
        self.measure(
            row,
            blob.bytes,
            lambda: ceiling.measure(self.rig, endpoint, blob.key, blob.bytes, streams, self.opts.timeout),
        )

    def duckdb(self, dataset, endpoint: str, config, row: dict):
        row.update(
            mode="parquet" if row["workload"] == "parquet" else self.opts.mode,
            engine="native" if config.settings is None else "httpfs2",
            config=config.label,
            **setting_columns(config.settings),
        )
        spec = {
            "httpfs": str(httpfs_extension()),
            "httpfs2": config.settings and str(self.extension),
            "secret_sql": self.rig.secret_sql(endpoint),
            "threads": row["duckdb_threads"],
            "client": row["client"],
            "settings": config.settings or {},
            "workload": row["workload"],
            "url": dataset.url,
            "expect": dataset.expect,
        }
        self.measure(row, dataset.bytes, lambda: self.worker(spec))

    def worker(self, spec: dict) -> dict:
        return json.loads(run_module("bench.worker", [json.dumps(spec)], self.opts.timeout, "worker"))


def write_meta(out: Path, opts, extension: Path | None, **fields):
    commit = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--", "src", "CMakeLists.txt"],
        capture_output=True,
        text=True,
    )
    meta = {
        "argv": sys.argv,
        "options": {k: str(v) for k, v in vars(opts).items()},
        "commit": commit.stdout.strip(),
        "src_modified": bool(dirty.stdout.strip()),
        "extension_sha256": extension and hashlib.sha256(extension.read_bytes()).hexdigest(),
        "started": datetime.now().isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "machine": platform.platform(),
        **fields,
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2))


def main():
    # A timeout's SIGTERM must unwind through S3Rig's context manager, which stops versitygw and toxiproxy.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    opts = parse_args()
    out = opts.out or REPO_ROOT / "bench" / "results" / datetime.now().strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    mode = MODES[opts.mode]
    if isinstance(mode, WorkloadMode):
        extension = snapshot_extension(out, required=False)
        with S3Rig(access_log=True) as rig:  # the access log counts each worker's requests
            write_meta(out, opts, extension)  # workload_bench adds its datasets, configurations and notes
            workload_bench.run(opts, mode, rig, out, extension)
    else:
        extension = snapshot_extension(out, required=True)
        with S3Rig() as rig:
            bench = Bench(opts, rig, out, extension)
            data = {"blob": datasets.blob(rig, opts.size_mib)}
            if bench.mode.parquet:
                data["parquet"] = datasets.parquet(rig, opts.size_mib)
            write_meta(out, opts, extension, datasets={k: vars(v) for k, v in data.items()})
            print(f"[bench] data ready in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
            bench.run(data)
        plot.write(out / "results.csv", out / "plot.png")
    print(f"[bench] {opts.mode} done in {time.monotonic() - start:.0f} s: {out / 'results.csv'}", file=sys.stderr)
    print(out / "results.csv")


if __name__ == "__main__":
    main()

"""The workload modes (issue 9): real queries under a network like object storage, native vs httpfs2.

For each network profile, repeat, workload, client, DuckDB thread count and configuration, in that nesting (the
configurations of one point run back to back, so load drifts hit them alike), one fresh worker process
(bench/workload_worker.py). Requests are counted from versitygw's access log and bytes from toxiproxy's rchar,
both from the worker's timer start until the worker has exited and the log and the counter have stopped moving.
"""

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from datetime import datetime
from pathlib import Path

from bench import workload_data
from bench.child import run_module
from bench.modes import WORKLOAD_CONFIGS, WorkloadConfig
from bench.results import WORKLOAD_COLUMNS, Writer
from bench.workloads import WORKLOADS, reference_answers
from rig import REPO_ROOT, httpfs_extension
from rig.s3rig import PROFILES, count_requests, read_bytes

MiB = 1 << 20
SETTLE_S = 0.3  # the access log and rchar must stay unchanged this long after the worker exits
SETTLE_MAX_S = 5.0


class WorkloadBench:
    def __init__(self, opts, mode, rig, out: Path, extension: Path | None):
        self.opts, self.mode, self.rig, self.out = opts, mode, rig, out
        self.extension = extension
        self.workloads = [WORKLOADS[w] for w in (opts.workloads.split() or mode.workloads)]
        self.profiles = opts.profiles.split() or list(mode.profiles)
        self.threads = [int(t) for t in opts.threads.split()] or list(mode.threads)
        self.clients = opts.clients.split() or list(mode.clients)
        self.file_cache = [{"off": False, "on": True}[v] for v in opts.file_cache.split()]
        self.notes = []
        self.configs = self._resolve(opts.config_labels or list(mode.configs))
        self.writer = Writer(out / "results.csv", WORKLOAD_COLUMNS)

    # --- configurations ---

    def _probe(self) -> set:
        """The names of httpfs2's settings in this build (empty when there is no build)."""
        if self.extension is None:
            return set()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.workload_worker",
                "--probe",
                json.dumps({"httpfs": str(httpfs_extension()), "httpfs2": str(self.extension)}),
            ],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise SystemExit(f"[bench] probing {self.extension} failed:\n{done.stderr[-3000:]}")
        return set(json.loads(done.stdout))

    def _resolve(self, labels) -> list:
        """The configurations to measure, with settings this build lacks dropped (optional ones), or the config
        replaced by its fallback, or skipped; each decision noted."""
        present = self._probe()
        chosen = []
        for label in labels:
            config = WORKLOAD_CONFIGS[label]
            while config is not None and config.settings is not None:
                if self.extension is None:
                    self.notes.append(f"{config.label}: skipped, no httpfs2 build (run scripts/build.sh)")
                    config = None
                    break
                missing = [k for k in config.settings if k not in present and k not in config.optional]
                if not missing:
                    dropped = [k for k in config.settings if k not in present]
                    if dropped:
                        self.notes.append(f"{config.label}: this build has no {', '.join(dropped)}; not set")
                    config = replace(config, settings={k: v for k, v in config.settings.items() if k in present})
                    break
                fallback = WORKLOAD_CONFIGS.get(config.fallback) if config.fallback else None
                self.notes.append(
                    f"{config.label}: this build has no {', '.join(missing)}; "
                    + (f"measured '{fallback.label}' instead" if fallback else "skipped")
                )
                config = fallback
            if config is not None and config.label not in {c.label for c in chosen}:
                chosen.append(config)
        self.notes = list(dict.fromkeys(self.notes))
        for note in self.notes:
            print(f"[bench] note: {note}", file=sys.stderr, flush=True)
        return chosen

    # --- data ---

    def prepare(self) -> dict:
        """Generates (once per machine) and uploads the data; computes or loads the reference answers."""
        datasets = [w.dataset for w in self.workloads]
        workload_data.ensure(datasets)
        workload_data.upload(self.rig, datasets)
        self.expect = {w.name: reference_answers(w) for w in self.workloads}
        return {
            name: {"bytes": workload_data.data_bytes(name), "files": len(workload_data.files(name))}
            for name in dict.fromkeys(datasets)
        }

    # --- running ---

    def run(self):
        base = f"s3://{self.rig.bucket}"
        for profile_name in self.profiles:
            profile = self.rig.set_profile(profile_name)
            for repeat in range(self.opts.repeats):
                for w in self.workloads:
                    if repeat >= self.mode.max_repeats.get(w.name, self.opts.repeats):
                        continue
                    for file_cache in self.file_cache:
                        for client in self.clients:
                            for threads in self.threads:
                                for config in self.configs:
                                    row = {
                                        "mode": self.opts.mode,
                                        "workload": w.name,
                                        "profile": profile_name,
                                        "latency_ms": profile.latency_ms,
                                        "bandwidth_kbs": profile.bandwidth_kbs or "",
                                        "file_cache": file_cache,
                                        "client": client,
                                        "duckdb_threads": threads,
                                        "repeat": repeat,
                                        "engine": config.engine,
                                        "config": config.label,
                                    }
                                    self.measure(row, w, config, str(workload_data.CACHE) if config.local else base)
        self.writer.close()

    def _settled(self) -> tuple:
        """(access log size, toxiproxy rchar) once both have stopped moving."""
        last, since, deadline = None, time.monotonic(), time.monotonic() + SETTLE_MAX_S
        while True:
            now = (os.path.getsize(self.rig.access_log_path), read_bytes(self.rig.toxiproxy.pid))
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= SETTLE_S or time.monotonic() > deadline:
                return now
            time.sleep(0.05)

    def measure(self, row: dict, w, config: WorkloadConfig, base: str):
        spec = {
            "httpfs": str(httpfs_extension()),
            "httpfs2": config.settings is not None and str(self.extension),
            "secret_sql": self.rig.secret_sql(),
            "threads": row["duckdb_threads"],
            "client": row["client"],
            "settings": config.settings or {},
            "file_cache": row["file_cache"],
            "setup": w.setup_sql(base),
            "queries": w.sql(base),
            "expect": self.expect[w.name],
            "access_log": str(self.rig.access_log_path),
            "proxy_pid": self.rig.toxiproxy.pid,
        }
        # A file, not argv: the 22 TPC-H answers exceed the kernel's limit for one argument.
        spec_path = self.out / "worker-spec.json"
        spec_path.write_text(json.dumps(spec))
        cpu_before = self.rig.server_cpu_seconds()
        stdout = run_module("bench.workload_worker", [f"@{spec_path}"], self.opts.timeout, f"{w.name} {config.label}")
        result = json.loads(stdout)
        log_end, rchar_end = self._settled()
        cpu_after = self.rig.server_cpu_seconds()
        requests = count_requests(self.rig.access_log_path, result["log_offset"])
        stats = result["stats"]
        row.update(
            timestamp=datetime.now().isoformat(timespec="seconds"),
            wall_s=result["wall_s"],
            client_cpu_s=result["client_cpu_s"],
            client_sys_s=result["client_sys_s"],
            server_cpu_s=cpu_after["versitygw"] - cpu_before["versitygw"],
            proxy_cpu_s=cpu_after["toxiproxy"] - cpu_before["toxiproxy"],
            requests=sum(requests.values()),
            get_requests=requests.get("GetObject", 0),
            head_requests=requests.get("HeadObject", 0),
            list_requests=requests.get("ListObjectsV2", 0),
            fetched_bytes=rchar_end - result["proxy_rchar"],
            read_ahead_memory_peak=stats.get("read_ahead_memory_peak", ""),
            loadavg_1m=os.getloadavg()[0],
            query_s=json.dumps([round(s, 4) for s in result["query_s"]]),
            settings=json.dumps(config.settings or {}),
            h2_stats=json.dumps(stats) if stats else "",
        )
        self.writer.write(row)
        print(
            f"[bench] {row['profile']} {row['client']} t={row['duckdb_threads']}"
            f"{' file-cache' if row['file_cache'] else ''} {w.name} {config.label} #{row['repeat']}: "
            f"{row['wall_s']:.2f} s, cpu {row['client_cpu_s']:.2f} s, {row['requests']} requests, "
            f"{row['fetched_bytes'] / MiB:.1f} MiB",
            file=sys.stderr,
            flush=True,
        )


def run(opts, mode, rig, out: Path, extension: Path | None):
    """Runs a workload mode; adds its datasets, configurations, profiles and notes to meta.json first."""
    bench = WorkloadBench(opts, mode, rig, out, extension)
    start = time.monotonic()
    datasets = bench.prepare()
    print(f"[bench] data ready in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
    meta = {
        "datasets": datasets,
        "notes": bench.notes,
        "configs": {c.label: c.settings for c in bench.configs},
        "profiles": {p: vars(PROFILES[p]) for p in bench.profiles},
    }
    (out / "meta.json").write_text(json.dumps(dict(json.loads((out / "meta.json").read_text()), **meta), indent=2))
    bench.run()

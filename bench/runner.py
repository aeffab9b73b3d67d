"""The bench's one entry point: runs a suite against a local rig it starts and stops, or reports earlier results.

python -m bench run SUITE [--profiles P ...] [--configs C,...] [--threads N ...] [--repeats N] [--clients ...]
                          [--workloads W ...] [--file-cache off on] [--latencies 0 50 direct] [--size-mib N]
                          [--rows N ...] [--no-aged] [--conditions C ...] [--timeout S] [--out DIR]
python -m bench report RESULTS... [--compare]     RESULTS: results.csv files or the folders holding them
Each run option is also an environment variable HTTPFS2_BENCH_<OPTION> (e.g. HTTPFS2_BENCH_PROFILES). A run writes
DIR/results.csv (row by row), meta.json and the extension it measured, and prints the path of results.csv.
Old spellings still work: `python -m bench.runner [--mode SUITE] ...` is `run SUITE ...`; bench/summarize.py,
`python -m bench.write_bench` and `python -m bench.azure_matrix` keep their options (bench/README.md).

How the parts fit:
  suites.py   the suites as data (six kinds: blob sweeps, workloads incl. TPC-H, writes, az:// vs s3://, table
              formats, peers)
  configs.py  named configurations, checked against the settings the build itself lists
  sweep.py, workload_bench.py, write_bench.py, azure_matrix.py, table_bench.py, peer_bench.py   one kind each
  child.py -> worker.py   the one child process and its one DuckDB connect; every measurement is a fresh process
              (peers.py: the other S3 clients' child)
  data.py     the data read (cached TPC-H, per-run objects); workloads.py, answers.py: queries and correct answers
  results.py  the one results schema (results.csv); report.py (with report_*.py) the one report writer; plot.py
"""

import argparse
import hashlib
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench import configs, hosts
from bench.child import build_settings
from bench.results import Writer
from bench.suites import SUITES
from rig import HTTPFS2_EXTENSION, REPO_ROOT, httpfs_extension

LIST_OPTIONS = (
    "profiles",
    "configs",
    "threads",
    "clients",
    "workloads",
    "file_cache",
    "latencies",
    "rows",
    "blobs",
    "rig_connections",
    "conditions",
)


def log(text: str):
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def env(name: str, default=None):
    return os.environ.get(f"HTTPFS2_BENCH_{name.upper()}", default)


def run_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench run", description="Runs one suite; see bench/README.md.")
    parser.add_argument("suite", choices=sorted(SUITES))
    for name in LIST_OPTIONS:
        parser.add_argument(f"--{name.replace('_', '-')}", nargs="+", default=env(name), help="(suite default)")
    parser.add_argument("--paths", nargs="+", dest="configs", help=argparse.SUPPRESS)  # azure_matrix's old name
    parser.add_argument("--repeats", type=int, default=int(env("repeats", "3")))
    parser.add_argument("--size-mib", type=int, default=int(env("size_mib", "512")), help="blob sweeps: object size")
    parser.add_argument("--no-aged", action="store_true", help="azure: skip the reads of the > 10 s old blob")
    parser.add_argument("--timeout", type=float, default=env("timeout"), help="seconds one run may take")
    parser.add_argument("--out", type=Path, default=env("out"))
    return parser


def tokens(value, separator=None) -> list | None:
    """An option's values: several arguments, or one quoted string of them (`--profiles "lan region"`)."""
    if value is None:
        return None
    text = value if isinstance(value, str) else (separator or " ").join(value)
    return [t.strip() for t in text.split(separator) if t.strip()] or None


@dataclass
class Run:
    """One invocation of a suite: what its executor reads (options over the suite's defaults, the build) and where
    it writes (results.csv, meta.json)."""

    name: str
    opts: argparse.Namespace
    out: Path
    extension: Path | None  # the snapshot measured; None: no build
    build_defaults: dict | None  # the build's httpfs2 settings {name: default as text}
    results: Writer
    notes: list = field(default_factory=list)
    prepared: dict = field(default_factory=dict)  # DuckDB version -> hosts.Host, set up on first use

    def pick(self, option: str, default, known=None) -> list:
        """The option's values, else the suite's default; SystemExit naming values not in `known`."""
        values = tokens(getattr(self.opts, option), "," if option == "configs" else None) or list(default)
        unknown = [v for v in values if known is not None and v not in known]
        if unknown:
            raise SystemExit(f"[bench] --{option}: unknown {' '.join(unknown)}; known: {' '.join(known)}")
        return values

    def numbers(self, option: str, default) -> list:
        return [int(v) for v in self.pick(option, default)]

    def resolve(self, config):
        """config checked against the build; SystemExit naming a setting the build lacks (bench/configs.py)."""
        return configs.resolve(config, self.build_defaults, str(self.extension))

    def configs(self, default) -> list:
        """The --configs named, else `default`, each checked against the build."""
        return [self.resolve(c) for c in configs.named(self.pick("configs", [])) or default]

    def host(self, config) -> hosts.Host:
        """The DuckDB config runs in, set up on first use; SystemExit when httpfs2 is measured and not built for it."""
        key = config.duckdb + (f" {config.httpfs_variant}" if config.httpfs_variant else "")
        if key not in self.prepared:
            self.prepared[key] = hosts.prepare(config.duckdb, self.out, self.extension, config.httpfs_variant)
            self.save_meta(hosts={v: {k: str(x) for k, x in vars(h).items()} for v, h in self.prepared.items()})
        host = self.prepared[key]
        if config.settings is not None and host.httpfs2 is None:
            raise SystemExit(f"[bench] '{config.name}' needs httpfs2 built for DuckDB {host.version}")
        return host

    def extensions(self, config) -> list:
        """What a worker LOADs for config: its host's httpfs, and that host's httpfs2 unless httpfs2 is not measured."""
        host = self.host(config)
        return [str(host.httpfs)] + ([str(host.httpfs2)] if config.settings is not None else [])

    def python(self, config) -> str:
        """The interpreter of config's DuckDB version."""
        return self.host(config).python

    def timeout(self, suite) -> float:
        return float(self.opts.timeout or suite.timeout)

    def note(self, text: str):
        self.notes.append(text)
        log(f"note: {text}")

    def save_meta(self, **fields):
        """meta.json, with fields added to what is there."""
        path = self.out / "meta.json"
        meta = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps(dict(meta, notes=self.notes, **fields), indent=2))


def git(*args) -> str:
    return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True).stdout.strip()


def start_meta(run: Run):
    run.save_meta(
        suite=run.name,
        argv=sys.argv,
        command=shlex.join([Path(sys.executable).name, "-m", "bench", *run.opts.argv]),
        options={k: str(v) for k, v in vars(run.opts).items()},
        commit=git("rev-parse", "HEAD"),
        src_modified=bool(git("status", "--porcelain", "--", "src", "CMakeLists.txt")),
        extension_sha256=run.extension and hashlib.sha256(run.extension.read_bytes()).hexdigest(),
        build_settings=run.build_defaults,
        started=datetime.now().isoformat(timespec="seconds"),
        cpus=os.cpu_count(),
        machine=platform.platform(),
    )


def run_suite(argv: list) -> Path:
    opts = run_parser().parse_args(argv)
    opts.argv = ["run", *argv]
    out = opts.out or REPO_ROOT / "bench" / "results" / datetime.now().strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)
    extension = hosts.snapshot(HTTPFS2_EXTENSION, out)
    defaults = extension and build_settings([httpfs_extension(), extension])
    run = Run(opts.suite, opts, out, extension, defaults, Writer(out / "results.csv"))
    start_meta(run)
    start = time.monotonic()
    try:
        SUITES[opts.suite].run(run)
    finally:
        run.results.close()
    log(f"{opts.suite} done in {time.monotonic() - start:.0f} s: {out / 'results.csv'}")
    return out / "results.csv"


def legacy_argv(argv: list) -> list:
    """`python -m bench.runner [--mode M] ...` as `run M ...`."""
    rest, mode = list(argv), env("mode", "demo")
    for n, arg in enumerate(rest):
        if arg == "--mode" and n + 1 < len(rest):
            mode = rest[n + 1]
            del rest[n : n + 2]
            break
        if arg.startswith("--mode="):
            mode = arg.split("=", 1)[1]
            del rest[n]
            break
    return ["run", mode, *rest]


def main(argv=None):
    # A timeout's SIGTERM must unwind through the rigs' context managers, which stop their servers.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["report"]:
        from bench import report

        return report.main(argv[1:])
    if argv[:1] != ["run"]:
        if argv[:1] in (["-h"], ["--help"]):
            sys.exit(print(__doc__))
        argv = legacy_argv(argv)
    print(run_suite(argv[1:]))


if __name__ == "__main__":
    main()

"""Repeats of one measurement folded into a point: p50 (median), min and max MiB/s, medians of the rest."""

from dataclasses import dataclass
from statistics import median

GiB = 1 << 30
KEY = ("workload", "path", "latency_ms", "client", "engine", "config", "duckdb_threads")


@dataclass
class Point:
    workload: str
    path: str
    latency_ms: float
    client: str
    engine: str
    config: str
    duckdb_threads: float | str  # '' for ceiling rows
    n: int
    p50: float
    lo: float
    hi: float
    cpu_pct: float  # CPU of the reading process over wall time; 100% = one core busy
    cpu_gib: float  # CPU seconds per GiB read, the reading process
    sys_gib: float  # its kernel share
    proxy_gib: float
    server_gib: float
    sub_per_read: float | None  # httpfs2 only
    reads_split: float | None
    sub_read_s: float | None

    @property
    def all_gib(self) -> float:
        """Reader, proxy and server together: on a machine of C cores, C / all_gib GiB/s is the CPU-bound limit."""
        return self.cpu_gib + self.proxy_gib + self.server_gib

    @property
    def scenario(self) -> tuple:
        return self.workload, self.path, self.latency_ms, self.client


def _per_gib(rows, column):
    return median(r[column] / r["bytes"] * GiB for r in rows)


def _stat(rows, fn):
    values = [fn(r) for r in rows if r.get("reads") not in ("", None)]
    return median(values) if values else None


def points(rows) -> list:
    """One Point per KEY, in the order the keys first appear (the order the modes list them)."""
    groups = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in KEY), []).append(row)
    result = []
    for key, group in groups.items():
        speeds = [r["mib_s"] for r in group]
        result.append(
            Point(
                *key,
                n=len(group),
                p50=median(speeds),
                lo=min(speeds),
                hi=max(speeds),
                cpu_pct=100 * median(r["client_cpu_s"] / r["wall_s"] for r in group),
                cpu_gib=_per_gib(group, "client_cpu_s"),
                sys_gib=_per_gib(group, "client_sys_s"),
                proxy_gib=_per_gib(group, "proxy_cpu_s"),
                server_gib=_per_gib(group, "server_cpu_s"),
                sub_per_read=_stat(group, lambda r: r["sub_reads"] / r["reads"] if r["reads"] else 0.0),
                reads_split=_stat(group, lambda r: r["reads_split"]),
                sub_read_s=_stat(group, lambda r: r["sub_read_s"]),
            )
        )
    return result


def ceilings(all_points) -> dict:
    """(path, latency_ms) -> the ceiling point with the best p50 there."""
    best = {}
    for p in all_points:
        if p.engine == "curl-cli":
            key = (p.path, p.latency_ms)
            if key not in best or p.p50 > best[key].p50:
                best[key] = p
    return best

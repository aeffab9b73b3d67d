"""The peers suites' table (bench/report.py): per workload and profile, DuckDB native and httpfs2 at each thread count
beside the AWS CRT client and obstore moving the same bytes: p50 seconds, MiB/s, CPU, requests and connections.
"""

from bench.report_common import fmt, p50, rig_cpu, table
from bench.report_tables import USAGE_HEADERS, profile_text, usage_cells

MiB = 1 << 20


def _moved(row) -> float:
    """The bytes a row moved: the objects' (reads of blobs, writes), else what crossed the proxy (a query's)."""
    return row["bytes"] if row.get("bytes") not in ("", None) else row.get("fetched_bytes") or 0


def _native(points: dict, workload: str, profile: str, threads) -> list:
    """native's runs of the workload at these DuckDB threads; for a peer (no threads), at the most threads."""
    natives = {t: rs for (w, p, t, c), rs in points.items() if (w, p, c) == (workload, profile, "native")}
    if threads == "" and natives:
        threads = max(natives)
    return natives.get(threads, [])


def body(rows) -> list:
    points = {}
    for row in rows:
        profile = (row["profile"], row.get("rig_connections") or "plain")
        points.setdefault((row["workload"], profile, row["duckdb_threads"], row["config"]), []).append(row)
    out = []
    for (workload, profile, threads, config), runs in points.items():
        native = _native(points, workload, profile, threads)
        seconds, native_s = p50(runs, "wall_s"), p50(native, "wall_s")
        moved = p50([dict(r, moved=_moved(r)) for r in runs], "moved")
        out.append(
            [
                workload,
                profile_text(runs[0]),
                f"{threads:g}" if threads != "" else "-",
                config,
                runs[0]["client"],
                len(runs),
                fmt(seconds, ".2f"),
                fmt(moved / MiB / seconds if moved and seconds else None, ".0f"),
                fmt(native_s / seconds if native_s and seconds else None, ".2f", "x"),
                *usage_cells(runs, fmt(p50(runs, "requests"), ".0f")),
                fmt(p50([dict(r, rig=rig_cpu(r)) for r in runs if rig_cpu(r) is not None], "rig"), ".2f"),
            ]
        )
    return out


HEADERS = ["Workload", "Profile", "Threads", "Client", "httpfs_client_implementation", "runs", "p50 s", "MiB/s"]
HEADERS += ["native / this", *USAGE_HEADERS, "rig CPU s"]


def summarize(rows) -> list:
    return [
        "### Peers: DuckDB beside the AWS CRT client and obstore, same bytes, same proxy; p50 over repeats (fresh "
        "processes, interleaved). MiB/s = the objects' bytes / s (a query: bytes through the proxy / s); native / this "
        "at the same DuckDB threads (a peer: against native at the most threads measured); CPU = the client's process; "
        "rig CPU = versitygw + toxiproxy on the same cores; requests from versitygw's access log; connections = "
        "distinct connections to the proxy, peak open = the most open at one 20 ms sample of /proc/net/tcp "
        "(bench/connections.py)",
        "",
        table(HEADERS, body(rows)),
        "",
    ]

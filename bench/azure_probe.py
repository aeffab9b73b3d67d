"""Evidence for docs/azure.md: why a warm re-read of az:// goes back to the network where s3:// does not, and
what client CPU per byte az:// costs against s3://.

    .venv/bin/python -m bench.azure_probe cache      # requests per query vs the blob's age, az:// vs s3:// (~1 min)
    .venv/bin/python -m bench.azure_probe settings   # the same warm read under DuckDB cache settings (~1 min)
    .venv/bin/python -m bench.azure_probe stale      # what trusting size + Last-Modified alone would serve
    .venv/bin/python -m bench.azure_probe cpu [--mib 256]   # read_blob CPU s/GiB: az vs s3, buffer sizes (~5 min)
    .venv/bin/python -m bench.azure_probe server [--mib 64] # Azurite's CPU per range GET by range size (~1 min)
    add --httpfs2 to load httpfs2 (parallel reads on) in the cache/settings/stale probes

Requests are counted from DuckDB's own HTTP log (CALL enable_logging('HTTP'); the azure extension logs into it
too, azure_http_logging is on by default) and opens from the FileSystem log; bytes from toxiproxy's rchar.
"""

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from bench.child import run_worker  # noqa: E402

PARQUET_ROWS = 500_000
TABLE = "SELECT range AS id, range % 97 AS k, md5(range::VARCHAR) AS s, random() AS r FROM range({rows})"
SCAN = "SELECT count(*), sum(k), max(s) FROM read_parquet('{url}')"


def connect(kind, azure_rig, s3_rig, httpfs2):
    from rig import duckdb_connect
    from rig.azurite import azure_connect

    if kind == "az":
        con = azure_connect(azure_rig, httpfs2=httpfs2)
    else:
        con = duckdb_connect(s3_rig, load_httpfs2_too=httpfs2)
    con.execute("SET threads = 1")
    if httpfs2:
        con.execute("SET httpfs2_parallel_read_enabled = true")
    return con


def url_of(kind, azure_rig, s3_rig, key):
    return azure_rig.url(key) if kind == "az" else s3_rig.url(key)


def traced(con, sql):
    """Runs sql with HTTP and FileSystem logging; returns (seconds, HEADs, GETs, response bytes of GETs, opens)."""
    con.execute("CALL truncate_duckdb_logs()")
    start = time.perf_counter()
    con.execute(sql).fetchall()
    seconds = time.perf_counter() - start
    http = con.execute("SELECT request.type, response.headers FROM duckdb_logs_parsed('HTTP')").fetchall()
    heads = sum(1 for kind, _ in http if kind == "HEAD")
    gets = [headers for kind, headers in http if kind == "GET"]
    nbytes = 0
    for headers in gets:
        lowered = {k.lower(): v for k, v in (headers or {}).items()}
        nbytes += int(lowered.get("content-length", 0))
    opens = con.execute("SELECT count(*) FROM duckdb_logs_parsed('FileSystem') WHERE op = 'OPEN'").fetchone()[0]
    return seconds, heads, len(gets), nbytes, opens


def probe_cache(azure_rig, s3_rig, httpfs2):
    """Writes the same parquet file to az:// and s3://, then re-runs the scan in one connection (DuckDB defaults)
    every ~2 s until the file is 14 s old, tracing requests per query."""
    for kind in ("az", "s3"):
        con = connect(kind, azure_rig, s3_rig, httpfs2)
        url = url_of(kind, azure_rig, s3_rig, "probe/cache.parquet")
        con.execute(f"COPY ({TABLE.format(rows=PARQUET_ROWS)}) TO '{url}' (FORMAT parquet)")
        written = time.monotonic()
        con.execute("CALL enable_logging(['HTTP', 'FileSystem'])")
        print(
            f"\n{kind}:// {'with httpfs2' if httpfs2 else 'native'}: scan of a {PARQUET_ROWS:,}-row parquet file,"
            f" same connection, external file cache on (default)"
        )
        print("| file age s | query s | HEAD | GET | GET MiB | opens |\n|---|---|---|---|---|---|")
        while True:
            age = time.monotonic() - written
            seconds, heads, gets, nbytes, opens = traced(con, SCAN.format(url=url))
            print(f"| {age:.1f} | {seconds:.3f} | {heads} | {gets} | {nbytes / 2**20:.2f} | {opens} |")
            if age > 14:
                break
            time.sleep(2)
        con.close()


def probe_settings(azure_rig, s3_rig, httpfs2):
    """The warm read (file seconds old) under DuckDB's cache settings; each row a new connection, two queries."""
    variants = [
        ("defaults", []),
        ("validate_external_file_cache = 'NO_VALIDATION'", ["SET validate_external_file_cache = 'NO_VALIDATION'"]),
        ("parquet_metadata_cache = true", ["SET parquet_metadata_cache = true"]),
        ("enable_external_file_cache = false", ["SET enable_external_file_cache = false"]),
    ]
    for kind in ("az", "s3"):
        print(f"\n{kind}:// {'with httpfs2' if httpfs2 else 'native'}: second (warm) query right after the write")
        print("| setting | warm query s | HEAD | GET | GET MiB | opens |\n|---|---|---|---|---|---|")
        for label, sqls in variants:
            con = connect(kind, azure_rig, s3_rig, httpfs2)
            for sql in sqls:
                con.execute(sql)
            url = url_of(kind, azure_rig, s3_rig, "probe/settings.parquet")
            con.execute(f"COPY ({TABLE.format(rows=PARQUET_ROWS)}) TO '{url}' (FORMAT parquet)")
            con.execute("CALL enable_logging(['HTTP', 'FileSystem'])")
            traced(con, SCAN.format(url=url))
            seconds, heads, gets, nbytes, opens = traced(con, SCAN.format(url=url))
            print(f"| {label} | {seconds:.3f} | {heads} | {gets} | {nbytes / 2**20:.2f} | {opens} |")
            con.close()


def probe_stale(azure_rig, s3_rig, httpfs2):
    """What a cache keyed on what the azure extension gives (size, 1-second Last-Modified, no ETag) would do: the
    blob is replaced by one of the same size within the same second. DuckDB's 10-second rule re-reads it; with
    validation off (or with a version tag derived from size + Last-Modified) the old bytes come back."""
    import hashlib
    import random

    key = "probe/stale.bin"
    url = azure_rig.url(key)
    for label, sqls in (("defaults", []), ("NO_VALIDATION", ["SET validate_external_file_cache = 'NO_VALIDATION'"])):
        con = connect("az", azure_rig, s3_rig, httpfs2)
        for sql in sqls:
            con.execute(sql)
        old, new = random.Random(1).randbytes(1 << 20), random.Random(2).randbytes(1 << 20)
        azure_rig.put_blob(key, old)
        con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchall()
        props_old = azure_rig.blob_properties(key)
        azure_rig.put_blob(key, new)
        props_new = azure_rig.blob_properties(key)
        got = con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchone()[0]
        verdict = (
            "NEW bytes"
            if got == hashlib.sha256(new).hexdigest()
            else "OLD bytes (stale)"
            if got == hashlib.sha256(old).hexdigest()
            else "neither"
        )
        print(
            f"{label}: Last-Modified {props_old.last_modified} -> {props_new.last_modified}, "
            f"ETag {props_old.etag} -> {props_new.etag}; re-read returned {verdict}"
        )
        con.close()


def probe_cpu(azure_rig, s3_rig, mib, repeats):
    """read_blob of one random blob, fresh process per run, lan profile, external file cache off: client CPU s per
    GiB for az:// (azure_read_buffer_size / azure_read_transfer_chunk_size / transport) and s3:// (curl, httplib),
    and both with httpfs2 at two chunk sizes."""
    from rig.azurite import apply_profile
    from rig.paths import HTTPFS2_EXTENSION, azure_extension, httpfs_extension

    data = os.urandom(mib << 20)
    azure_rig.put_blob("probe/cpu.bin", data)
    s3_rig.put_object("probe/cpu.bin", data)
    apply_profile(azure_rig, "lan")
    apply_profile(s3_rig, "lan")
    sql_az = f"SELECT octet_length(content) FROM read_blob('{azure_rig.url('probe/cpu.bin')}')"
    sql_s3 = f"SELECT octet_length(content) FROM read_blob('{s3_rig.url('probe/cpu.bin')}')"
    az = {
        "load": [str(azure_extension())],
        "secret_sql": azure_rig.secret_sql(),
        "watch": {"proxy_pid": azure_rig.toxiproxy.pid, "server_pid": azure_rig.azurite.pid},
    }
    s3 = {
        "load": [str(httpfs_extension())],
        "secret_sql": s3_rig.secret_sql(),
        "watch": {"proxy_pid": s3_rig.toxiproxy.pid, "server_pid": s3_rig.versitygw.pid},
    }
    variants = []
    for buffer_mib in (1, 8, 32, 128):
        variants.append(
            (
                f"az buffer {buffer_mib} MiB, chunk {buffer_mib} MiB",
                az,
                sql_az,
                {"azure_read_buffer_size": buffer_mib << 20, "azure_read_transfer_chunk_size": buffer_mib << 20},
            )
        )
    variants.append(("az chunk 8 MiB, concurrency 1", az, sql_az, {"azure_read_transfer_concurrency": 1}))
    variants.append(("az transport curl", az, sql_az, {"azure_transport_option_type": "curl"}))
    variants.append(("s3 curl (default)", s3, sql_s3, {}))
    variants.append(("s3 httplib", s3, sql_s3, {"httpfs_client_implementation": "httplib"}))
    if HTTPFS2_EXTENSION.exists():
        for chunk in (4, 16):
            settings = {"httpfs2_parallel_read_enabled": True, "httpfs2_parallel_read_chunk_size_bytes": chunk << 20}
            variants.append(
                (
                    f"az + httpfs2 chunk {chunk} MiB",
                    {**az, "load": az["load"] + [str(HTTPFS2_EXTENSION)]},
                    sql_az,
                    settings,
                )
            )
            variants.append(
                (
                    f"s3 + httpfs2 chunk {chunk} MiB",
                    {**s3, "load": s3["load"] + [str(HTTPFS2_EXTENSION)]},
                    sql_s3,
                    settings,
                )
            )
    print(f"\nread_blob of a {mib} MiB blob, lan profile, external file cache off, DuckDB threads 1, p50 of {repeats}")
    print("| client | seconds | MiB/s | client CPU s | CPU s/GiB | proxy CPU s | server CPU s |")
    print("|---|---|---|---|---|---|---|")
    for label, base, sql, settings in variants:
        runs = []
        for _ in range(repeats):
            spec = {
                **base,
                "threads": 1,
                "file_cache": False,
                "settings": settings,
                "steps": [{"name": "read", "sql": sql, "expect": [[mib << 20]]}],
            }
            runs.append(run_worker(spec, 600, label)["steps"][0])
        seconds = statistics.median(r["wall_s"] for r in runs)
        cpu = statistics.median(r["client_cpu_s"] for r in runs)
        print(
            f"| {label} | {seconds:.2f} | {mib / seconds:.0f} | {cpu:.2f} | {cpu / (mib / 1024):.2f} | "
            f"{statistics.median(r['proxy_cpu_s'] for r in runs):.2f} | "
            f"{statistics.median(r['server_cpu_s'] for r in runs):.2f} |",
            flush=True,
        )


def probe_server(azure_rig, mib, repeats):
    """Azurite's own CPU to serve one blob in ranges of a given size, 4 at a time, from its direct endpoint.

    Azurite (dist/src/blob/handlers/BlobHandler.js, downloadBlockBlobOrAppendBlob) computes the MD5 of every
    response of at most 4 MiB whose blob has no stored MD5 for it (every partial read), reading the bytes from its
    extent file twice, whether or not the client asked for one (real Azure does only on x-ms-range-get-content-md5).
    Ranges of 4 MiB and of 4 MiB + 4 KiB make the same number of requests, so they show that cost alone."""
    data = os.urandom(mib << 20)
    azure_rig.put_blob("server-probe", data)
    blob = azure_rig.container_client.get_blob_client("server-probe")

    def fetch(offset, size):
        return blob.download_blob(offset=offset, length=min(size, len(data) - offset), max_concurrency=1).readall()

    print(f"\nAzurite CPU to serve a {mib} MiB blob in range GETs, 4 in flight, direct (no proxy), p50 of {repeats}")
    print("| range size | requests | Azurite CPU s | ms per request | CPU s per GiB |")
    print("|---|---|---|---|---|")
    for size in (1 << 20, 4 << 20, (4 << 20) + 4096, 16 << 20):
        offsets = range(0, len(data), size)
        runs = []
        for _ in range(repeats):
            before = azure_rig.server_cpu_seconds()["azurite"]
            with ThreadPoolExecutor(4) as pool:
                got = b"".join(pool.map(fetch, offsets, [size] * len(offsets)))
            if got != data:
                raise RuntimeError(f"range size {size}: the bytes read differ from the blob")
            runs.append(azure_rig.server_cpu_seconds()["azurite"] - before)
        cpu = statistics.median(runs)
        label = f"{size >> 20} MiB" + (f" + {(size & ((1 << 20) - 1)) >> 10} KiB" if size & ((1 << 20) - 1) else "")
        print(f"| {label} | {len(offsets)} | {cpu:.2f} | {cpu * 1000 / len(offsets):.1f} | {cpu / (mib / 1024):.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("probe", choices=("cache", "settings", "stale", "cpu", "server"))
    parser.add_argument("--httpfs2", action="store_true")
    parser.add_argument("--mib", type=int, help="blob size (cpu: 256, server: 64)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from rig import S3Rig
    from rig.azurite import AzuriteRig, apply_profile

    with AzuriteRig(container="probe") as azure_rig, S3Rig(bucket="probe") as s3_rig:
        apply_profile(azure_rig, "lan")
        apply_profile(s3_rig, "lan")
        if args.probe == "cache":
            probe_cache(azure_rig, s3_rig, args.httpfs2)
        elif args.probe == "settings":
            probe_settings(azure_rig, s3_rig, args.httpfs2)
        elif args.probe == "stale":
            probe_stale(azure_rig, s3_rig, args.httpfs2)
        elif args.probe == "server":
            probe_server(azure_rig, args.mib or 64, args.repeats)
        else:
            probe_cpu(azure_rig, s3_rig, args.mib or 256, args.repeats)


if __name__ == "__main__":
    main()

"""Carries out a peers suite (bench/suites.py Peers; issues 31 and 32): at the `bigbox` profile (a 50 Gbit/s instance
scaled down 10x: 10 ms, 9 MiB/s per connection), DuckDB native vs httpfs2 beside two other S3 clients moving the same
bytes through the same proxy (bench/peers.py: the AWS CRT client, obstore), every run a fresh process, the clients
interleaved per repeat, and the connections each opened to the proxy (bench/connections.py).

reads   per shape of random objects (Peers.blobs, --blobs: `8x128` = 8 of 128 MiB): one read_blob query over all of
        them at each DuckDB thread count, then each peer downloading them (every byte checked); then the lineitem
        projection (bench/workloads.py) at each thread count
writes  writes of bench/write_bench.py WRITES (`csv-256m`: one object of 256 MiB; `csv-16x16m`: 16 files of 16 MiB)
        by DuckDB's COPY (bench/write_bench.py Writer, read back and checked), then each peer uploading the bytes of
        the same COPY done locally, read back and compared byte for byte
Each of the rig's connection modes (Peers.connections, --rig-connections: plain, keep-alive, tls; rig/s3rig.py
CONNECTIONS) gets a rig of its own, the whole suite run against each in turn.
"""

import contextlib
import hashlib
import os
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from bench import connections, data
from bench.answers import normalize_rows
from bench.child import run_peer
from bench.worker import connect
from bench.workload_bench import measure, prepare, rig_usage, settled
from bench.workloads import WORKLOADS, Workload
from bench.write_bench import SOURCE, WRITES, Writer, references, remove_prefix
from rig import S3Rig
from rig.s3rig import CONNECTIONS, PROFILES

MiB = 1 << 20
BLOB_SQL = (
    "SELECT parse_filename(filename), hash(content), octet_length(content) "
    "FROM read_blob('{base}/{prefix}/*.bin') ORDER BY 1"
)


def blob_shape(shape: str) -> tuple:
    """`16x16` -> (16 objects, 16 MiB each)."""
    count, mib = shape.split("x")
    return int(count), int(mib)


def blob_workload(shape: str) -> Workload:
    count, mib = blob_shape(shape)
    prefix = f"bigbox-{count}x{mib}"
    return Workload(f"read_blob {count}x{mib}MiB", prefix, (BLOB_SQL.replace("{prefix}", prefix),))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(8 * MiB):
            digest.update(chunk)
    return digest.hexdigest()


@contextlib.contextmanager
def observed(rig, row: dict):
    """Around a client's run: the rig's requests, bytes through the proxy, servers' CPU and the connections opened."""
    log_offset, rchar = settled(rig)
    cpu_before = rig.server_cpu_seconds()
    with connections.counted(rig, row):
        yield
    row.update(rig_usage(rig, log_offset, rchar, cpu_before))


def peer_row(run, rig, row: dict, peer: str, op: str, suite, objects: list, timeout: float):
    """One peer run (op: get | put) in a fresh process (bench/peers.py), observed; writes its row."""
    spec = {
        "client": peer,
        "op": op,
        "endpoint": rig.proxy_endpoint,
        "ca_file": str(rig.ca_file) if rig.tls else "",
        "bucket": rig.bucket,
        "access_key": rig.access_key,
        "secret_key": rig.secret_key,
        "target_gbps": suite.crt_target_gbps,
        "concurrency": suite.obstore_concurrency,
        "objects": objects,
    }
    config = f"crt {suite.crt_target_gbps:g} Gbit/s" if peer == "crt" else f"obstore x{suite.obstore_concurrency}"
    row = dict(row, engine=peer, config=config)
    with observed(rig, row):
        result = run_peer(spec, timeout, f"{peer} {spec['op']}")
    row.update(
        result,
        timestamp=datetime.now().isoformat(timespec="seconds"),
        client="-",
        duckdb_threads="",
        loadavg_1m=os.getloadavg()[0],
    )
    run.results.write(row)
    log(row)
    return row


def log(row: dict):
    print(
        f"[peers] {row['profile']} {row['rig_connections']} {row['workload']} {row['config']} "
        f"t={row['duckdb_threads']} #{row['repeat']}: "
        f"{row['wall_s']:.2f} s, cpu {row['client_cpu_s']:.2f} s, {row.get('get_requests', '?')} GETs "
        f"({row.get('requests', '?')} requests), "
        f"{row['connections']} connections (peak {row['connections_peak']})",
        file=sys.stderr,
        flush=True,
    )


def base_row(run, rig, profile_name: str, repeat: int) -> dict:
    profile = PROFILES[profile_name]
    return {
        "suite": run.name,
        "kind": "peer",
        "profile": profile_name,
        "rig_connections": rig.connections,
        "latency_ms": profile.latency_ms,
        "bandwidth_kbs": profile.bandwidth_kbs or "",
        "file_cache": False,
        "repeat": repeat,
    }


def make_blobs(rig, scratch: Path, shape: str) -> tuple:
    """The shape's random objects in the bucket and in scratch: (the workload, peer objects with sha256, DuckDB's
    answer from scratch)."""
    count, mib = blob_shape(shape)
    workload = blob_workload(shape)
    folder = scratch / workload.dataset
    folder.mkdir(parents=True, exist_ok=True)
    objects = []
    for n in range(count):
        path = folder / f"blob-{n}.bin"
        if not path.exists():
            with open(path, "wb") as out:
                for _ in range(mib):
                    out.write(os.urandom(MiB))
        key = f"{workload.dataset}/{path.name}"
        rig.s3.upload_file(str(path), rig.bucket, key)
        objects.append({"key": key, "size": path.stat().st_size, "sha256": _sha256(path)})
    sql = workload.queries[0].replace("{base}", str(scratch))
    return workload, objects, normalize_rows(connect({"load": []}).execute(sql).fetchall())


def reads(suite, run, rig, scratch: Path, profiles, threads, configs, timeout):
    blobs = [make_blobs(rig, scratch, shape) for shape in run.pick("blobs", suite.blobs)]
    projection = WORKLOADS["lineitem-projection"]
    answers = prepare(run, rig, [projection]) if suite.projection else {}

    def duckdb_runs(row: dict, w, expect: list, nbytes):
        for t, config in ((t, c) for t in threads for c in configs):
            point = dict(row, workload=w.name, client="curl", duckdb_threads=t, engine=config.engine)
            point.update(config=config.name, bytes=nbytes)
            measure(run, rig, point, w, config, expect, timeout, watch=connections.watch(rig))
            log(point)

    for profile_name in profiles:
        rig.set_profile(profile_name)
        for repeat in range(run.opts.repeats):
            row = base_row(run, rig, profile_name, repeat)
            for w, objects, expect in blobs:
                duckdb_runs(row, w, [expect], sum(o["size"] for o in objects))
                for peer in suite.peers:
                    peer_row(run, rig, dict(row, workload=w.name), peer, "get", suite, objects, timeout)
            if suite.projection:
                duckdb_runs(row, projection, answers[projection.name], "")


def _files(path: Path) -> list:
    return [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())


def peer_write(run, rig, row: dict, peer: str, suite, local: Path, timeout: float, key: str):
    """A peer uploads the files of the local COPY under key at the row's profile; every object is read back at lan
    and compared byte for byte, then removed."""
    files = _files(local)
    objects = [{"key": f"{key}{f.relative_to(local.parent)}", "path": str(f)} for f in files]
    rig.set_profile(row["profile"], uploads_too=True)
    try:
        peer_row(run, rig, row, peer, "put", suite, objects, timeout)
    finally:
        rig.set_profile("lan")
    for item in objects:
        body = rig.s3.get_object(Bucket=rig.bucket, Key=item["key"])["Body"].read()
        if hashlib.sha256(body).hexdigest() != _sha256(Path(item["path"])):
            raise RuntimeError(f"{peer}: {item['key']} read back differs from {item['path']}")
    if rig.s3.list_multipart_uploads(Bucket=rig.bucket).get("Uploads"):
        raise RuntimeError(f"{peer}: multipart uploads left open")
    remove_prefix(rig, key)


def writes(suite, run, rig, scratch: Path, profiles, threads, configs, timeout):
    names = run.pick("workloads", suite.writes, WRITES)
    data.ensure(["tpch-sf1"])
    source = SOURCE.format(source=data.folder("tpch-sf1") / "lineitem.parquet")
    writer = Writer(run, rig, source, threads[0], timeout, watch=lambda row: observed(rig, row))
    expected = references(writer.check_con, names, source, scratch)
    count = 0
    for profile_name in profiles:
        for repeat in range(run.opts.repeats):
            row = base_row(run, rig, profile_name, repeat)
            for name in names:
                local = scratch / "reference" / name / WRITES[name].leaf
                nbytes = sum(f.stat().st_size for f in _files(local))
                for config in configs:
                    count += 1
                    folder = scratch / f"run{count}"
                    folder.mkdir()
                    point = dict(row, workload=name, client="curl", duckdb_threads=threads[0], engine=config.engine)
                    point.update(config=config.name, bytes=nbytes)
                    writer.write_once(point, config, folder, expected[name])
                    log(point)
                for peer in suite.peers:
                    count += 1
                    peer_write(run, rig, dict(row, workload=name), peer, suite, local, timeout, f"writes/run{count}/")


def run(suite, run):
    profiles = run.pick("profiles", suite.profiles, PROFILES)
    threads = run.numbers("threads", suite.threads)
    configs = run.configs(suite.configs)
    timeout = run.timeout(suite)
    run.save_meta(
        configs={c.name: c.settings for c in configs},
        profiles={p: vars(PROFILES[p]) for p in profiles},
        peers={"crt_target_gbps": suite.crt_target_gbps, "obstore_concurrency": suite.obstore_concurrency},
    )
    scratch = Path(tempfile.mkdtemp(prefix="httpfs2-peers-"))
    start = time.monotonic()
    try:
        for mode in run.pick("rig_connections", suite.connections, CONNECTIONS):
            with S3Rig(access_log=True, connections=mode) as rig:
                work = writes if suite.writes else reads
                work(suite, run, rig, scratch, profiles, threads, configs, timeout)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"[peers] done in {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)

"""The peers' child: another S3 client moving the same bytes as DuckDB, in a fresh process like bench/worker.py, so
its CPU is its own. Two clients, each as its users would set it up for a big instance:
  crt      the AWS Common Runtime S3 client (awscrt): part size PART_SIZE, throughput target from the spec (the
           bench passes 50 Gbit/s scaled down 10x like the `bigbox` profile); it picks its connections from that
  obstore  Rust object_store (obstore): ranged GETs of PART_SIZE, at most `concurrency` at once; uploads with
           chunks of PART_SIZE and max_concurrency `concurrency` per object, every object at once

Usage: python -m bench.peers @<spec.json>   prints one JSON line (wall_s, client_cpu_s, client_sys_s, bytes,
vm_hwm_mib). The spec: client, op (get | put), endpoint (host:port), ca_file (the rig's CA: https, trusting it; absent:
plain http), bucket, access_key, secret_key, target_gbps, concurrency, and objects: for get [{key, size, sha256}]
(every byte is checked after the timer stops; a difference exits non-zero naming the object), for put [{key, path}]
(the runner reads them back).
"""

import asyncio
import hashlib
import json
import os
import resource
import sys
import time
import urllib.parse
from pathlib import Path

from bench.worker import peak_rss_mib

PART_SIZE = 8 << 20  # CRT's default part size; obstore's ranges and chunks alike
REGION = "us-east-1"


def crt_client(spec: dict):
    from awscrt.auth import AwsCredentialsProvider
    from awscrt.io import ClientBootstrap, ClientTlsContext, DefaultHostResolver, EventLoopGroup, TlsContextOptions
    from awscrt.s3 import S3Client, S3RequestTlsMode

    loop_group = EventLoopGroup()
    bootstrap = ClientBootstrap(loop_group, DefaultHostResolver(loop_group))
    tls = {"tls_mode": S3RequestTlsMode.DISABLED}
    if spec.get("ca_file"):
        options = TlsContextOptions()
        options.override_default_trust_store_from_path(ca_filepath=spec["ca_file"])
        connection = ClientTlsContext(options).new_connection_options()
        tls = {"tls_mode": S3RequestTlsMode.ENABLED, "tls_connection_options": connection}
    return S3Client(
        bootstrap=bootstrap,
        region=REGION,
        **tls,
        credential_provider=AwsCredentialsProvider.new_static(spec["access_key"], spec["secret_key"]),
        part_size=PART_SIZE,
        throughput_target_gbps=float(spec["target_gbps"]),
    )


def crt(spec: dict, buffers: dict):
    """Every object at once; the client splits each into ranged GETs or multipart parts itself."""
    from awscrt.http import HttpHeaders, HttpRequest
    from awscrt.s3 import S3RequestType

    client = crt_client(spec)
    requests = []
    for item in spec["objects"]:
        headers = [("Host", spec["endpoint"])]
        path = f"/{spec['bucket']}/{urllib.parse.quote(item['key'])}"  # the client signs the path as given
        if spec["op"] == "get":
            view = memoryview(buffers[item["key"]])

            def on_body(chunk, offset, view=view, **_):
                view[offset : offset + len(chunk)] = chunk

            request = HttpRequest("GET", path, HttpHeaders(headers))
            requests.append(client.make_request(type=S3RequestType.GET_OBJECT, request=request, on_body=on_body))
        else:
            headers.append(("Content-Length", str(Path(item["path"]).stat().st_size)))
            request = HttpRequest("PUT", path, HttpHeaders(headers))
            requests.append(
                client.make_request(type=S3RequestType.PUT_OBJECT, request=request, send_filepath=item["path"])
            )
    for request in requests:
        request.finished_future.result()


async def obstore_run(spec: dict, buffers: dict):
    import obstore
    from obstore.store import S3Store

    ca_file = spec.get("ca_file")
    store = S3Store(
        spec["bucket"],
        endpoint=f"{'https' if ca_file else 'http'}://{spec['endpoint']}",
        access_key_id=spec["access_key"],
        secret_access_key=spec["secret_key"],
        region=REGION,
        virtual_hosted_style_request=False,
        client_options={"root_certificate": Path(ca_file).read_text()} if ca_file else {"allow_http": True},
    )
    concurrency = int(spec["concurrency"])
    if spec["op"] == "put":
        await asyncio.gather(
            *(
                obstore.put_async(
                    store, item["key"], Path(item["path"]), chunk_size=PART_SIZE, max_concurrency=concurrency
                )
                for item in spec["objects"]
            )
        )
        return
    slots = asyncio.Semaphore(concurrency)

    async def fetch(key: str, start: int, end: int):
        async with slots:
            chunk = await obstore.get_range_async(store, key, start=start, end=end)
        buffers[key][start:end] = memoryview(chunk)

    await asyncio.gather(
        *(
            fetch(item["key"], start, min(start + PART_SIZE, item["size"]))
            for item in spec["objects"]
            for start in range(0, item["size"], PART_SIZE)
        )
    )


CLIENTS = {"crt": crt, "obstore": lambda spec, buffers: asyncio.run(obstore_run(spec, buffers))}


def run(spec: dict) -> dict:
    objects = spec["objects"]
    buffers = {o["key"]: bytearray(o["size"]) for o in objects} if spec["op"] == "get" else {}
    moved = sum(o["size"] if spec["op"] == "get" else Path(o["path"]).stat().st_size for o in objects)
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    CLIENTS[spec["client"]](spec, buffers)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    for item in objects if spec["op"] == "get" else ():
        if hashlib.sha256(buffers[item["key"]]).hexdigest() != item["sha256"]:
            sys.exit(f"peers: {spec['client']} read {item['key']} wrong (sha256 differs)")
    system = after.ru_stime - before.ru_stime
    return {
        "wall_s": wall,
        "client_cpu_s": after.ru_utime - before.ru_utime + system,
        "client_sys_s": system,
        "bytes": moved,
        "vm_hwm_mib": peak_rss_mib(),
    }


def main():
    spec = json.loads(Path(sys.argv[-1].removeprefix("@")).read_text())
    print(json.dumps(run(spec)), flush=True)
    # obstore's runtime aborts the interpreter's exit now and then (SIGABRT after the work is done): the result is
    # out, so leave without the interpreter's teardown.
    os._exit(0)


if __name__ == "__main__":
    main()

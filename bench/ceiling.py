"""The ceiling: the same object fetched by curl's C client as N truly parallel SigV4 ranged GETs.

boto3 in one Python process is limited by its own CPU well below what the rig serves (docs/benchmarks.md).
"""

import resource
import subprocess
import time


def _cpu_children() -> tuple:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime, usage.ru_stime


def curl_command(rig, endpoint: str, key: str, size: int, streams: int) -> list:
    piece = -(-size // streams)
    command = ["curl", "-s", "--parallel", "--parallel-immediate", "--parallel-max", str(streams)]
    for n, offset in enumerate(range(0, size, piece)):
        if n:
            command.append("--next")  # per-transfer options start afresh for each range
        # versitygw answers 400 without the payload header; -w prints each transfer's byte count.
        command += [
            "-f",
            "--aws-sigv4",
            "aws:amz:us-east-1:s3",
            "-u",
            f"{rig.access_key}:{rig.secret_key}",
            "-H",
            "x-amz-content-sha256: UNSIGNED-PAYLOAD",
            "-w",
            "%{size_download}\n",
            "-r",
            f"{offset}-{min(offset + piece, size) - 1}",
            "-o",
            "/dev/null",
            f"http://{endpoint}/{rig.bucket}/{key}",
        ]
    return command


def measure(rig, endpoint: str, key: str, size: int, streams: int, timeout: float) -> dict:
    """Wall and curl CPU seconds for the whole object; raises unless every byte arrived."""
    command = curl_command(rig, endpoint, key, size, streams)
    (cpu, system), start = _cpu_children(), time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    received = sum(int(n) for n in done.stdout.split())
    if done.returncode != 0 or received != size:
        raise RuntimeError(f"ceiling: curl exit {done.returncode}, {received} of {size} bytes: {done.stderr[-500:]}")
    cpu_after, system_after = _cpu_children()
    return {"wall_s": wall, "client_cpu_s": cpu_after - cpu, "client_sys_s": system_after - system}

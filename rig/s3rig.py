"""versitygw (S3 server, POSIX backend in a temp dir) behind toxiproxy, both on free 127.0.0.1 ports."""

import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import boto3
from botocore.config import Config

from rig.paths import HTTPFS2_EXTENSION, TOOLS_BIN, httpfs_extension
from rig.tls import make_certificate

LOOPBACK = "127.0.0.1"
PROXY_NAME = "s3"
# How clients connect to the rig (HTTPFS2_RIG_CONNECTIONS, else plain): `plain` is HTTP with every connection closed
# after its answer (versitygw's default); `keep-alive` keeps connections as S3 does; `tls` keeps them and speaks TLS
# with a certificate made at start (tls.py), as S3 does: a client then pays each new connection's handshakes.
CONNECTIONS = ("plain", "keep-alive", "tls")
# With TLS, boto3 checksums only where S3 requires them: over https it otherwise sends checksums as aws-chunked
# trailers, and versitygw v1.8.0 then answers some CompleteMultipartUpload with 400 "error when parsing the HTTP
# request" (seen in 1 of 12 uploads of 16 MiB; in none of 30 with this).
CHECKSUMS = {"request_checksum_calculation": "when_required", "response_checksum_validation": "when_required"}


@dataclass(frozen=True)
class NetworkProfile:
    """What toxiproxy adds to every response: first-byte latency, and a cap per connection (as S3 caps each GET
    stream) in toxiproxy's KB/s (bytes per millisecond, so 1000 bytes), or none."""

    latency_ms: int
    bandwidth_kbs: int | None = None


PROFILES = {
    # 0 ms latency toxic: the proxy's fast path (faster and fairer than no toxic, NOTES).
    "lan": NetworkProfile(0),
    # Object storage in the client's region: 25 ms to the first byte, 92160 KB/s = 87.9 MiB/s per GET stream.
    "region": NetworkProfile(25, 92160),
    # A bucket on another continent: 80 ms, 40960 KB/s = 39 MiB/s per stream (bench/README.md says why).
    "far": NetworkProfile(80, 40960),
    # A 50 Gbit/s instance scaled down 10x to fit the rig: 10 ms to the first byte, 9437 KB/s = 9 MiB/s per
    # connection (S3's ~90 MiB/s per stream / 10), so only many streams at once fill the instance's 5 Gbit/s.
    "bigbox": NetworkProfile(10, 9437),
}


def free_ports(count: int) -> list[int]:
    """`count` ports free on the loopback: bound all at once, so that no two are the same (ports picked one after
    another may repeat)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind((LOOPBACK, 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, timeout: float = 20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        with socket.socket() as sock:
            sock.settimeout(0.2)
            if sock.connect_ex((LOOPBACK, port)) == 0:
                return
        time.sleep(0.05)
    tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise RuntimeError(f"{log.stem} did not start on {LOOPBACK}:{port}:\n{tail}")


def _die_with_parent():
    """Runs in the child before exec: the kernel sends SIGTERM when the thread that started it dies, so a
    crashed or killed test run never leaves a server behind."""
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def read_bytes(pid: int) -> int:
    """Bytes a process has read with read()-like calls (`rchar`); for toxiproxy, what it got from versitygw and
    from the clients' requests, i.e. what crossed the simulated network (Go reads sockets with read())."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError(f"no rchar in /proc/{pid}/io")


def count_requests(log: Path, offset: int) -> dict:
    """S3 operations in versitygw's access log after byte `offset`: {'GetObject': n, 'HeadObject': n, ...}."""
    counts = {}
    with open(log, "rb") as handle:
        handle.seek(offset)
        for line in handle.read().decode(errors="replace").splitlines():
            # The operation's token is s3_ and a CamelCase name (s3_GetObject); a key may start with s3_ too.
            op = next((t[3:] for t in line.split(" ") if t.startswith("s3_") and t[3:4].isupper()), None)
            if op:
                counts[op] = counts.get(op, 0) + 1
    return counts


class ToxiproxyControl:
    """The toxiproxy HTTP API for one proxy; a rig sets `api_port` (toxiproxy's API) and `proxy_name`."""

    api_port: int
    proxy_name: str

    def _api(self, method: str, path: str, body=None):
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            f"http://{LOOPBACK}:{self.api_port}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            # toxiproxy answers the removal of a toxic once the bytes that toxic holds went through it: a bandwidth
            # toxic of a few KB/s holding a chunk takes seconds, more on a loaded machine (seen: over 10 s).
            with urllib.request.urlopen(request, timeout=60) as response:
                text = response.read()
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"toxiproxy {method} {path}: {error.code} {error.read()!r}") from error
        return json.loads(text) if text else None

    def add_toxic(
        self, name: str, toxic_type: str, attributes: dict, stream: str = "downstream", toxicity: float = 1.0
    ):
        self._api(
            "POST",
            f"/proxies/{self.proxy_name}/toxics",
            {"name": name, "type": toxic_type, "stream": stream, "toxicity": toxicity, "attributes": attributes},
        )

    def remove_toxics(self):
        for toxic in self._api("GET", f"/proxies/{self.proxy_name}/toxics") or []:
            self._api("DELETE", f"/proxies/{self.proxy_name}/toxics/{toxic['name']}")

    def set_latency(self, ms: int):
        """Replaces all toxics by one downstream latency toxic; 0 ms still installs it (the fair 0 ms baseline)."""
        self.remove_toxics()
        self.add_toxic("latency", "latency", {"latency": int(ms), "jitter": 0})

    def proxy_enabled(self, enabled: bool):
        self._api("POST", f"/proxies/{self.proxy_name}", {"enabled": enabled})


class ServerRig(ToxiproxyControl):
    """Servers run as child processes in a scratch folder. Use as a context manager: _start() (the subclass's)
    spawns them; everything is stopped and the folder removed on exit, also when starting fails."""

    workdir_prefix = "httpfs2-rig-"
    start_timeout = 20.0  # seconds for a server to listen on its port
    # Another process may take a free port before the server binds it: the start is tried again on new ports.
    start_attempts = 3

    def __init__(self):
        self._processes: list[subprocess.Popen] = []
        self._workdir: Path | None = None

    def __enter__(self):
        for attempt in range(1, self.start_attempts + 1):
            try:
                self._workdir = Path(tempfile.mkdtemp(prefix=self.workdir_prefix))
                self._start()
                return self
            except RuntimeError:
                # A server that did not start, or a proxy API that is not toxiproxy's: its port was taken.
                self.close()
                if attempt == self.start_attempts:
                    raise
            except BaseException:
                self.close()
                raise

    def __exit__(self, *exc):
        self.close()

    def _start(self):
        raise NotImplementedError

    def _spawn(self, name: str, args: list, port: int) -> subprocess.Popen:
        log = self._workdir / f"{name}.log"
        process = subprocess.Popen(
            args,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=self._workdir,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            # The servers are not DuckDB: a sanitizer that scripts/test.sh preloads into the tests stays out of them.
            env={key: value for key, value in os.environ.items() if key not in ("LD_PRELOAD", "ASAN_OPTIONS")},
        )
        self._processes.append(process)
        _wait_for_port(port, process, log, timeout=self.start_timeout)
        return process

    @property
    def proxy_endpoint(self) -> str:
        """Where DuckDB connects: the proxy, with the profile's toxics."""
        return f"{LOOPBACK}:{self.proxy_port}"

    def _start_proxy(self, upstream_port: int):
        """toxiproxy on api_port, proxying proxy_port to the server's upstream_port (the proxy named proxy_name)."""
        self.toxiproxy = self._spawn(
            "toxiproxy",
            [str(TOOLS_BIN / "toxiproxy-server"), "-host", LOOPBACK, "-port", str(self.api_port)],
            self.api_port,
        )
        self._api(
            "POST",
            "/proxies",
            {
                "name": self.proxy_name,
                "listen": f"{LOOPBACK}:{self.proxy_port}",
                "upstream": f"{LOOPBACK}:{upstream_port}",
                "enabled": True,
            },
        )

    def close(self):
        for process in self._processes:
            if process.poll() is None:
                process.terminate()
        for process in self._processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._processes.clear()
        if self._workdir is not None:
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None


class S3Rig(ServerRig):
    """Use as a context manager; everything it starts is stopped and removed on exit, also on error."""

    proxy_name = PROXY_NAME

    def __init__(
        self,
        bucket: str = "bench",
        access_key: str = "httpfs2-test-key",
        secret_key: str = "httpfs2-test-secret",
        access_log: bool = False,
        connections: str | None = None,
    ):
        """access_log: versitygw writes one line per S3 request to access_log_path (see count_requests);
        connections: one of CONNECTIONS (None: HTTPFS2_RIG_CONNECTIONS, else plain)."""
        self.bucket = bucket
        self.access_log = access_log
        self.connections = connections or os.environ.get("HTTPFS2_RIG_CONNECTIONS") or "plain"
        if self.connections not in CONNECTIONS:
            raise ValueError(f"rig connections {self.connections!r}: one of {', '.join(CONNECTIONS)}")
        self.access_key = access_key
        self.secret_key = secret_key
        super().__init__()

    def _start(self):
        data = self._workdir / "data"
        data.mkdir()
        self.s3_port, self.api_port, self.proxy_port = free_ports(3)
        log_args = ["--access-log", str(self.access_log_path)] if self.access_log else []
        connection_args = [] if self.connections == "plain" else ["--keep-alive"]
        if self.tls:
            self.ca_file, cert, key = make_certificate(self._workdir / "tls", LOOPBACK)
            connection_args += ["--cert", str(cert), "--key", str(key)]
        self.versitygw = self._spawn(
            "versitygw",
            [
                str(TOOLS_BIN / "versitygw"),
                "--port",
                f"{LOOPBACK}:{self.s3_port}",
                *log_args,
                *connection_args,
                "--access",
                self.access_key,
                "--secret",
                self.secret_key,
                "posix",
                str(data),
            ],
            self.s3_port,
        )
        self._start_proxy(self.s3_port)
        self.s3 = boto3.client(
            "s3",
            endpoint_url=f"{self.scheme}://{self.direct_endpoint}",
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name="us-east-1",
            verify=str(self.ca_file) if self.tls else None,
            config=Config(
                s3={"addressing_style": "path"}, retries={"max_attempts": 2}, **(CHECKSUMS if self.tls else {})
            ),
        )
        self.s3.create_bucket(Bucket=self.bucket)

    # --- endpoints and objects ---

    @property
    def tls(self) -> bool:
        return self.connections == "tls"

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    @property
    def direct_endpoint(self) -> str:
        return f"{LOOPBACK}:{self.s3_port}"

    def url(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def put_object(self, key: str, data: bytes):
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=data)

    @property
    def bucket_folder(self) -> Path:
        """Where versitygw keeps the bucket's objects, as plain files under their keys."""
        return self._workdir / "data" / self.bucket

    @property
    def access_log_path(self) -> Path:
        return self._workdir / "access.log"

    def server_cpu_seconds(self) -> dict:
        """CPU seconds (user + system) used so far by versitygw and toxiproxy."""
        return {"versitygw": _cpu_seconds(self.versitygw.pid), "toxiproxy": _cpu_seconds(self.toxiproxy.pid)}

    def set_profile(self, name: str, uploads_too: bool = False) -> NetworkProfile:
        """Replaces all toxics by those of a network profile (PROFILES): a downstream latency toxic, then a
        downstream bandwidth toxic when the profile caps the rate (each connection separately), and with
        `uploads_too` the same cap upstream (an upload pays the per-connection rate too)."""
        profile = PROFILES[name]
        self.set_latency(profile.latency_ms)
        if profile.bandwidth_kbs is not None:
            self.add_toxic("bandwidth", "bandwidth", {"rate": profile.bandwidth_kbs})
            if uploads_too:
                self.add_toxic("bandwidth-up", "bandwidth", {"rate": profile.bandwidth_kbs}, stream="upstream")
        return profile

    # --- DuckDB ---

    def secret_sql(self, endpoint: str | None = None, name: str = "rig") -> str:
        """The S3 secret; with TLS, then the SETs that make httpfs's clients (curl and httplib) trust the rig's CA,
        GLOBAL: an attached database opens its file without the session's settings."""
        secret = (
            f"CREATE OR REPLACE SECRET {name} (TYPE s3, KEY_ID '{self.access_key}', SECRET '{self.secret_key}', "
            f"REGION 'us-east-1', ENDPOINT '{endpoint or self.proxy_endpoint}', URL_STYLE 'path', "
            f"USE_SSL {str(self.tls).lower()})"
        )
        if not self.tls:
            return secret
        return (
            f"{secret}; SET GLOBAL ca_cert_file = '{self.ca_file}'; SET GLOBAL enable_server_cert_verification = true"
        )


def load_httpfs(con):
    con.execute(f"LOAD '{httpfs_extension()}'")


def load_httpfs2(con):
    if not HTTPFS2_EXTENSION.exists():
        raise RuntimeError(f"{HTTPFS2_EXTENSION} not built: run scripts/build.sh")
    con.execute(f"LOAD '{HTTPFS2_EXTENSION}'")


def duckdb_connect(
    rig: S3Rig | None = None,
    *,
    load_httpfs2_too: bool = True,
    order: str = "httpfs_first",
    endpoint: str = "proxy",
    config: dict | None = None,
):
    """A connection with httpfs (and httpfs2) loaded from their files and, given a rig, its S3 secret.

    order: 'httpfs_first', 'httpfs2_first', or 'httpfs2_only' (the test loads httpfs later itself)."""
    import duckdb

    settings = {
        "allow_unsigned_extensions": "true",
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    }
    settings.update(config or {})
    con = duckdb.connect(config=settings)
    if order == "httpfs_first":
        load_httpfs(con)
    if load_httpfs2_too:
        load_httpfs2(con)
    if order == "httpfs2_first":
        load_httpfs(con)
    if rig is not None and order != "httpfs2_only":
        con.execute(rig.secret_sql(rig.proxy_endpoint if endpoint == "proxy" else rig.direct_endpoint))
    return con

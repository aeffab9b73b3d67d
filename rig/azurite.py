"""Azurite (the Azure Blob Storage emulator, blob service only) behind its own toxiproxy, all on 127.0.0.1.

Use as a context manager, like S3Rig:

    with AzuriteRig(container="test", profile="region") as rig:
        rig.put_blob("dir/a.bin", data)
        con = azure_connect(rig)                  # azure extension (+ httpfs2), the rig's secret
        con.execute(f"SELECT ... FROM read_parquet('{rig.url('dir/*.parquet')}')")

Azurite is the npm package `azurite` pinned in scripts/setup_env.sh and installed into .tools/azurite/; toxiproxy
is .tools/bin/toxiproxy-server. The account is Azurite's built-in development account (its name and key are
public constants of the emulator, not secrets). Everything started here is stopped and its folder removed on
exit, also on error; the processes also die with the Python thread that started them (PR_SET_PDEATHSIG).
"""

from pathlib import Path

from rig.paths import HTTPFS2_EXTENSION, REPO_ROOT, TOOLS_BIN, azure_extension, httpfs_extension
from rig.s3rig import LOOPBACK, ServerRig, _cpu_seconds, free_ports

AZURITE_VERSION = "3.37.0"  # keep equal to AZURITE_VERSION in scripts/setup_env.sh
AZURITE_DIR = REPO_ROOT / ".tools" / "azurite"
AZURITE_BLOB = AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"
ACCOUNT = "devstoreaccount1"
# Azurite's well-known development account key (documented by the emulator; it only works against Azurite).
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
PROXY_NAME = "azure"

# Network profiles, the same numbers as rig.s3rig.PROFILES: (toxic name, type, attributes), all downstream.
#   lan:    a 0 ms latency toxic (through the proxy, the fair 0 ms baseline)
#   region: 25 ms to the first byte of each response and 92160 KB/s per connection (as object storage caps a GET)
#   far:    80 ms and 40960 KB/s per connection
PROFILES = {
    "lan": [("latency", "latency", {"latency": 0, "jitter": 0})],
    "region": [("latency", "latency", {"latency": 25, "jitter": 0}), ("bandwidth", "bandwidth", {"rate": 92160})],
    "far": [("latency", "latency", {"latency": 80, "jitter": 0}), ("bandwidth", "bandwidth", {"rate": 40960})],
}


def azurite_installed() -> bool:
    stamp = AZURITE_DIR / ".version"
    return AZURITE_BLOB.exists() and stamp.exists() and stamp.read_text().strip() == AZURITE_VERSION


def read_sas_token() -> str:
    """An account SAS token of the rig's account that reads and lists for an hour (azure.storage.blob)."""
    from datetime import UTC, datetime, timedelta

    from azure.storage.blob import AccountSasPermissions, ResourceTypes, generate_account_sas

    return generate_account_sas(
        account_name=ACCOUNT,
        account_key=ACCOUNT_KEY,
        resource_types=ResourceTypes(service=True, container=True, object=True),
        permission=AccountSasPermissions(read=True, list=True),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )


def require_azurite():
    """Raises with the fix when the pinned Azurite or toxiproxy is not installed."""
    if not azurite_installed():
        raise RuntimeError(
            f"Azurite {AZURITE_VERSION} is not installed in {AZURITE_DIR}: "
            f"run `bash scripts/setup_env.sh` (needs node and npm)"
        )
    if not (TOOLS_BIN / "toxiproxy-server").exists():
        raise RuntimeError(f"{TOOLS_BIN / 'toxiproxy-server'} missing: run `bash scripts/setup_env.sh`")


class AzuriteRig(ServerRig):
    """azurite-blob on a free port behind toxiproxy; one container created on start.

    access_log=True keeps Azurite's one-line-per-request access log (request_log() returns it); off by default
    because writing it costs Azurite CPU on a 2-core machine."""

    proxy_name = PROXY_NAME
    workdir_prefix = "httpfs2-azurite-"
    start_timeout = 60.0

    def __init__(
        self, container: str = "test", profile: str | None = None, access_log: bool = False, extra_args: tuple = ()
    ):
        self.container = container
        self.extra_args = list(extra_args)  # more azurite-blob options, e.g. ("--blobKeepAliveTimeout", "60")
        self.profile = profile
        self.access_log = access_log
        super().__init__()

    def _start(self):
        require_azurite()
        data = self._workdir / "data"
        data.mkdir()
        self.blob_port, self.api_port, self.proxy_port = free_ports(3)
        args = [
            str(AZURITE_BLOB),
            "--blobHost",
            LOOPBACK,
            "--blobPort",
            str(self.blob_port),
            "--disableTelemetry",
            "--skipApiVersionCheck",
            "--loose",
            "--location",
            str(data),
        ]
        if not self.access_log:
            args.append("--silent")
        args += self.extra_args
        self.azurite = self._spawn("azurite", args, self.blob_port)
        self._start_proxy(self.blob_port)
        from azure.storage.blob import BlobServiceClient

        # The Python client talks to Azurite directly: uploads done by the rig are not part of any measurement.
        self.service = BlobServiceClient.from_connection_string(self.connection_string("direct"))
        self.container_client = self.service.create_container(self.container)
        if self.profile:
            self.set_profile(self.profile)

    # --- endpoints, credentials, blobs ---

    @property
    def direct_endpoint(self) -> str:
        return f"{LOOPBACK}:{self.blob_port}"

    def connection_string(self, endpoint: str = "proxy") -> str:
        host = self.proxy_endpoint if endpoint == "proxy" else self.direct_endpoint
        return (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint=http://{host}/{ACCOUNT};"
        )

    def secret_sql(self, endpoint: str = "proxy", name: str = "azrig") -> str:
        return f"CREATE OR REPLACE SECRET {name} (TYPE azure, CONNECTION_STRING '{self.connection_string(endpoint)}')"

    def url(self, key: str) -> str:
        return f"az://{self.container}/{key}"

    def put_blob(self, key: str, data: bytes):
        self.container_client.upload_blob(key, data, overwrite=True)

    def get_blob(self, key: str) -> bytes:
        return self.container_client.download_blob(key).readall()

    def delete_blob(self, key: str):
        self.container_client.delete_blob(key)

    def blob_properties(self, key: str):
        """azure.storage.blob BlobProperties: etag, last_modified, size, ..."""
        return self.container_client.get_blob_client(key).get_blob_properties()

    def list_blobs(self, prefix: str = "") -> list[str]:
        return [blob.name for blob in self.container_client.list_blobs(name_starts_with=prefix)]

    def request_log(self) -> list[str]:
        """Azurite's access log lines so far (only with access_log=True)."""
        if not self.access_log:
            raise RuntimeError("AzuriteRig(access_log=True) is needed for request_log()")
        log = self._workdir / "azurite.log"
        return [line for line in log.read_text(errors="replace").splitlines() if '"' in line and " HTTP/1" in line]

    def server_cpu_seconds(self) -> dict:
        """CPU seconds (user + system) used so far by Azurite and toxiproxy."""
        return {"azurite": _cpu_seconds(self.azurite.pid), "toxiproxy": _cpu_seconds(self.toxiproxy.pid)}

    def proxy_bytes_read(self) -> int:
        """Bytes toxiproxy has read from its sockets so far (both directions): compare before and after a query
        for the bytes it moved. Go reads sockets with read(), so rchar counts them."""
        for line in Path(f"/proc/{self.toxiproxy.pid}/io").read_text().splitlines():
            if line.startswith("rchar:"):
                return int(line.split()[1])
        raise RuntimeError("no rchar in /proc/PID/io")

    def set_profile(self, profile: str, uploads_too: bool = False):
        apply_profile(self, profile, uploads_too)
        self.profile = profile


def apply_profile(rig, profile: str, uploads_too: bool = False):
    """Installs a network profile on an AzuriteRig or an S3Rig (the S3 rig's own set_profile when it has one); with
    `uploads_too` its bandwidth cap applies upstream as well."""
    if profile not in PROFILES:
        raise ValueError(f"unknown network profile {profile!r}: one of {sorted(PROFILES)}")
    if not isinstance(rig, AzuriteRig) and hasattr(rig, "set_profile"):
        rig.set_profile(profile, uploads_too)
        return
    rig.remove_toxics()
    for name, toxic_type, attributes in PROFILES[profile]:
        rig.add_toxic(name, toxic_type, attributes)
        if uploads_too and toxic_type == "bandwidth":
            rig.add_toxic(f"{name}-up", toxic_type, attributes, stream="upstream")


def azure_connect(
    rig: AzuriteRig | None = None,
    *,
    httpfs2: bool = True,
    httpfs: bool = False,
    config: dict | None = None,
    endpoint: str = "proxy",
):
    """A DuckDB connection with the azure extension (1.5.5 wheel) and, with httpfs2=True, httpfs2 (loaded after
    azure, so it wraps the Azure filesystems at load); given a rig, its secret. Autoloading is off: nothing is
    downloaded."""
    import duckdb

    settings = {
        "allow_unsigned_extensions": "true",
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
    }
    settings.update(config or {})
    con = duckdb.connect(config=settings)
    if httpfs:
        con.execute(f"LOAD '{httpfs_extension()}'")
    con.execute(f"LOAD '{azure_extension()}'")
    if httpfs2:
        if not HTTPFS2_EXTENSION.exists():
            raise RuntimeError(f"{HTTPFS2_EXTENSION} not built: run scripts/build.sh")
        con.execute(f"LOAD '{HTTPFS2_EXTENSION}'")
    if rig is not None:
        con.execute(rig.secret_sql(endpoint))
    return con

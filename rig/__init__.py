"""The local S3 rig shared by tests and benchmarks: versitygw behind toxiproxy, all on 127.0.0.1."""

from rig.http_server import serve_http
from rig.paths import HTTPFS2_EXTENSION, REPO_ROOT, TOOLS_BIN, azure_extension, ducklake_extension, httpfs_extension
from rig.s3rig import PROFILES, S3Rig, duckdb_connect, load_httpfs, load_httpfs2

__all__ = [
    "HTTPFS2_EXTENSION",
    "httpfs_extension",
    "azure_extension",
    "ducklake_extension",
    "REPO_ROOT",
    "TOOLS_BIN",
    "S3Rig",
    "PROFILES",
    "duckdb_connect",
    "load_httpfs",
    "load_httpfs2",
    "serve_http",
]

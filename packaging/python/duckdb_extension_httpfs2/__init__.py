"""httpfs2, the DuckDB extension that makes remote reads fast: its binary, and `load(con)`, which loads it next to
httpfs into a connection. httpfs2 is not signed by DuckDB, so the connection has to allow unsigned extensions:

    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    duckdb_extension_httpfs2.load(con)
"""

import importlib.util
from pathlib import Path

import duckdb

__all__ = ["UnsignedExtensionsDisabledError", "extension_path", "load"]


class UnsignedExtensionsDisabledError(duckdb.IOException):
    """The connection loads only extensions signed by DuckDB, and httpfs2 is not. An IOException, as DuckDB's own
    error is, so code that catches that keeps catching this."""


def extension_path() -> Path:
    """The httpfs2 binary this package carries, for `LOAD '<path>'`."""
    return _binary(Path(__file__).parent, "httpfs2")


def load(con: duckdb.DuckDBPyConnection) -> None:
    """Loads httpfs, then httpfs2, into `con`. httpfs comes from the duckdb-extension-httpfs package when that is
    installed, else from `LOAD httpfs` (which DuckDB installs first when `autoinstall_known_extensions` is on, the
    default). Loading an extension the connection has loaded already does nothing.

    Raises UnsignedExtensionsDisabledError, chained from DuckDB's error, when `con` was opened without
    `allow_unsigned_extensions`."""
    con.execute(f"LOAD {_httpfs()}")
    try:
        con.execute(f"LOAD {_sql_string(extension_path())}")
    except duckdb.IOException as error:
        if "signature" not in str(error):
            raise
        raise UnsignedExtensionsDisabledError(
            "httpfs2 is not signed by DuckDB, and this connection loads only signed extensions: open it with "
            "duckdb.connect(config={'allow_unsigned_extensions': 'true'}) to load httpfs2"
        ) from error


def _httpfs() -> str:
    """What `LOAD` takes for httpfs: the binary of the duckdb-extension-httpfs package when installed, else the name."""
    spec = importlib.util.find_spec("duckdb_extension_httpfs")
    if spec is None or not spec.submodule_search_locations:
        return "httpfs"
    return _sql_string(_binary(Path(next(iter(spec.submodule_search_locations))), "httpfs"))


def _binary(package: Path, name: str) -> Path:
    """Where a duckdb-extension-* package keeps the binary of extension `name` for the DuckDB it runs with."""
    return package / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"


def _sql_string(path: Path) -> str:
    """`path` as an SQL string literal."""
    return "'" + str(path).replace("'", "''") + "'"

"""Runs one of httpfs's own sqllogictest files (test/sql/**.test of duckdb-httpfs) in Python DuckDB, with httpfs
loaded as the integration tests load it and, with --httpfs2, httpfs2 too; suite.py runs each file in its own
process this way: httpfs reads the AWS_* variables of the process's environment, and a crash ends one file only.

The environment variables the file may `require-env` are those given with --env (nothing else of the process's
environment), so a file meant for a server we do not run skips."""

import argparse
import datetime
import decimal
import hashlib
import json
import math
import os
import re
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)]

from sqllogic import LOOPS, Record, loop_values, parse  # noqa: E402

from rig.paths import tpch_extension  # noqa: E402
from rig.s3rig import load_httpfs, load_httpfs2  # noqa: E402

# Extensions a file may `require`: httpfs (loaded by us), those built into Python DuckDB, and those of the venv's
# wheels, loaded when required. Any other skips the file. Requirements on how DuckDB's own runner was built (vector
# verification, platform) hold here.
AVAILABLE = {"httpfs", "parquet", "json", "core_functions"}
WHEELS = {"tpch": tpch_extension}
RUNNER_CONDITIONS = {
    "no_vector_verification",
    "notwindows",
    "skip_reload",
    "noforcestorage",
    "no_extension_autoloading",
}


@dataclass
class Outcome:
    file: str
    status: str  # pass, fail, skip
    reason: str = ""  # why it skipped, or the first mismatch
    line: int = 0
    logged_requests: dict | None = None  # with --log-requests: DuckDB's HTTP log at the end, requests by method


class Skip(Exception):
    pass


class Mismatch(Exception):
    def __init__(self, line: int, message: str):
        super().__init__(message)
        self.line = line


def render(value) -> str:
    """A value as DuckDB's runner prints it."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value else "(empty)"
    if isinstance(value, bytes):
        return "".join(chr(b) if 32 <= b < 127 and b != 92 else f"\\x{b:02X}" for b in value)
    if isinstance(value, float):
        return repr(value) if not value.is_integer() or math.isinf(value) else str(int(value))
    if isinstance(value, decimal.Decimal | int):
        return str(value)
    if isinstance(value, datetime.datetime | datetime.date | datetime.time):
        return str(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_nested(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"'{k}': {_nested(v)}" for k, v in value.items()) + "}"
    return str(value)


def _nested(value) -> str:
    return "'" + value + "'" if isinstance(value, str) else render(value)


def values_match(got: str, expected: str) -> bool:
    """Exact text, a <REGEX>:/<!REGEX>: pattern over the whole value (`.` crossing lines), or numbers within 1e-6."""
    for prefix, wanted in (("<REGEX>:", True), ("<!REGEX>:", False)):
        if expected.startswith(prefix):
            return bool(re.fullmatch(expected[len(prefix) :], got, re.DOTALL)) == wanted
    if got == expected:
        return True
    if got in ("true", "false"):  # DuckDB's runner casts the expected text to the column's type: 1 is true
        return expected in (("1", "t") if got == "true" else ("0", "f"))
    try:
        a, b = float(got), float(expected)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _expected_rows(lines: list[str], columns: int, rows: int) -> list[list[str]]:
    """Expected values row by row: tab-separated rows, or one value per line (DuckDB accepts both)."""
    split = [line.split("\t") for line in lines]
    if all(len(row) == columns for row in split):
        return split
    if columns > 1 and len(lines) == rows * columns:
        return [lines[i : i + columns] for i in range(0, len(lines), columns)]
    return split


def compare(record: Record, rows: list[tuple]) -> None:
    columns = len(record.args[0]) if record.args else (len(rows[0]) if rows else 1)
    got = [[render(v) for v in row] for row in rows]
    sort = record.args[1] if len(record.args) > 1 else "nosort"
    if sort == "rowsort":
        got.sort()
    elif sort == "valuesort":
        got = [[v] for v in sorted(v for row in got for v in row)]
    hashed = re.fullmatch(r"(\d+) values hashing to ([0-9a-f]{32})", record.expected[0]) if record.expected else None
    if hashed:
        text = "".join(v + "\n" for row in got for v in row)
        digest = hashlib.md5(text.encode()).hexdigest()
        if digest != hashed.group(2):
            raise Mismatch(record.line, f"query:\n{record.sql}\nexpected hash {hashed.group(2)}, got {digest}")
        return
    expected = _expected_rows(record.expected, columns, len(got))
    if sort == "rowsort":
        expected.sort()
    elif sort == "valuesort":
        expected = [[v] for v in sorted(v for row in expected for v in row)]
    ok = len(expected) == len(got) and all(
        len(e) == len(g) and all(values_match(gv, ev) for gv, ev in zip(g, e, strict=True))
        for e, g in zip(expected, got, strict=True)
    )
    if not ok:
        shown = "\n".join("\t".join(row) for row in got)
        raise Mismatch(
            record.line, f"query:\n{record.sql}\nexpected:\n" + "\n".join(record.expected) + f"\ngot:\n{shown}"
        )


class FileRun:
    """One file in one database (in memory, or the file `load` names), reopened by `restart`."""

    def __init__(
        self, path: Path, env: dict, with_httpfs2: bool, test_dir: Path, on_init: str = "", urls: dict | None = None
    ):
        self.path = path
        self.urls = urls or {}
        self.on_init = on_init
        self.env = env
        self.with_httpfs2 = with_httpfs2
        self.test_dir = test_dir
        self.database = ":memory:"
        self.skipping = False
        self.con = None
        self.wheels = []  # loaded again after a restart

    def connect(self):
        import duckdb

        if self.con is not None:
            self.con.close()
        self.con = duckdb.connect(
            self.database,
            config={
                "allow_unsigned_extensions": "true",
                "autoinstall_known_extensions": "false",
                "autoload_known_extensions": "false",
            },
        )
        load_httpfs(self.con)
        if self.with_httpfs2:
            load_httpfs2(self.con)
        for name in self.wheels:
            self.con.execute(f"LOAD '{WHEELS[name]()}'")
        if self.on_init:
            self.con.execute(self.on_init)

    def restart(self):
        """A new database over the same file that keeps the settings the file changed, as DuckDB's runner restarts
        (it passes the old database's options and the connection's settings on): httpfs, loaded again, would otherwise
        take the AWS_* variables again where the file had set its settings to ''."""
        settings = "SELECT name, value FROM duckdb_settings()"
        # Not verified (PRAGMA enable_verification, which the new connection does not keep): the settings' values
        # differ between the verification's runs.
        self.con.execute("PRAGMA disable_verification")
        before = dict(self.con.execute(settings).fetchall())
        self.connect()
        fresh = dict(self.con.execute(settings).fetchall())
        for name, value in before.items():
            if name in fresh and fresh[name] != value:
                text = "NULL" if value is None else "'" + value.replace("'", "''") + "'"
                try:
                    self.con.execute(f"SET {name} = {text}")
                except Exception:  # noqa: BLE001, S110 (settings fixed at startup stay as the new database has them)
                    pass

    def load_wheel(self, name: str):
        try:
            path = WHEELS[name]()
        except RuntimeError as missing:
            raise Skip(f"requires {name}: {missing}") from None
        self.con.execute(f"LOAD '{path}'")
        self.wheels.append(name)

    def substitute(self, text: str, variables: dict) -> str:
        text = text.replace("__TEST_DIR__", str(self.test_dir))
        for old, new in self.urls.items():
            text = text.replace(old, new)
        for name, value in {**self.env, **variables}.items():
            text = text.replace("${" + name + "}", value)
        return text

    def run(self, log_requests: bool = False) -> dict | None:
        """Runs the file; with `log_requests`, DuckDB's HTTP log is on from the start and what it holds at the end
        is returned (requests by method), to set beside what the server served."""
        self.connect()
        if log_requests:
            self.con.execute("CALL enable_logging('HTTP')")
        try:
            self.run_records(parse(self.path.read_text()), {})
            if log_requests:
                rows = self.con.execute("SELECT request.type, count(*) FROM duckdb_logs_parsed('HTTP') GROUP BY 1")
                return dict(rows.fetchall())
            return None
        finally:
            self.con.close()

    def run_records(self, records: list[Record], variables: dict) -> None:
        for record in records:
            if record.kind in LOOPS:
                name, values = loop_values(record)
                for value in values:
                    self.run_records(record.body, {**variables, name: self.substitute(value, variables)})
            else:
                self.run_record(record, variables)

    def run_record(self, record: Record, variables: dict) -> None:
        kind, args = record.kind, [self.substitute(a, variables) for a in record.args]
        if kind == "mode":
            self.skipping = {"skip": True, "unskip": False}.get(args[0], self.skipping)
        elif self.skipping:
            return
        elif kind == "require":
            if args[0] in WHEELS:
                self.load_wheel(args[0])
            elif args[0] not in AVAILABLE | RUNNER_CONDITIONS:
                raise Skip(f"requires {args[0]}")
        elif kind == "require-env":
            if args[0] not in self.env or (len(args) > 1 and self.env[args[0]] != args[1]):
                raise Skip(f"requires environment {' '.join(args)}")
        elif kind == "load":
            self.database = args[0] if args else ":memory:"
            self.connect()
        elif kind == "restart":
            self.restart()
        elif kind == "statement":
            self.statement(record, args, variables)
        elif kind == "query":
            self.query(record, variables)
        elif kind not in ("set", "reset", "name", "description", "group"):
            raise Skip(f"line {record.line}: runner does not know `{kind}`")

    def statement(self, record: Record, args: list, variables: dict) -> None:
        sql = self.substitute(record.sql, variables)
        try:
            self.con.execute(sql).fetchall()
        except Exception as error:  # noqa: BLE001 (any DuckDB error is the statement's outcome)
            if args[0] == "ok":
                raise Mismatch(record.line, f"statement:\n{sql}\nfailed: {error}") from None
            expected = self.substitute("\n".join(record.expected), variables)
            if record.has_expected and not (
                values_match(str(error), expected) if expected.startswith("<") else expected in str(error)
            ):
                raise Mismatch(record.line, f"statement:\n{sql}\nexpected error:\n{expected}\ngot: {error}") from None
            return
        if args[0] == "error":
            raise Mismatch(record.line, f"statement:\n{sql}\nexpected an error, got none")

    def query(self, record: Record, variables: dict) -> None:
        sql = self.substitute(record.sql, variables)
        try:
            rows = self.con.execute(sql).fetchall()
        except Exception as error:  # noqa: BLE001
            raise Mismatch(record.line, f"query:\n{sql}\nfailed: {error}") from None
        record = Record(
            record.kind, record.args, record.line, sql, [self.substitute(e, variables) for e in record.expected]
        )
        compare(record, rows)


def run_file(path: Path, name: str, env: dict, with_httpfs2: bool, options) -> Outcome:
    """`options`: main()'s, with on_init, url_map and log_requests."""
    with tempfile.TemporaryDirectory(prefix="httpfs-suite-") as test_dir:
        try:
            run = FileRun(path, env, with_httpfs2, Path(test_dir), options.on_init, options.url_map)
            logged = run.run(options.log_requests)
        except Skip as skip:
            return Outcome(name, "skip", str(skip))
        except Mismatch as mismatch:
            return Outcome(name, "fail", str(mismatch), mismatch.line)
        except Exception as error:  # noqa: BLE001 (a crash of the runner is the file's failure too)
            return Outcome(name, "fail", f"{type(error).__name__}: {error}")
    return Outcome(name, "pass", logged_requests=logged)


def main(argv=None) -> int:
    """One file, its outcome as JSON on stdout (suite.py runs each file this way)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--httpfs-tree", type=Path, required=True, help="unpacked duckdb-httpfs; the file runs here")
    parser.add_argument("--httpfs2", action="store_true", help="load httpfs2 (HTTPFS2_EXTENSION) after httpfs")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE the file may require-env")
    parser.add_argument("--on-init", default="", help="SQL run on each new connection (as unittest's --on-init)")
    parser.add_argument("--log-requests", action="store_true", help="report DuckDB's HTTP log's requests at the end")
    parser.add_argument("--url-map", action="append", default=[], help="OLD=NEW: URL prefix OLD read from NEW")
    parser.add_argument("file", help="path relative to --httpfs-tree, e.g. test/sql/copy/s3/url_encode.test")
    options = parser.parse_args(argv)
    env = dict(item.split("=", 1) for item in options.env)
    options.url_map = dict(item.split("=", 1) for item in options.url_map)
    # httpfs reads AWS_* from the environment as its defaults (the files rely on it: create_secret_minio.test).
    os.environ.update(env)
    os.chdir(options.httpfs_tree)
    print(json.dumps(asdict(run_file(Path(options.file), options.file, env, options.httpfs2, options))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the tests of servers and gateways that break HTTP's contract share (test_hostile_servers.py,
test_hostile_versions.py): the hostile proxy in front of versitygw or the local HTTP server (rig/hostile_proxy.py),
its data, connections of each implementation, and queries run with a hard time limit. The fixtures are registered by
conftest.py; a module that uses them marks its tests with `pytestmark = HOSTILE`."""

import hashlib
import json
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest

from helpers import NativeHttpfs, sha256, split_host_pieces
from rig import duckdb_connect, serve_http
from rig.hostile_proxy import serve_hostile

PREFIX = "hostile/"
QUERY_LIMIT = 60.0  # seconds any query may take before it counts as a hang
INTERRUPT_LIMIT = 5.0  # seconds an interrupted query may take to end
HTTP_TIMEOUT = 1  # seconds, where a test bounds httpfs's waits
BOUNDED = f"SET http_timeout = {HTTP_TIMEOUT}; SET http_retries = 1; SET http_retry_wait_ms = 10"
CLIENTS = ["curl", "httplib"]
SMALL_PIECES = {
    "httpfs2_parallel_read_min_latency_ms": 0,
    "httpfs2_parallel_read_chunk_size_bytes": 65536,
    "httpfs2_parallel_read_min_bytes": 65536,
    "httpfs2_parallel_read_max_fanout": 4,
}
IMPLS = {
    "native": None,  # httpfs only
    # Its defaults, parallel reads on, and the latency gate shut as on a LAN: whether a read under a chunk splits and
    # read-ahead runs then does not depend on the latency the cost model happened to measure (reads of a chunk and
    # more still split).
    "httpfs2": {"httpfs2_parallel_read_enabled": True, "httpfs2_parallel_read_min_latency_ms": 60000},
    "httpfs2_small": {"httpfs2_parallel_read_enabled": True, **SMALL_PIECES},
}
HTTPFS2_IMPLS = ["httpfs2", "httpfs2_small"]
# Every test of a hostile module starts with proxies in "normal" mode and zero counters, and leaves them so.
HOSTILE = pytest.mark.usefixtures("normal_proxies")


# --- reporting and bounded queries ---


def report(request, **figures):
    """Puts the test's key figures in its properties and, with HOSTILE_SERVERS_REPORT set, in that file."""
    for name, value in figures.items():
        request.node.user_properties.append((name, value))
    target = os.environ.get("HOSTILE_SERVERS_REPORT")
    if target:
        with open(target, "a") as handle:
            handle.write(json.dumps({"test": request.node.name, **figures}, default=str) + "\n")


@dataclass
class Outcome:
    rows: list | None
    error: BaseException | None
    seconds: float
    hung: bool = False
    interrupt_seconds: float | None = None  # after a hang: how long after the interrupt the query ended (None: never)
    ended_by: str | None = None  # after a hang: "interrupt", "proxy" (only once it let go) or None (still running)

    def text(self) -> str:
        if self.hung:
            how = {"interrupt": "the interrupt ended it", "proxy": "only the proxy closing its connections ended it"}
            ending = how.get(self.ended_by, "it is still running")
            return f"HANG: no answer in its time limit; {ending} ({self.interrupt_seconds} s after the interrupt)"
        return f"error {type(self.error).__name__}: {str(self.error)[:200]}" if self.error else "ok"


class Db:
    """A DuckDB connection of one implementation and client; `stuck` once a query outlived its interrupt."""

    def __init__(self, con, impl: str, client: str):
        self.con = con
        self.impl = impl
        self.client = client
        self.stuck = False

    def run(self, sql: str, limit: float = QUERY_LIMIT, proxy=None) -> Outcome:
        """Runs `sql` on a worker thread for at most `limit` seconds; then interrupts it and, if that does not end it
        within INTERRUPT_LIMIT, puts the proxy (when given) back to normal, closes its connections, waits 10 s more."""
        box = {}

        def work():
            try:
                box["rows"] = self.con.execute(sql).fetchall()
            except Exception as error:  # reported to the test, whatever it is
                box["error"] = error
            box["end"] = time.monotonic()

        start = time.monotonic()
        worker = threading.Thread(target=work, name="hostile-query", daemon=True)
        worker.start()
        worker.join(limit)
        if not worker.is_alive():
            return Outcome(box.get("rows"), box.get("error"), box["end"] - start)
        interrupted_at = time.monotonic()
        self.con.interrupt()
        worker.join(INTERRUPT_LIMIT)
        ended_by = "interrupt"
        if worker.is_alive() and proxy is not None:
            ended_by = "proxy"
            proxy.mode = "normal"  # so that what the client tries next is answered
            proxy.drop_connections()
            worker.join(10)
        self.stuck = worker.is_alive()
        took = None if self.stuck else round(box["end"] - interrupted_at, 2)
        return Outcome(
            None,
            box.get("error"),
            time.monotonic() - start,
            hung=True,
            interrupt_seconds=took,
            ended_by=None if self.stuck else ended_by,
        )


def fail_on_hang(outcome: Outcome, what: str):
    if outcome.hung:
        pytest.fail(f"{what}: {outcome.text()}")


def names_the_file(outcome: Outcome, name: str) -> bool:
    return outcome.error is not None and name in str(outcome.error)


def natively_and_with(impl, connect, client, proxy, mode, sql, limit, stall_seconds, setup=None):
    """Runs `sql` natively, then with `impl`, each while `proxy` plays `mode`; per name its outcome and seconds, and
    how often the proxy played the mode in the second run. Fails on a hang."""
    outcomes, seconds, hits = {}, {}, 0
    for name in ("native", impl):
        db = connect(name, client)
        if setup:
            db.con.execute(setup)
        proxy.reset()
        proxy.stall_seconds = stall_seconds
        proxy.mode = mode
        outcomes[name] = db.run(sql, limit=limit, proxy=proxy)
        seconds[name] = round(outcomes[name].seconds, 2)
        hits = proxy.counts.get(f"hit:{mode}", 0)
        proxy.mode = "normal"
        fail_on_hang(outcomes[name], f"{name}: {sql}")
    return outcomes, seconds, hits


def assert_right_or_names_the_file(outcome: Outcome, right: bool, name: str, wrong: str):
    """A query against a misbehaving server either answered right or failed naming the file; `wrong` says what a
    wrong answer means."""
    if outcome.error is None:
        assert right, wrong
    else:
        assert names_the_file(outcome, name), outcome.text()


def assert_as_httpfs_alone_on_wrong_answers(outcome: Outcome, right: bool, name: str, wrong: str):
    """What the host's httpfs alone gives for range answers of other bytes than asked: right or an error naming the
    file (1.5.5). httpfs 2a6481d on DuckDB 2.0 checks only an answer's length, and 2.0 cuts a read into 2 MiB reads
    that no longer end at the object's last byte: it may answer right, fail without naming the file, or take the
    wrong bytes as they come (NativeHttpfs.RIGHT_OR_NAMES_THE_FILE_ON_WRONG_ANSWERS); a hang is a failure still."""
    if NativeHttpfs.RIGHT_OR_NAMES_THE_FILE_ON_WRONG_ANSWERS:
        assert_right_or_names_the_file(outcome, right, name, wrong)


# --- fixtures ---


@pytest.fixture(scope="module")
def hostile_s3(rig):
    """The hostile proxy in front of versitygw itself (not toxiproxy); its faults hit keys under PREFIX only. It has
    the secret key, to sign again the GETs whose signed Range it changes (httpfs2 signs some GETs' Range)."""
    host, port = rig.direct_endpoint.split(":")
    with serve_hostile(host, int(port), key_filter=f"/{PREFIX}", secret_key=rig.secret_key) as proxy:
        yield proxy


class Data:
    """Objects written with one PutObject each (so they have plain ETags) and the same files in a local folder."""

    def __init__(self, rig, folder: Path):
        self.rig = rig
        self.folder = folder
        self.files = {}

    def add(self, name: str, data: bytes | None = None):
        path = self.folder / name
        if data is not None:
            path.write_bytes(data)
        self.rig.put_object(PREFIX + name, path.read_bytes())
        self.files[name] = path

    def sha(self, name: str) -> str:
        return sha256(self.files[name].read_bytes())

    def answer(self, sql: str, name: str) -> list:
        return duckdb.connect().execute(sql.format(url=self.files[name])).fetchall()


@pytest.fixture(scope="module")
def data(rig, tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    found = Data(rig, folder)
    found.add("blob4.bin", os.urandom((4 << 20) + 12345))
    found.add("blob64.bin", os.urandom(64 << 20))
    local = duckdb.connect()
    local.execute(f"""COPY (SELECT i, i * 7 % 1000 AS k, md5(i::VARCHAR) AS s FROM range(80000) r(i))
                      TO '{folder / "data.csv"}' (FORMAT csv)""")  # 3.4 MB
    found.add("data.csv")
    local.execute(f"""COPY (SELECT i, md5(i::VARCHAR) AS s FROM range(300000) r(i))
                      TO '{folder / "data.parquet"}' (FORMAT parquet, ROW_GROUP_SIZE 50000)""")  # 11 MB, 6 groups
    found.add("data.parquet")
    return found


@pytest.fixture(scope="module")
def hostile_http(data):
    """The hostile proxy in front of the local HTTP server over the data's folder."""
    with serve_http(data.folder) as base_url:
        port = int(base_url.rsplit(":", 1)[1])
        with serve_hostile("127.0.0.1", port) as proxy:
            yield proxy


@pytest.fixture
def normal_proxies(hostile_s3):
    """A test of a hostile module (pytestmark) starts with a proxy in "normal" mode and zero counters, and leaves it
    so."""
    saved = (hostile_s3.stall_seconds, hostile_s3.trickle_interval, hostile_s3.trickle_seconds, hostile_s3.stall_every)
    hostile_s3.reset()
    yield
    hostile_s3.reset()
    hostile_s3.stall_seconds, hostile_s3.trickle_interval, hostile_s3.trickle_seconds, hostile_s3.stall_every = saved


@pytest.fixture
def connect(rig, hostile_s3):
    """connect(impl, client): a connection with httpfs (and, but for "native", httpfs2 configured as IMPLS says),
    the client set, the S3 secret on the hostile proxy, the external file cache off. Closed afterwards, unless a
    query on it never ended."""
    made = []

    def make(impl: str, client: str = "curl") -> Db:
        con = duckdb_connect(None, load_httpfs2_too=impl != "native")
        con.execute("SET enable_external_file_cache = false")
        con.execute(f"SET httpfs_client_implementation = '{client}'")
        con.execute(rig.secret_sql(endpoint=hostile_s3.endpoint))
        settings = IMPLS[impl] or {}
        if settings:
            known = {
                row[0]
                for row in con.execute("SELECT name FROM duckdb_settings() WHERE name LIKE 'httpfs2%'").fetchall()
            }
            assert set(settings) <= known, sorted(set(settings) - known)
        for name, value in settings.items():
            con.execute(f"SET {name} = {str(value).lower()}")
        if impl == "httpfs2_small":
            split_host_pieces(con)  # its small pieces are cut from DuckDB 2.0's reads too
        db = Db(con, impl, client)
        made.append(db)
        return db

    yield make
    for db in made:
        if not db.stuck:
            db.con.close()


def url_of(rig, hostile_http, scheme: str, name: str) -> str:
    return rig.url(PREFIX + name) if scheme == "s3" else f"{hostile_http.url}/{name}"


def proxy_of(hostile_s3, hostile_http, scheme: str):
    if scheme == "http":
        hostile_http.reset()
        return hostile_http
    return hostile_s3


def fixed_width_csv(seed: int, rows: int) -> bytes:
    """Lines of one width whatever the seed: two versions of a file of the same size and other content."""
    lines = [
        f"{i:08d},{(i * 7 + seed) % 1000:03d},{hashlib.md5(f'{seed}-{i}'.encode()).hexdigest()}\n" for i in range(rows)
    ]
    return ("i,k,s\n" + "".join(lines)).encode()

"""The parallel read layer: byte-exact at every offset and size under every setting combination, equal query
results, concurrency without deadlock, and clean failures."""

import random
import re
import threading

import pytest

from helpers import NativeHttpfs, blob_sha, server_requests, sha256, show_the_model_a_lan, split_host_pieces, stats
from rig import duckdb_connect

# Small pieces so that reads of a few MiB split many ways and land at unaligned offsets.
SMALL = {"chunk_size_bytes": 65536, "min_bytes": 65536, "max_fanout": 4}
CONFIGS = {
    "off": {"enabled": False},
    "default": {"enabled": True},
    "small": {"enabled": True, **SMALL},
    "preset": {"enabled": True, **SMALL, "recommended_preset_enabled": True},
    "dedicated": {"enabled": True, **SMALL, "dedicated_handles": True},
    "auto": {"enabled": True, **SMALL, "max_fanout": 8, "auto_fanout_enabled": True, "auto_fanout_overhead_ms": 0},
    "auto_adaptive": {
        "enabled": True,
        **SMALL,
        "max_fanout": 8,
        "auto_fanout_enabled": True,
        "auto_fanout_overhead_adaptive_enabled": True,
    },
}


def configure(con, settings: dict):
    """Sets httpfs2_parallel_read_<name> for each of `settings`; reads under one chunk are split whatever the latency
    (the rig answers in about a millisecond, where by default they are not), unless `settings` says otherwise; in
    DuckDB 2.0 its pieces of a read reach httpfs2 to be split (helpers.SPLIT_HOST_PIECES)."""
    for name, value in {"min_latency_ms": 0, **settings}.items():
        con.execute(f"SET httpfs2_parallel_read_{name} = {str(value).lower()}")
    split_host_pieces(con)


def random_ranges(rng, size, count):
    ranges = []
    for _ in range(count):
        length = rng.choice(
            [0, 1, rng.randrange(1, 65536), rng.randrange(65536, 1 << 20), rng.randrange(1 << 20, 3 << 20)]
        )
        offset = rng.randrange(0, size - length + 1)
        if rng.random() < 0.1:
            offset = size - length  # touch EOF
        ranges.append((offset, length, rng.random() < 0.3))
    return ranges


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_random_ranges_are_byte_exact(con, rig, big_object, config):
    key, data = big_object
    configure(con, CONFIGS[config])
    rng = random.Random(f"ranges-{config}")
    ranges = random_ranges(rng, len(data), 350)
    # sequential reads may also start inside the last piece and run past EOF: they return what is left
    ranges += [(len(data) - 100_000, 300_000, True), (len(data), 10, True)]
    con.execute("CREATE TEMP TABLE ranges (o BIGINT, l BIGINT, seq BOOLEAN)")
    con.executemany("INSERT INTO ranges VALUES (?, ?, ?)", ranges)
    rows = con.execute(
        f"SELECT o, l, seq, sha256(httpfs2_read_range('{rig.url(key)}', o, l, seq)) FROM ranges"
    ).fetchall()
    assert len(rows) == len(ranges)
    for offset, length, sequential, got in rows:
        assert got == sha256(data[offset : offset + length]), (offset, length, sequential)
    counters = stats(con)
    assert counters["errors"] == 0
    if config == "off":
        assert counters["reads_split"] == 0
    else:
        assert counters["reads_split"] > 0
        assert counters["sub_read_bytes"] > 0


def test_split_read_uses_at_most_fanout_streams(con, rig, big_object):
    key, data = big_object
    configure(con, {"enabled": True, "max_fanout": 3, "chunk_size_bytes": 1 << 20, "min_bytes": 65536, "io_threads": 8})
    # One Read of the whole object (read_blob's in DuckDB 1.5; DuckDB 2.0 cuts that into reads of 2 MiB of its own).
    whole = con.execute("SELECT sha256(httpfs2_read_range(?, 0, ?))", [rig.url(key), len(data)]).fetchone()[0]
    assert whole == sha256(data)
    counters = stats(con)
    assert counters["in_flight_peak"] <= 3
    assert dict(counters["fanout_histogram"]) == {3: 1}
    assert counters["sub_reads"] == 27  # 24 MiB + 12345 bytes: 25 pieces of at most 1 MiB, rounded to waves of 3


def test_reads_under_a_chunk_are_split_only_where_the_store_is_far(con, rig, big_object):
    """The decision, not its speed: under httpfs2_parallel_read_min_latency_ms of first-byte latency (10 ms here, with
    room for a loaded machine's loopback), a read under chunk_size_bytes from the rig at 0 ms is one request, as
    natively, and a read of a chunk or more is still split; at 40 ms the same small read is split again."""
    key, data = big_object
    configure(con, {"enabled": True, "chunk_size_bytes": 4 << 20, "min_bytes": 65536, "max_fanout": 4})
    con.execute("SET httpfs2_parallel_read_min_latency_ms = 10")

    def read(offset, length):
        con.execute("CALL httpfs2_reset_stats()")
        got = con.execute(f"SELECT sha256(httpfs2_read_range('{rig.url(key)}', {offset}, {length}, false))").fetchone()
        assert got[0] == sha256(data[offset : offset + length]), (offset, length)
        return stats(con)

    rig.set_latency(0)
    show_the_model_a_lan(con, lambda: read(0, 1 << 20))
    near = read(123, 3 << 20)
    assert near["model_first_byte_latency_ms"] < 10, near
    assert near["reads_split"] == 0 and near["sub_reads"] == 0, near
    whole_chunks = read(5, 9 << 20)
    assert whole_chunks["reads_split"] == 1, whole_chunks
    rig.set_latency(40)
    read(0, 1 << 20)
    far = read(123, 3 << 20)
    assert far["model_first_byte_latency_ms"] >= 10, far
    assert far["reads_split"] == 1 and far["sub_reads"] == 4, far


def test_auto_fanout_learns_model_values(con, rig, big_object):
    key, data = big_object
    # Pieces of 2 MiB: transfers under 1 MiB are no bandwidth samples (first byte and scheduling, not streaming).
    configure(con, dict(CONFIGS["auto_adaptive"], chunk_size_bytes=2 << 20, min_bytes=2 << 20))
    for _ in range(3):
        assert blob_sha(con, rig.url(key)) == sha256(data)
    counters = stats(con)
    assert counters["model_first_byte_latency_ms"] > 0
    assert counters["model_stream_bandwidth_mib_s"] > 0
    assert counters["model_learned_overhead_ms"] is not None


@pytest.fixture(scope="module")
def parquet_url(rig):
    """Several row groups whose column chunks are larger than the default min_bytes."""
    url = rig.url("parquet/wide.parquet")
    writer = duckdb_connect(rig, load_httpfs2_too=False)
    writer.execute(f"""COPY (SELECT i, random() AS a, hash(i) AS b, md5(i::VARCHAR) AS s FROM range(3000000) r(i))
                       TO '{url}' (FORMAT parquet, ROW_GROUP_SIZE 600000, COMPRESSION uncompressed)""")
    writer.close()
    return url


# Order-independent and exact: every value of every column goes into a hash.
QUERY = "SELECT count(*), sum(i), bit_xor(hash(a)), bit_xor(hash(b)), bit_xor(hash(s)) FROM read_parquet('{url}')"


@pytest.mark.parametrize("threads,io_threads", [(1, 1), (8, 1), (8, 4), (8, 16)])
def test_parquet_query_equal_with_and_without(con, native_con, parquet_url, threads, io_threads):
    expected = native_con.execute(QUERY.format(url=parquet_url)).fetchone()
    configure(con, {"enabled": True, "io_threads": io_threads, "min_bytes": 1 << 20})
    con.execute(f"SET threads = {threads}")
    assert con.execute(QUERY.format(url=parquet_url)).fetchone() == expected
    assert stats(con)["reads_split"] > 0


def test_csv_equal_with_and_without(con, native_con, rig):
    url = rig.url("csv/data.csv")
    native_con.execute(f"COPY (SELECT i, i * 3 AS j, 'text ' || i AS t FROM range(400000) r(i)) TO '{url}'")
    query = f"SELECT count(*), sum(i), sum(j), max(t) FROM read_csv('{url}')"
    expected = native_con.execute(query).fetchone()
    configure(con, {"enabled": True, **SMALL})
    assert con.execute(query).fetchone() == expected


def test_many_connections_at_once(rig, big_object):
    key, data = big_object
    results = []

    def worker(io_threads):
        connection = duckdb_connect(rig)
        connection.execute("SET enable_external_file_cache = false")
        configure(connection, {"enabled": True, "io_threads": io_threads, **SMALL, "max_fanout": 8})
        for _ in range(2):
            results.append(blob_sha(connection, rig.url(key)))
        connection.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in (1, 2, 4, 16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert results == [sha256(data)] * 8


def test_cursors_of_one_database_share_the_pool(con, rig, big_object):
    key, data = big_object
    configure(con, {"enabled": True, "io_threads": 1, **SMALL})
    cursors = [con.cursor() for _ in range(6)]
    results = [None] * len(cursors)

    def read(index):
        results[index] = blob_sha(cursors[index], rig.url(key))

    threads = [threading.Thread(target=read, args=(i,)) for i in range(len(cursors))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert results == [sha256(data)] * len(cursors)


@pytest.mark.parametrize("dedicated", [False, True])
def test_sub_read_handles_cost_no_extra_request(con, rig, big_object, dedicated):
    key, data = big_object

    def small():
        con.execute("SELECT httpfs2_read_range(?, 0, 1000)", [rig.url(key)]).fetchall()

    baseline = server_requests(rig, small)
    configure(con, {"enabled": True, "dedicated_handles": dedicated})
    # The split layer alone: read-ahead would fetch the 8 MiB after the split read below (test_read_ahead.py).
    con.execute("SET httpfs2_read_ahead_enabled = false")
    assert server_requests(rig, small) == baseline, "a file that is never split must cost no extra request"

    def split():
        con.execute("SELECT httpfs2_read_range(?, 0, 8388608)", [rig.url(key)]).fetchall()

    # One HEAD when the file opens, then one ranged GET per piece: 8 MiB starts on 4 streams and is cut for twice as
    # many (more may join). No probe first: the small read above was httpfs2's own checked GET (a file's reads are,
    # until an answer proved its version), whose exact answer showed that the server serves ranges of the object.
    assert server_requests(rig, split) == {"HeadObject": 1, "GetObject": 8}


@pytest.mark.parametrize("client", ["curl", "httplib"])
def test_a_first_split_read_waits_for_a_small_range_where_curl_gives_heads_with_bodies(con, rig, big_object, client):
    """Until the store answered a range of an object exactly, one request of it is in flight (a server that ignores
    ranges sends the whole object to each). curl hands over an answer's head only with its body: the first piece of
    a split read asks for its first 64 KiB alone, so the other pieces wait one first byte, not a piece's transfer;
    httplib hands the head over first, and the piece goes whole. Bytes exact either way."""
    key, data = big_object
    con.execute(f"SET httpfs_client_implementation = '{client}'")
    configure(con, {"enabled": True, "chunk_size_bytes": 1 << 20, "min_bytes": 1 << 20, "max_fanout": 4})
    con.execute("SET httpfs2_read_ahead_enabled = false")
    con.execute("CALL enable_logging('HTTP')")
    offset, length = 3 << 20, 4 << 20
    got = con.execute("SELECT httpfs2_read_range(?, ?, ?)", [rig.url(key), offset, length]).fetchone()[0]
    assert got == data[offset : offset + length]
    con.execute("CALL disable_logging()")
    logged = con.execute("SELECT request.headers FROM duckdb_logs_parsed('HTTP') WHERE request.type = 'GET'").fetchall()
    ranges = sorted(
        tuple(int(end) for end in value.split("=")[1].split("-"))
        for (headers,) in logged
        for name, value in headers.items()
        if name.lower() == "range"
    )
    pieces = [(start, start + (1 << 20) - 1) for start in range(offset, offset + length, 1 << 20)]
    if client == "curl":
        # The piece sent first is the one probed: usually the first, but the drainers race for the pieces (under
        # ASan a helper's piece went first once).
        probed = [
            sorted(pieces[:i] + [(start, start + 65536 - 1), (start + 65536, end)] + pieces[i + 1 :])
            for i, (start, end) in enumerate(pieces)
        ]
        assert ranges in probed, ranges
    else:
        assert ranges == pieces, ranges


def test_httpfs2s_own_requests_are_in_duckdbs_http_log_without_credentials(con, rig, big_object):
    """Every GET httpfs2 sends itself is in DuckDB's HTTP log as httpfs's requests are (a user who debugs with the log
    sees what went over the wire), with its signature and no credential."""
    key, data = big_object
    configure(con, {"enabled": True, **SMALL})
    con.execute("SET httpfs2_read_ahead_enabled = false")
    con.execute("CALL enable_logging('HTTP')")
    got = {}
    served = server_requests(
        rig,
        lambda: got.update(bytes=con.execute("SELECT httpfs2_read_range(?, 0, 4194304)", [rig.url(key)]).fetchone()[0]),
    )
    assert got["bytes"] == data[:4194304]
    con.execute("CALL disable_logging()")
    logged = con.execute(
        "SELECT request.headers, response.status FROM duckdb_logs_parsed('HTTP') WHERE request.type = 'GET'"
    ).fetchall()
    lowered = [({name.lower(): value for name, value in headers.items()}, status) for headers, status in logged]
    # httpfs2's signature as it writes it; where DuckDB redacts every request's itself, every GET here is httpfs2's
    # (httpfs only opened the file, with a HEAD).
    marker = "REDACTED" if NativeHttpfs.LOG_TELLS_HTTPFS2_APART else "redacted"
    ours = [(headers, status) for headers, status in lowered if headers.get("authorization") == marker]
    # A piece of 64 KiB each: the split read's GETs, all of them httpfs2's own, each in the log with its range.
    assert len(ours) == served["GetObject"] >= 4194304 // 65536, (len(ours), served)
    assert all(h.get("range", "").startswith("bytes=") and status == "PartialContent_206" for h, status in ours), ours
    messages = [row[0] for row in con.execute("SELECT message FROM duckdb_logs WHERE type = 'HTTP'").fetchall()]
    assert len([m for m in messages if marker in m and "'type': GET" in m]) == len(ours)
    for message in (m for m in messages if marker in m):
        assert rig.access_key not in message and rig.secret_key not in message and "Signature=" not in message, message


def test_httpfs2s_own_requests_are_in_explain_analyzes_http_stats(con, rig, big_object):
    """EXPLAIN ANALYZE's HTTP stats (httpfs's HTTPState of the query) count the requests httpfs2 sends itself as
    httpfs's own: a user who profiles a query sees the GETs that went over the wire."""
    key, data = big_object
    configure(con, {"enabled": True, **SMALL})
    con.execute("SET httpfs2_read_ahead_enabled = false")
    sql = f"EXPLAIN ANALYZE SELECT sha256(httpfs2_read_range('{rig.url(key)}', 0, 4194304))"
    got = {}
    served = server_requests(rig, lambda: got.update(plan=con.execute(sql).fetchall()))
    text = "\n".join(str(cell) for row in got["plan"] for cell in row)
    shown = {kind: int(count) for kind, count in re.findall(r"#(GET|HEAD): (\d+)", text)}
    assert served["GetObject"] >= 4194304 // 65536, served
    assert shown.get("GET") == served["GetObject"], (shown, served, text[-2000:])
    assert shown.get("HEAD", 0) == served.get("HeadObject", 0), (shown, served)

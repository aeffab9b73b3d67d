"""az:// through httpfs2 against a real Azurite (blob service) behind toxiproxy on 127.0.0.1 (rig/azurite.py).

Every check compares bytes (sha256 of what DuckDB read against the bytes put into Azurite, or EXCEPT both ways
against the table the file was written from), never row counts alone. If Azurite is not installed the tests fail
(they are not skipped) with a message naming scripts/setup_env.sh.

The fixtures live in this module on purpose (conftest.py is shared and being refactored)."""

import hashlib
import random
import sys
import time
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


from helpers import stats, uncached  # noqa: E402
from rig.azurite import (  # noqa: E402
    ACCOUNT,
    ACCOUNT_KEY,
    LOOPBACK,
    AzuriteRig,
    azure_connect,
    azurite_installed,
    read_sas_token,
    require_azurite,
)
from rig.hostile_proxy import serve_hostile  # noqa: E402

AZURE_FS = "AzureBlobStorageFileSystem"
# x-ms-version of httpfs2's own requests (AZURE_STORAGE_API_VERSION, src/include/adapter/stores/azure_signing.hpp)
STORAGE_API_VERSION = "2021-08-06"
BIG_SIZE = 24 * 1024 * 1024 + 12345  # larger than min_bytes and than fanout x chunk of the small configuration
PARALLEL = {"httpfs2_parallel_read_enabled": True}
# Many small pieces per read: splits at unaligned offsets and pieces that end at the end of the blob.
SMALL_PIECES = {
    "httpfs2_parallel_read_enabled": True,
    "httpfs2_parallel_read_min_bytes": 65536,
    "httpfs2_parallel_read_chunk_size_bytes": 65536 * 3,
    "httpfs2_parallel_read_max_fanout": 8,
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def apply(con, settings: dict):
    for name, value in settings.items():
        con.execute(f"SET {name} = {str(value).lower() if isinstance(value, bool) else value}")


def az_stats(con) -> dict:
    return stats(con, AZURE_FS)


@pytest.fixture(scope="module")
def azurite():
    if not azurite_installed():
        pytest.fail("Azurite is not installed (.tools/azurite/): run `bash scripts/setup_env.sh` first", pytrace=False)
    require_azurite()
    with AzuriteRig(container="test", profile="lan") as started:
        yield started


@pytest.fixture(autouse=True)
def lan_profile(azurite):
    """Every test starts on the lan profile with the proxy up and leaves it so, also when it fails."""
    azurite.set_profile("lan")
    azurite.proxy_enabled(True)
    yield
    azurite.set_profile("lan")
    azurite.proxy_enabled(True)


@pytest.fixture(scope="module")
def big_blob(azurite):
    key = "blobs/big.bin"
    data = random.Random(11).randbytes(BIG_SIZE)
    azurite.put_blob(key, data)
    return key, data


@pytest.fixture
def az_con(azurite):
    """azure + httpfs2, parallel reads on, external file cache off so every read reaches Azurite."""
    connection = azure_connect(azurite)
    apply(connection, PARALLEL)
    yield from uncached(connection)


@pytest.fixture
def native_az_con(azurite):
    yield from uncached(azure_connect(azurite, httpfs2=False))


def test_azurite_missing_gives_a_clear_error(monkeypatch, tmp_path):
    """What a machine without Azurite sees: a failure that names the fix, not a skip."""
    import rig.azurite as azurite_module

    monkeypatch.setattr(azurite_module, "AZURITE_BLOB", tmp_path / "no-azurite-blob")
    with pytest.raises(RuntimeError, match="scripts/setup_env.sh"):
        with AzuriteRig():
            pass


# --- bytes ---


@pytest.mark.parametrize("settings", [PARALLEL, SMALL_PIECES], ids=["defaults", "small-pieces"])
def test_random_ranges_are_byte_exact(azurite, az_con, big_blob, settings):
    key, data = big_blob
    url = azurite.url(key)
    apply(az_con, settings)
    az_con.execute("CALL httpfs2_reset_stats()")
    rng = random.Random(20261122)
    ranges = [(0, 1), (0, len(data)), (len(data) - 1, 1), (len(data) - (3 << 20), 3 << 20), (1, (2 << 20) + 1)]
    for _ in range(24):
        length = rng.choice([rng.randint(1, 4096), rng.randint(4097, 2 << 20), rng.randint(2 << 20, 9 << 20)])
        ranges.append((rng.randint(0, len(data) - length), length))
    for offset, length in ranges:
        expected = sha256(data[offset : offset + length])
        positional = az_con.execute("SELECT sha256(httpfs2_read_range(?, ?, ?))", [url, offset, length]).fetchone()[0]
        assert positional == expected, f"positional read ({offset}, {length})"
        sequential = az_con.execute(
            "SELECT sha256(httpfs2_read_range(?, ?, ?, true))", [url, offset, length]
        ).fetchone()[0]
        assert sequential == expected, f"sequential read ({offset}, {length})"
    counters = az_stats(az_con)
    assert counters["reads_split"] > 0, "no read was split: the parallel path on Azure was not exercised"
    assert counters["sub_reads"] > counters["reads_split"]
    assert counters["errors"] == 0


@pytest.mark.parametrize("settings", [PARALLEL, SMALL_PIECES], ids=["defaults", "small-pieces"])
def test_whole_blob_is_byte_exact(azurite, az_con, big_blob, settings):
    key, data = big_blob
    apply(az_con, settings)
    az_con.execute("CALL httpfs2_reset_stats()")
    got = az_con.execute("SELECT sha256(content), size FROM read_blob(?)", [azurite.url(key)]).fetchone()
    assert got == (sha256(data), len(data))
    counters = az_stats(az_con)
    assert counters["reads_split"] >= 1
    assert counters["bytes_read"] >= len(data)


def test_native_reads_the_same_bytes(azurite, native_az_con, big_blob):
    """The baseline the wrapper is compared with reads the same bytes (guards the fixture itself)."""
    key, data = big_blob
    got = native_az_con.execute("SELECT sha256(content) FROM read_blob(?)", [azurite.url(key)]).fetchone()[0]
    assert got == sha256(data)


# --- writes, globs ---

SOURCE_SQL = (
    "SELECT i AS id, i % 97 AS k, md5(i::VARCHAR) AS s, (i * 0.25)::DOUBLE AS r, "
    "DATE '2020-01-01' + (i % 1000)::INTEGER AS d FROM range({n}) t(i)"
)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_copy_to_az_round_trips(azurite, az_con, fmt, tmp_path):
    n = 150_000
    az_con.execute(f"CREATE TABLE src AS {SOURCE_SQL.format(n=n)}")
    url = azurite.url(f"copy/t.{fmt}")
    az_con.execute(f"COPY src TO '{url}' (FORMAT {fmt})")
    reader = f"read_{fmt}('{url}')"
    assert az_con.execute(f"SELECT * FROM {reader} EXCEPT SELECT * FROM src").fetchall() == []
    assert az_con.execute(f"SELECT * FROM src EXCEPT SELECT * FROM {reader}").fetchall() == []
    # The bytes in Azurite, fetched by another client, hold the same rows (not merely a consistent round trip).
    local = tmp_path / f"t.{fmt}"
    local.write_bytes(azurite.get_blob(f"copy/t.{fmt}"))
    from_azurite = f"read_{fmt}('{local}')"
    assert az_con.execute(f"SELECT * FROM {from_azurite} EXCEPT SELECT * FROM {reader}").fetchall() == []
    assert az_con.execute(f"SELECT * FROM {reader} EXCEPT SELECT * FROM {from_azurite}").fetchall() == []
    assert az_con.execute(f"SELECT count(*) FROM {reader}").fetchone()[0] == n
    assert az_stats(az_con)["writes"] > 0


def test_glob_over_a_directory(azurite, az_con):
    az_con.execute(f"CREATE TABLE src AS {SOURCE_SQL.format(n=40_000)}")
    names = []
    for part in range(4):
        name = f"globdir/part-{part}.parquet"
        az_con.execute(f"COPY (SELECT * FROM src WHERE id % 4 = {part}) TO '{azurite.url(name)}' (FORMAT parquet)")
        names.append(name)
    # Things the pattern must not match.
    azurite.put_blob("globdir/notes.csv", b"id\n1\n")
    azurite.put_blob("globdir/sub/deeper.parquet", b"not parquet at all")
    azurite.put_blob("globdirx/part-9.parquet", b"not parquet at all")
    pattern = azurite.url("globdir/*.parquet")
    listed = sorted(row[0] for row in az_con.execute("SELECT file FROM glob(?)", [pattern]).fetchall())
    assert listed == sorted(azurite.url(name) for name in names)
    scan = f"read_parquet('{pattern}')"
    before = az_stats(az_con)
    assert az_con.execute(f"SELECT * FROM {scan} EXCEPT SELECT * FROM src").fetchall() == []
    after = az_stats(az_con)
    # The glob looked up the four files' versions at once and fetched their footers ahead.
    assert after["version_requests"] - before["version_requests"] == len(names)
    assert after["read_ahead_bytes_used"] > before["read_ahead_bytes_used"]
    assert az_con.execute(f"SELECT * FROM src EXCEPT SELECT * FROM {scan}").fetchall() == []
    assert az_con.execute(f"SELECT count(*) FROM {scan}").fetchone()[0] == 40_000


# --- DuckDB's external file cache: a warm re-read never returns replaced bytes ---


@pytest.mark.parametrize("with_httpfs2", [True, False], ids=["httpfs2", "native"])
def test_warm_reread_after_overwrite_returns_new_bytes(azurite, big_blob, with_httpfs2):
    """Same connection, DuckDB's defaults (external file cache on). The blob is replaced by one of the same size
    right after it was read, within the same second where possible: a cache validated by size and a 1-second
    Last-Modified alone would serve the old bytes."""
    con = azure_connect(azurite, httpfs2=with_httpfs2)
    try:
        assert con.execute("SELECT current_setting('enable_external_file_cache')").fetchone()[0] is True
        if with_httpfs2:
            apply(con, PARALLEL)
        key = "overwrite/blob.bin"
        url = azurite.url(key)
        versions = [random.Random(seed).randbytes(6 * 1024 * 1024 + 7) for seed in (1, 2, 3)]
        for number, data in enumerate(versions):
            azurite.put_blob(key, data)
            for attempt in range(2):  # the second read is the warm one
                got = con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchone()[0]
                assert got == sha256(data), f"version {number}, read {attempt}: stale or wrong bytes"
        # parquet: the same file name rewritten with other rows
        pq = azurite.url("overwrite/t.parquet")
        for seed in (5, 6, 7):
            con.execute(f"COPY (SELECT i, md5((i * {seed})::VARCHAR) AS s FROM range(100000) t(i)) TO '{pq}'")
            for _ in range(2):
                got = con.execute(f"SELECT count(*), max(s), min(s), sum(hash(s)) FROM read_parquet('{pq}')").fetchone()
                want = con.execute(
                    f"SELECT count(*), max(s), min(s), sum(hash(s)) FROM "
                    f"(SELECT md5((i * {seed})::VARCHAR) AS s FROM range(100000) t(i))"
                ).fetchone()
                assert got == want, f"seed {seed}: stale parquet"
    finally:
        con.close()


def test_warm_reread_of_an_aged_blob_after_overwrite(azurite):
    """The case where DuckDB's cache does trust Azure's Last-Modified (older than 10 s): after an overwrite the
    next read must still see the new bytes."""
    con = azure_connect(azurite)
    try:
        apply(con, PARALLEL)
        key = "overwrite/aged.bin"
        url = azurite.url(key)
        old, new = random.Random(8).randbytes(3 << 20), random.Random(9).randbytes(3 << 20)
        azurite.put_blob(key, old)
        time.sleep(11)
        for _ in range(2):
            assert con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchone()[0] == sha256(old)
        azurite.put_blob(key, new)
        assert con.execute("SELECT sha256(content) FROM read_blob(?)", [url]).fetchone()[0] == sha256(new)
    finally:
        con.close()


def test_a_bind_outside_a_query_keeps_no_version(azurite, tmp_path):
    """The Python relation API binds outside any query (no query begins or ends): a blob version looked up then
    must not be taken for the blob's version by a later query, after the blob changed."""
    con = azure_connect(azurite)
    try:
        apply(con, PARALLEL)
        key = "overwrite/bound.parquet"
        url = azurite.url(key)
        sql = "SELECT count(*), sum(hash(s)) FROM read_parquet('{}')"
        for seed in (3, 4):
            local = tmp_path / f"{seed}.parquet"
            duckdb.connect().execute(
                f"COPY (SELECT i, md5((i * {seed})::VARCHAR) AS s FROM range(50000) t(i)) TO '{local}'"
            )
            azurite.put_blob(key, local.read_bytes())
            assert con.execute(sql.format(url)).fetchone() == duckdb.connect().execute(sql.format(local)).fetchone()
            con.sql(sql.format(url))  # bound, never run: the next query comes after the blob changed
    finally:
        con.close()


# --- warm re-reads: httpfs2 gives az:// blobs their ETag, so DuckDB's cache validates them as on s3:// ---

WARM_ROWS = 200_000
WARM_QUERY = "SELECT count(*), sum(i), max(s), sum(hash(s)) FROM {scan}"
WARM_SOURCE = f"(SELECT i, md5(i::VARCHAR) AS s FROM range({WARM_ROWS}) t(i))"


def _counter_delta(con, run, names=("reads", "inner_opens", "version_requests")) -> dict:
    before = az_stats(con)
    run()
    after = az_stats(con)
    return {name: after[name] - before[name] for name in names}


@pytest.mark.parametrize("httpfs", [False, True], ids=["builtin-http-client", "httpfs-http-client"])
def test_warm_reread_of_a_fresh_blob_is_served_from_duckdbs_cache(azurite, httpfs):
    """The seed's warm re-read: a parquet file written a moment ago, read twice in one connection with DuckDB's
    defaults. Without an ETag DuckDB distrusts a Last-Modified under 10 s old and reads everything again; with the
    one httpfs2 looks up, the second query reads nothing and makes one request (the lookup) instead of three
    HEADs. With and without httpfs loaded (DuckDB's built-in HTTP client or httpfs's)."""
    con = azure_connect(azurite, httpfs=httpfs)
    try:
        apply(con, PARALLEL)
        url = azurite.url(f"warm/fresh-{int(httpfs)}.parquet")
        con.execute(f"COPY {WARM_SOURCE} TO '{url}'")
        want = con.execute(WARM_QUERY.format(scan=WARM_SOURCE)).fetchone()
        query = WARM_QUERY.format(scan=f"read_parquet('{url}')")
        cold = _counter_delta(con, lambda: con.execute(query).fetchone())
        # One lookup and one open of the azure extension (a HEAD each) for the query's several opens of the file.
        assert cold["version_requests"] == 1 and cold["inner_opens"] == 1 and cold["reads"] > 0, cold
        assert con.execute(query).fetchone() == want, "warm read"
        delta = _counter_delta(con, lambda: con.execute(query).fetchone())
        assert delta == {"reads": 0, "inner_opens": 0, "version_requests": 1}, delta
        # The blob is still only seconds old: it was its ETag, not its age, that let DuckDB trust the cache.
        age = time.time() - azurite.blob_properties(f"warm/fresh-{int(httpfs)}.parquet").last_modified.timestamp()
        assert age < 10, f"the blob was {age:.1f} s old: the test ran too slowly to show anything"
    finally:
        con.close()


def test_warm_reread_with_a_sas_token(azurite, big_blob):
    """A connection string with a SAS token instead of the account key: the lookup is authorized by the token, the
    warm read is served from the cache, an overwrite is seen, and the token appears in no message or stats."""
    sas = read_sas_token()
    con = azure_connect(azurite)
    try:
        con.execute(
            f"CREATE SECRET sas (TYPE azure, CONNECTION_STRING "
            f"'BlobEndpoint=http://{azurite.proxy_endpoint}/{ACCOUNT};SharedAccessSignature={sas}')"
        )
        apply(con, PARALLEL)
        key, data = "sas/blob.bin", random.Random(21).randbytes(3 << 20)
        azurite.put_blob(key, data)
        query = f"SELECT sha256(content) FROM read_blob('{azurite.url(key)}')"
        assert con.execute(query).fetchone()[0] == sha256(data)
        delta = _counter_delta(con, lambda: con.execute(query).fetchone())
        assert delta == {"reads": 0, "inner_opens": 0, "version_requests": 1}, delta
        replacement = random.Random(22).randbytes(3 << 20)
        azurite.put_blob(key, replacement)
        assert con.execute(query).fetchone()[0] == sha256(replacement), "stale bytes after an overwrite"
        text = str(con.execute("SELECT * FROM httpfs2_stats()").fetchall())
        text += _error_of(con, f"SELECT * FROM read_parquet('{azurite.url('sas/missing.parquet')}')")[1]
        assert sas.split("sig=")[1].split("&")[0] not in text
    finally:
        con.close()


def test_version_lookup_is_in_the_http_log_without_its_signature(azurite, big_blob):
    """DuckDB's HTTP log records URLs and headers: httpfs2's own request is there, as the azure extension's are, and
    its signed Authorization header is not."""
    key, data = big_blob
    con = azure_connect(azurite, httpfs=True)
    try:
        apply(con, PARALLEL)
        con.execute("CALL enable_logging('HTTP')")
        assert con.execute(f"SELECT sha256(content) FROM read_blob('{azurite.url(key)}')").fetchone()[0] == sha256(data)
        assert az_stats(con)["version_requests"] >= 1
        logs = con.execute("SELECT string_agg(message, ' ') FROM duckdb_logs WHERE type = 'HTTP'").fetchone()[0] or ""
        assert key in logs, "the azure extension's own requests are logged: the log is live"
        # httpfs2's request is told apart by the service version it asks for.
        assert STORAGE_API_VERSION in logs and "REDACTED" in logs, "httpfs2's lookup is in the log"
        for fragment in ("SharedKey", ACCOUNT_KEY[:16]):
            assert fragment not in logs
    finally:
        con.close()


def test_secrets_httpfs2_cannot_sign_for_fall_back_to_the_azure_extension(azurite, big_blob):
    """A wrong account key: the lookup is refused (403), so httpfs2 leaves the open to the azure extension, whose
    error the user sees, exactly as without httpfs2."""
    key, _ = big_blob
    wrong = azurite.connection_string().replace(ACCOUNT_KEY, "A" * 86 + "==")
    errors = []
    for with_httpfs2 in (True, False):
        con = azure_connect(azurite, httpfs2=with_httpfs2)
        try:
            con.execute("DROP SECRET azrig")
            con.execute(f"CREATE SECRET wrong (TYPE azure, CONNECTION_STRING '{wrong}')")
            if with_httpfs2:
                apply(con, PARALLEL)
            errors.append(_error_of(con, f"SELECT * FROM read_blob('{azurite.url(key)}')"))
        finally:
            con.close()
    assert errors[0][0] == errors[1][0]
    assert errors[0][1] == errors[1][1]


# --- errors ---


def _error_of(con, sql):
    try:
        con.execute(sql).fetchall()
    except duckdb.Error as error:
        return type(error).__name__, str(error)
    return None


ERROR_QUERIES = [
    "SELECT * FROM read_parquet('az://test/missing/nothing.parquet')",
    "SELECT * FROM read_csv('az://test/missing.csv')",
    "SELECT * FROM read_parquet('az://test/missing/*.parquet')",
    "SELECT * FROM read_parquet('az://no-such-container/x.parquet')",
    "ATTACH 'az://test/missing.duckdb' AS missing_db (READ_ONLY)",
]


@pytest.mark.parametrize("sql", ERROR_QUERIES)
def test_missing_blob_error_is_the_same_as_native(az_con, native_az_con, sql):
    native = _error_of(native_az_con, sql)
    wrapped = _error_of(az_con, sql)
    assert native is not None, "the native query did not fail: the test would prove nothing"
    assert wrapped == native


def test_open_of_a_missing_blob_raises_azure_not_found(azurite, az_con):
    with pytest.raises(duckdb.IOException) as error:
        az_con.execute("SELECT httpfs2_read_range(?, 0, 10)", [azurite.url("missing.bin")])
    assert "BlobNotFound" in str(error.value)


def _credential_fragments(azurite):
    return [ACCOUNT_KEY, ACCOUNT_KEY[:16], ACCOUNT_KEY[-16:], "AccountKey=", azurite.connection_string()]


def test_no_credential_in_errors_or_stats(azurite, az_con, big_blob):
    key, _ = big_blob
    messages = []
    for sql in ERROR_QUERIES:
        messages.append(_error_of(az_con, sql)[1])
    # (A range that starts past the end fails with InvalidRange; one that only crosses the end does not fail in
    # the azure extension 1.5.5: it returns a short read, see docs/azure.md.)
    for args in ([azurite.url("missing.bin"), 0, 10], [azurite.url(key), BIG_SIZE + 5, 4 << 20]):
        messages.append(_error_of_params(az_con, "SELECT httpfs2_read_range(?, ?, ?)", args))
    # A wrong key: authentication fails; neither the wrong nor the right key may be echoed.
    wrong_key = "A" * 86 + "=="
    bad = azure_connect(azurite)
    try:
        bad.execute("DROP SECRET azrig")
        bad.execute(
            f"CREATE SECRET wrong (TYPE azure, CONNECTION_STRING "
            f"'{azurite.connection_string().replace(ACCOUNT_KEY, wrong_key)}')"
        )
        apply(bad, PARALLEL)
        messages.append(_error_of_params(bad, "SELECT httpfs2_read_range(?, ?, ?)", [azurite.url(key), 0, 8 << 20]))
        messages.append(_error_of(bad, f"SELECT * FROM read_blob('{azurite.url(key)}')")[1])
        messages.append(_error_of(bad, f"SELECT * FROM read_parquet('{azurite.url('copy/*.parquet')}')")[1])
        stats_text = str(bad.execute("SELECT * FROM httpfs2_stats()").fetchall())
    finally:
        bad.close()
    # And, with the connection that read successfully:
    az_con.execute("SELECT sha256(content) FROM read_blob(?)", [azurite.url(key)]).fetchall()
    stats_text += str(az_con.execute("SELECT * FROM httpfs2_stats()").fetchall())
    assert all(messages), messages
    assert any("AuthorizationFailure" in m or "authenticate" in m for m in messages), messages
    for fragment in _credential_fragments(azurite) + [wrong_key, wrong_key[:16]]:
        for message in messages:
            assert fragment not in message, f"credential fragment in an error message: {message}"
        assert fragment not in stats_text, "credential fragment in httpfs2_stats()"


def _error_of_params(con, sql, params):
    try:
        con.execute(sql, params).fetchall()
    except duckdb.Error as error:
        return str(error)
    raise AssertionError(f"{sql} {params} did not fail")


# --- stats ---


def test_stats_row_for_azure_shows_reads(azurite, az_con, big_blob):
    key, data = big_blob
    az_con.execute("CALL httpfs2_reset_stats()")
    az_con.execute("SELECT sha256(content) FROM read_blob(?)", [azurite.url(key)]).fetchall()
    az_con.execute("SELECT httpfs2_read_range(?, 0, 1000)", [azurite.url(key)]).fetchall()
    counters = az_stats(az_con)
    assert counters["files_opened"] >= 2
    assert counters["reads"] >= 2
    assert counters["bytes_read"] >= len(data) + 1000
    assert counters["reads_split"] >= 1 and counters["reads_passed_through"] >= 1
    others = az_con.execute("SELECT filesystem FROM httpfs2_stats()").fetchall()
    assert (AZURE_FS,) in others


def test_a_throttled_version_probe_is_waited_out_and_counted(azurite):
    """Azure throttles an account past its request rate with 503 ServerBusy. The first GET the query sends is
    httpfs2's version probe, and the hostile proxy in front of Azurite answers it so: the probe goes through httpfs2's
    one retry policy (not httpfs's retry loop), is counted as throttled with the time its retry waited, and is sent
    again; the read is byte-exact and opens at the probed version (one lookup sent twice)."""
    key, data = "throttled/probe.bin", random.Random(31).randbytes(1 << 20)
    azurite.put_blob(key, data)
    with serve_hostile(LOOPBACK, azurite.blob_port) as proxy:
        con = azure_connect(httpfs=True)  # its only secret is the proxy's
        try:
            endpoint = f"http://{LOOPBACK}:{proxy.port}/{ACCOUNT}"
            con.execute(
                "CREATE SECRET throttled (TYPE azure, CONNECTION_STRING "
                f"'{azurite.connection_string().split(';BlobEndpoint=')[0]};BlobEndpoint={endpoint};')"
            )
            apply(con, PARALLEL)
            con.execute("SET enable_external_file_cache = false; SET http_retry_wait_ms = 50")
            proxy.reset()
            proxy.slow_down_kinds = {"get"}
            proxy.slow_down_every = 1_000_000  # the first GET only
            proxy.mode = "slow_down"
            before = az_stats(con)
            digest = con.execute(f"SELECT sha256(content) FROM read_blob('{azurite.url(key)}')").fetchone()[0]
            after = az_stats(con)
            counts = proxy.counts
        finally:
            con.close()
    delta = {name: after[name] - before[name] for name in ("throttled_answers", "version_requests")}
    assert counts.get("hit:slow_down:get", 0) == 1, counts
    assert digest == sha256(data)
    assert delta == {"throttled_answers": 1, "version_requests": 2}, delta
    assert after["throttled_wait_seconds"] > before["throttled_wait_seconds"], (before, after)

"""Servers and gateways that break HTTP's contract (rig/hostile_proxy.py, in front of versitygw or the local HTTP
server): every read gives the object's exact bytes or the right answer, or an error naming the file, within a time
limit; every upload gives the object byte-equal to the same COPY written locally, or an error naming the file and no
multipart upload left open. Natively (httpfs only) and with httpfs2, in its default configuration and with small
pieces (so that files of a few MiB split), with curl and httplib. The proxy's counters show the fault happened.

Each query runs on a worker thread with a hard time limit: past it, the query is interrupted and the test fails as a
hang. HOSTILE_SERVERS_REPORT=<file> appends one JSON line per test with its key figures."""

import os
import time
from urllib.parse import quote

import duckdb
import pytest

from helpers import DUCKDB_2, NativeHttpfs, enable, needs_registry_package, sha256, stats, uncached
from hostile import (
    BOUNDED,
    CLIENTS,
    HOSTILE,
    HTTP_TIMEOUT,
    HTTPFS2_IMPLS,
    IMPLS,
    INTERRUPT_LIMIT,
    PREFIX,
    QUERY_LIMIT,
    Db,
    assert_as_httpfs_alone_on_wrong_answers,
    assert_right_or_names_the_file,
    fail_on_hang,
    fixed_width_csv,
    names_the_file,
    natively_and_with,
    proxy_of,
    report,
    url_of,
)
from rig import duckdb_connect, ducklake_extension, serve_http
from test_uploads import open_multipart_uploads, stored, stored_keys

pytestmark = HOSTILE

BLOB_SQL = "SELECT sha256(content) FROM read_blob('{url}')"
CSV_SQL = "SELECT count(*), sum(i), sum(k), sum(hash(s)) FROM read_csv('{url}')"
# Fixed-width lines (zero-padded numbers): the columns are given, not sniffed.
FIXED_CSV_SQL = (
    "SELECT count(*), sum(i), sum(k), sum(hash(s)) FROM read_csv('{url}', header = true, "
    "columns = {{'i': 'BIGINT', 'k': 'INTEGER', 's': 'VARCHAR'}})"
)
PARQUET_SQL = "SELECT count(*), sum(i), sum(hash(s)) FROM read_parquet('{url}')"
PARQUET_COUNT_SQL = "SELECT count(*) FROM read_parquet('{url}')"
# About 12 MiB of CSV: three parts of 5 MiB, natively and with httpfs2.
UPLOAD_ROWS = "SELECT i, i * 7 % 1000 AS k, md5(i::VARCHAR) AS s FROM range(300000) r(i)"
PART = 5 << 20
# httpfs's error for a range answer of another length than asked (RangeRequestNotSupportedException).
RANGES_IGNORED = "Content-Length from server mismatches requested range"


# --- reads ---


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("name", ["blob4.bin", "data.csv"])
@pytest.mark.parametrize("scheme", ["s3", "http"])
def test_ignore_range_gives_the_right_answer_from_few_full_downloads(
    request, connect, rig, data, hostile_s3, hostile_http, scheme, name, impl, client
):
    """A server that answers every range with 200 and the whole object (`python -m http.server`): httpfs falls back
    to a full download; the answer is right, and httpfs2 does not download the whole object per piece."""
    proxy = proxy_of(hostile_s3, hostile_http, scheme)
    db = connect(impl, client)
    sql = (BLOB_SQL if name.endswith(".bin") else CSV_SQL).format(url=url_of(rig, hostile_http, scheme, name))
    expected = [(data.sha(name),)] if name.endswith(".bin") else data.answer(CSV_SQL, name)
    proxy.mode = "ignore_range"
    outcome = db.run(sql, proxy=proxy)
    counts = proxy.counts
    proxy.mode = "normal"
    full = counts.get("full_body_gets", 0)
    report(request, outcome=outcome.text(), seconds=round(outcome.seconds, 2), full_body_gets=full, counts=counts)
    fail_on_hang(outcome, sql)
    assert counts.get("hit:ignore_range", 0) >= 1, counts
    if impl == "native" and not NativeHttpfs.falls_back_on_ignored_ranges(scheme):
        # httpfs 2a6481d on DuckDB 2.0 fails on s3:// where 1.5.5's falls back to a full download; httpfs2 falls back.
        assert outcome.error is not None and RANGES_IGNORED in str(outcome.error), outcome.text()
        return
    assert outcome.error is None, outcome.text()
    assert outcome.rows == expected, "wrong answer"
    if impl != "native" or NativeHttpfs.FEW_FULL_BODIES_ON_IGNORED_RANGES:
        assert full <= 3, f"{full} full-body GETs of one {name}: {counts}"


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("name", ["blob4.bin", "data.parquet"])
def test_ignore_range_without_fallback_fails_with_the_force_download_hint(
    request, connect, rig, data, hostile_s3, name, impl, client
):
    """`auto_fallback_to_full_download = false`: a read that needs a range fails with httpfs's hint to set
    force_download (a read of the whole object from its start is answered right by a whole body: no error needed)."""
    db = connect(impl, client)
    db.con.execute("SET auto_fallback_to_full_download = false")
    url = rig.url(PREFIX + name)
    sql = (BLOB_SQL if name.endswith(".bin") else PARQUET_SQL).format(url=url)
    expected = [(data.sha(name),)] if name.endswith(".bin") else data.answer(PARQUET_SQL, name)
    hostile_s3.mode = "ignore_range"
    outcome = db.run(sql, proxy=hostile_s3)
    counts = hostile_s3.counts
    report(request, outcome=outcome.text(), seconds=round(outcome.seconds, 2), counts=counts)
    fail_on_hang(outcome, sql)
    assert counts.get("hit:ignore_range", 0) >= 1, counts
    if outcome.error is None:
        assert name.endswith(".bin"), "a parquet scan needs ranges: it cannot succeed without a full download"
        assert outcome.rows == expected, "wrong bytes"
    else:
        assert "force_download" in str(outcome.error), outcome.text()


READS = {"blob4.bin": BLOB_SQL, "blob64.bin": BLOB_SQL, "data.csv": CSV_SQL, "data.parquet": PARQUET_SQL}


def expected_of(data, name: str) -> list:
    return [(data.sha(name),)] if name.endswith(".bin") else data.answer(READS[name], name)


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("name", sorted(READS))
def test_shifted_ranges_honestly_labelled_give_right_bytes(request, connect, rig, data, hostile_s3, name, impl, client):
    """A gateway that serves other bytes than the range asked (4 KiB further), and says so in Content-Range:
    httpfs2 refuses the answer and reads the file from one GET of the whole object, so its answer is right; httpfs
    alone is right only where its reads end at the object's last byte (never shifted), and elsewhere (a Parquet
    scan's column chunks) takes the wrong bytes as they come: right or an error naming the file is asked of it only
    where it reads whole, and so of the reads httpfs2 leaves to it."""
    db = connect(impl, client)
    sql = READS[name].format(url=rig.url(PREFIX + name))
    expected = expected_of(data, name)
    hostile_s3.mode = "shift_range"
    outcome = db.run(sql, proxy=hostile_s3)
    counts = hostile_s3.counts
    hostile_s3.mode = "normal"
    shifted = counts.get("hit:shift_range", 0)
    right = outcome.rows == expected
    refused = stats(db.con)["range_answers_refused"] if impl != "native" else None
    report(request, outcome=outcome.text(), seconds=round(outcome.seconds, 2), right=right, shifted=shifted)
    fail_on_hang(outcome, sql)
    # httpfs2 with its latency gate shut (as on a LAN) leaves a Parquet scan's small reads to httpfs, unchecked.
    if impl == "native" or (impl == "httpfs2" and name == "data.parquet"):
        if name != "data.parquet":
            wrong = f"wrong bytes served as right ({shifted} shifted)"
            assert_as_httpfs_alone_on_wrong_answers(outcome, right, name, wrong)
        return
    assert outcome.error is None, outcome.text()
    assert right, f"wrong bytes served as right ({shifted} GETs shifted)"
    if impl == "httpfs2_small":
        # Its pieces met the shifting gateway: refused, then read whole.
        assert shifted >= 1 and refused >= 1, (counts, refused)


@pytest.mark.parametrize("client", ["curl"])
@pytest.mark.parametrize("impl", ["native", "httpfs2_small"])
def test_shifted_ranges_labelled_as_asked_are_undetectable(request, connect, rig, data, hostile_s3, impl, client):
    """The same gateway lying in Content-Range (it claims the range asked): no header tells, and httpfs natively
    reads the wrong bytes too (its parquet scan fails or answers wrong). httpfs2 can do no better: not asserted."""
    db = connect(impl, client)
    sql = PARQUET_SQL.format(url=rig.url(PREFIX + "data.parquet"))
    expected = data.answer(PARQUET_SQL, "data.parquet")
    hostile_s3.mode = "shift_range_lying"
    outcome = db.run(sql, proxy=hostile_s3)
    counts = hostile_s3.counts
    shifted = counts.get("hit:shift_range_lying", 0)
    report(
        request,
        outcome=outcome.text(),
        seconds=round(outcome.seconds, 2),
        right=outcome.rows == expected,
        shifted=shifted,
    )
    fail_on_hang(outcome, sql)
    assert shifted >= 1, counts
    if impl != "native":
        pytest.skip(f"undetectable by headers; httpfs2: {outcome.text()}, right answer: {outcome.rows == expected}")
    assert outcome.rows != expected, "the lying gateway did not change what httpfs read"


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("name", ["blob4.bin", "blob64.bin"])
def test_a_range_blind_cache_gives_right_bytes(request, connect, rig, data, hostile_s3, name, impl, client):
    """A cache in front of the store that keys on the path only: every ranged GET after the first gets the first
    answer (its status, headers and body) again."""
    db = connect(impl, client)
    sql = BLOB_SQL.format(url=rig.url(PREFIX + name))
    hostile_s3.mode = "range_blind_cache"
    outcome = db.run(sql, proxy=hostile_s3)
    counts = hostile_s3.counts
    right = outcome.rows == [(data.sha(name),)]
    replays = counts.get("hit:range_blind_cache", 0)
    report(request, outcome=outcome.text(), seconds=round(outcome.seconds, 2), right=right, replays=replays)
    fail_on_hang(outcome, sql)
    if impl == "native":
        assert_as_httpfs_alone_on_wrong_answers(
            outcome, right, name, f"wrong bytes served as right ({replays} replays)"
        )
    else:  # refused, then read from one GET of the whole object, which the cache does not replay
        assert outcome.error is None and right, f"{outcome.text()}, right: {right} ({replays} replays)"


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("impl", HTTPFS2_IMPLS)
def test_a_body_that_never_comes_fails_as_soon_as_natively(request, connect, rig, data, hostile_s3, impl, client):
    """Every GET's headers come, then nothing: with http_timeout 1 s and one retry, the read fails within about
    (retries + 1) x timeout, and httpfs2 takes at most one timeout more than httpfs alone."""
    sql = BLOB_SQL.format(url=rig.url(PREFIX + "blob4.bin"))
    outcomes, seconds, hits = natively_and_with(
        impl, connect, client, hostile_s3, "stall_body", sql, 30, 4 * HTTP_TIMEOUT, setup=BOUNDED
    )
    assert hits >= 1
    report(request, native_seconds=seconds["native"], httpfs2_seconds=seconds[impl], error=outcomes[impl].text())
    for name, outcome in outcomes.items():
        assert outcome.error is not None, f"{name}: a body that never came was read"
        assert names_the_file(outcome, "blob4.bin"), f"{name}: {outcome.text()}"
    assert seconds["native"] <= 2 * HTTP_TIMEOUT + 3, seconds
    assert seconds[impl] <= seconds["native"] + HTTP_TIMEOUT + 0.5, seconds


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("impl", HTTPFS2_IMPLS)
def test_a_tail_get_that_stalls_costs_at_most_a_few_seconds(request, connect, rig, data, hostile_s3, impl, client):
    """A server that never answers a suffix range (`bytes=-N`: httpfs never asks one, httpfs2's first open of a
    parquet file does): the answer is right, and with httpfs's default http_timeout (30 s) httpfs2 does not wait for
    it: the whole query stays under 6 s, at most 5 s more than natively. The proxy closes a stalled GET after 8 s."""
    sql = PARQUET_COUNT_SQL.format(url=rig.url(PREFIX + "data.parquet"))
    expected = data.answer(PARQUET_COUNT_SQL, "data.parquet")
    outcomes, seconds, stalls = natively_and_with(impl, connect, client, hostile_s3, "stall_tail", sql, 45, 8.0)
    report(
        request,
        native_seconds=seconds["native"],
        httpfs2_seconds=seconds[impl],
        httpfs2_tail_stalls=stalls,
        outcome=outcomes[impl].text(),
    )
    for name, outcome in outcomes.items():
        assert outcome.error is None, f"{name}: {outcome.text()}"
        assert outcome.rows == expected, f"{name}: wrong answer"
    assert seconds[impl] < 6, f"httpfs2 waited for a tail that never came: {seconds} ({stalls} stalled tails)"
    # The tail's own deadline (2 s, S3Tails), its hedge's (sent at the hedging deadline, at most half of that, and
    # stalled as well: up to 3 s in all), and the reads after it: under AddressSanitizer on a loaded 2-core machine
    # those reads took up to 1.2 s (4.24 s in all seen in CI).
    assert seconds[impl] <= seconds["native"] + 5, seconds


# A GET whose answer begins this late is a straggler: far past any deadline hedging learns on the rig.
STRAGGLER_SECONDS = 20.0
# A hedged read ends well before a stalled GET would have answered: the deadline learnt on the rig (0.15 s; up to 4 s
# on a 2-core machine loaded by two builds, where two stalls one after another took past 7 s) plus the read.
HEDGED_LIMIT = STRAGGLER_SECONDS / 2


def read_with_stragglers(
    db, proxy, sql: str, stall_every: int, limit: float, stall_seconds=STRAGGLER_SECONDS, most=None, kinds=None
):
    """Runs `sql` while every stall_every-th range first asked (of the GETs of `kinds`, "tail" or "get", when given;
    the first `most` of them, when given) waits stall_seconds before its answer begins; the outcome, the proxy's
    counts and httpfs2's stats."""
    db.con.execute("CALL httpfs2_reset_stats()")
    proxy.reset()
    proxy.stall_seconds = stall_seconds
    proxy.stall_every = stall_every
    proxy.stall_max = most
    proxy.stall_kinds = kinds
    proxy.mode = "stall_first_byte"
    outcome = db.run(sql, limit=limit, proxy=proxy)
    counts = proxy.counts
    proxy.mode = "normal"
    return outcome, counts, stats(db.con)


# (impl, file, query, every how many distinct ranges one stalls): a 64 MiB split read, and a parquet scan in small
# pieces (with read-ahead), each with at most STRAGGLERS stalled GETs: within the hedges' burst (HedgePolicy::BURST,
# 4). More stalls close together than the burst wait out their stall by design: the budget grows only as GETs go out
# (5% of them), and a read held by its stalled pieces sends few. How many GETs a read makes depends on the plan the
# cost model makes of the latencies it saw (14-200 here), hence a cap rather than a share.
STRAGGLERS = 2
STRAGGLER_READS = [
    ("httpfs2", "blob64.bin", "SELECT sha256(content) FROM read_blob('{url}')", 4),
    ("httpfs2_small", "data.parquet", PARQUET_SQL, 25),
]
# DuckDB 2.0 cuts the 64 MiB read into 2 MiB reads of its own, which httpfs2 with its latency gate shut (as on a LAN)
# leaves to httpfs: there the split read is httpfs2's where the gate is open, as at a store's latency.
GATE_OPEN_ON_2_0 = {"httpfs2_parallel_read_min_latency_ms": 0} if DUCKDB_2 else {}


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(("impl", "name", "sql", "every"), STRAGGLER_READS)
def test_gets_whose_answer_begins_late_are_hedged(
    request, connect, rig, data, hostile_s3, impl, name, sql, every, client
):
    """Object storage's tail: a few GETs answer many times later than the others. A range GET of a sub-read or
    read-ahead whose answer has not begun by the deadline learnt from the latencies just seen is sent again on another
    connection, and the first whole, checked answer is used: the read is exact and ends long before the stalled GETs
    would have answered (the query's hard limit is under the stall); the stalled ones are dropped."""
    url = rig.url(PREFIX + name)
    expected = data.answer(sql, name) if name != "blob64.bin" else [(data.sha(name),)]
    db = connect(impl, client)
    for setting, value in GATE_OPEN_ON_2_0.items():
        db.con.execute(f"SET {setting} = {value}")
    outcome, counts, counters = read_with_stragglers(
        db, hostile_s3, sql.format(url=url), every, HEDGED_LIMIT, most=STRAGGLERS
    )
    report(
        request,
        seconds=round(outcome.seconds, 2),
        stalled=counts.get("hit:stall_first_byte", 0),
        gets=counts.get("object_gets", 0),
        hedges_sent=counters["hedges_sent"],
        hedges_won=counters["hedges_won"],
        hedge_deadline_ms=counters["hedge_deadline_ms"],
        passed_through=counters["reads_passed_through"],
        split=counters["reads_split"],
        checked=counters["reads_checked"],
        outcome=outcome.text(),
    )
    assert counts.get("hit:stall_first_byte", 0) >= 1, counts
    if DUCKDB_2 and outcome.hung and name == "blob64.bin":
        # Seen in 1 of 14 runs on 2.0.1 (2026-11-28, a loaded machine), never on 1.5.5: the read waits out a stall with
        # no read passed to httpfs (reads_passed_through 0) and the hedges' whole burst (4) sent and won, most likely
        # on GETs the loaded machine made late, so that the stalled GET's hedge waited for budget (by design: the
        # budget grows only as GETs go out, and a read held by its stalled piece sends few).
        pytest.xfail(f"DuckDB 2.0: a stalled GET not hedged: {outcome.text()}")
    fail_on_hang(outcome, f"{name} with stalled GETs, hedged")
    assert outcome.error is None, outcome.text()
    assert outcome.rows == expected
    assert counters["hedges_sent"] >= 1
    assert counters["hedges_won"] >= 1
    assert counters["hedges_won"] <= counters["hedges_sent"]


@pytest.mark.parametrize("client", CLIENTS)
def test_with_hedging_off_a_read_waits_for_its_stalled_get(request, connect, rig, data, hostile_s3, client):
    """httpfs2_hedge_reads = false: no GET is sent twice, and the split read waits for the stalled one's answer (it
    is right, only late)."""
    db = connect("httpfs2", client)
    db.con.execute("SET httpfs2_hedge_reads = false")
    sql = f"SELECT sha256(content) FROM read_blob('{rig.url(PREFIX + 'blob64.bin')}')"
    # Stalls shorter than the hedged tests': a dozen of them in 2.0's 2 MiB reads come in waves, within QUERY_LIMIT.
    stall = STRAGGLER_SECONDS / 2
    outcome, counts, counters = read_with_stragglers(db, hostile_s3, sql, 3, QUERY_LIMIT, stall)
    report(request, seconds=round(outcome.seconds, 2), stalled=counts.get("hit:stall_first_byte", 0))
    fail_on_hang(outcome, "blob64.bin with a stalled GET, not hedged")
    assert counts.get("hit:stall_first_byte", 0) >= 1, counts
    assert outcome.error is None, outcome.text()
    assert outcome.rows == [(data.sha("blob64.bin"),)]
    assert counters["hedges_sent"] == 0
    assert outcome.seconds >= stall


@pytest.mark.parametrize("client", CLIENTS)
def test_without_stragglers_hedges_are_rare(request, connect, rig, data, hostile_s3, client):
    """A store whose answers all begin in time: repeated scans and split reads in small pieces (with read-ahead) send
    hedges for few of their GETs: never more than the policy's budget (HedgePolicy: 5% of GETs and a burst of 4).
    The issue's target, under 1%, is a bench figure: on this shared machine a GET now and then takes past the
    floor (seen in CI with a 500 ms floor: 6 hedges in 533 GETs, 1.1%; 2 in 622 and 2 in 529 on a quieter one)."""
    db = connect("httpfs2_small", client)
    db.con.execute("CALL httpfs2_reset_stats()")
    hostile_s3.reset()
    expected = data.answer(PARQUET_SQL, "data.parquet")
    for _ in range(5):
        outcome = db.run(PARQUET_SQL.format(url=rig.url(PREFIX + "data.parquet")), proxy=hostile_s3)
        fail_on_hang(outcome, "data.parquet")
        assert outcome.rows == expected
        outcome = db.run(BLOB_SQL.format(url=rig.url(PREFIX + "blob4.bin")), proxy=hostile_s3)
        fail_on_hang(outcome, "blob4.bin")
        assert outcome.rows == [(data.sha("blob4.bin"),)]
    gets = hostile_s3.counts.get("object_gets", 0)
    hedges = stats(db.con)["hedges_sent"]
    report(request, gets=gets, hedges_sent=hedges)
    assert gets >= 300, "too few GETs to tell the budget apart"
    assert hedges <= 0.05 * gets + 4, (hedges, gets)


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_an_object_without_etag_replaced_mid_scan_gives_one_version(request, connect, rig, hostile_s3, tmp_path, impl):
    """A file written straight into versitygw's bucket folder has no ETag. It is replaced by another of the same
    size (its mtime 5 s later, so Last-Modified changes) just before the scan's second GET of it: the answer is
    one version's or an error, never a mix of both."""
    key = PREFIX + "noetag/data.csv"
    path = rig._workdir / "data" / rig.bucket / key
    path.parent.mkdir(parents=True, exist_ok=True)
    versions = [fixed_width_csv(seed, 100_000) for seed in (0, 1)]
    assert len(versions[0]) == len(versions[1])
    answers = []
    for number, version in enumerate(versions):
        local = tmp_path / f"v{number}.csv"
        local.write_bytes(version)
        answers.append(duckdb.connect().execute(FIXED_CSV_SQL.format(url=local)).fetchall())
    path.write_bytes(versions[0])
    assert "ETag" not in rig.s3.head_object(Bucket=rig.bucket, Key=key)

    def replace():
        mtime = path.stat().st_mtime
        staged = path.with_name("staged.tmp")
        staged.write_bytes(versions[1])
        os.utime(staged, (mtime + 5, mtime + 5))
        os.replace(staged, path)

    db = connect(impl)
    db.con.execute("SET threads = 2")
    hostile_s3.on_get(2, replace)
    outcome = db.run(FIXED_CSV_SQL.format(url=rig.url(key)), proxy=hostile_s3)
    counts = hostile_s3.counts
    which = answers.index(outcome.rows) if outcome.rows in answers else None
    report(request, outcome=outcome.text(), version=which, replaced=counts.get("hooks_called", 0), counts=counts)
    fail_on_hang(outcome, "the scan")
    mix = f"a mix of two versions: {outcome.rows} (replaced: {counts.get('hooks_called')})"
    if impl == "native" and not NativeHttpfs.RIGHT_OR_NAMES_THE_FILE_ON_WRONG_ANSWERS:
        return  # httpfs 2a6481d alone may join the two versions (seen), or not, as the scan's timing falls
    assert_right_or_names_the_file(outcome, which is not None, "noetag/data.csv", mix)


@pytest.fixture(scope="module")
def listed_files(rig, tmp_path_factory):
    """40 small parquet files under one prefix."""
    folder = tmp_path_factory.mktemp("hostile-list")
    local = duckdb.connect()
    for number in range(40):
        path = folder / f"f{number:02d}.parquet"
        local.execute(f"COPY (SELECT {number} AS n, range AS i FROM range(100)) TO '{path}' (FORMAT parquet)")
        rig.s3.upload_file(str(path), rig.bucket, f"{PREFIX}list/f{number:02d}.parquet")
    return f"s3://{rig.bucket}/{PREFIX}list/*"


@pytest.mark.parametrize("impl", sorted(IMPLS))
def test_a_glob_opens_none_of_the_files_it_lists(request, connect, hostile_s3, listed_files, impl):
    db = connect(impl)
    outcome = db.run(f"SELECT count(*) FROM glob('{listed_files}')", proxy=hostile_s3)
    time.sleep(0.5)  # a fetch started by the listing would still be on its way
    counts = hostile_s3.counts
    report(
        request,
        outcome=outcome.text(),
        file_gets=counts.get("object_gets", 0),
        file_heads=counts.get("HEAD", 0),
        listings=counts.get("listings", 0),
    )
    fail_on_hang(outcome, "the glob")
    assert outcome.error is None, outcome.text()
    assert outcome.rows == [(40,)]
    assert counts.get("listings", 0) >= 1, counts
    assert counts.get("object_gets", 0) == 0, f"a glob GET files it only lists: {counts}"


# --- uploads ---


def abort_open_uploads(rig):
    for upload in open_multipart_uploads(rig):
        rig.s3.abort_multipart_upload(Bucket=rig.bucket, Key=upload["Key"], UploadId=upload["UploadId"])


def writer(connect, impl: str, client: str) -> Db:
    """A connection that writes ROWS as three parts of 5 MiB: httpfs2's uploader, or httpfs's own."""
    db = connect("native" if impl == "native" else "httpfs2", client)
    db.con.execute("SET threads = 1")  # one writer: the bytes of a COPY do not depend on scheduling
    if impl == "native":
        db.con.execute("SET s3_uploader_max_filesize = '50GB'")  # 50 GB / 10000 parts: parts of 5 MiB
    else:
        db.con.execute(f"SET httpfs2_write_enabled = true; SET httpfs2_write_part_size_bytes = {PART}")
    return db


@pytest.fixture(scope="module")
def upload_local(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile-upload") / "rows.csv"
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.execute(f"COPY ({UPLOAD_ROWS}) TO '{path}' (FORMAT csv)")
    assert path.stat().st_size > 2 * PART
    return path.read_bytes()


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize(
    "mode", ["upload_part_no_etag", "complete_error_body", "complete_lost_404", "head_forbidden+complete_lost_404"]
)
def test_an_upload_answered_wrongly_gives_the_object_or_an_error_and_no_open_upload(
    request, connect, rig, hostile_s3, upload_local, mode, client
):
    """An UploadPart answered without an ETag; a CompleteMultipartUpload answered 200 with an <Error> body; a
    completion that took effect and whose answer was lost, a repeated one answered NoSuchUpload (and HEAD refused
    as well): the COPY succeeds with the object byte-equal to the local COPY, or fails naming the file and leaves
    no multipart upload open. httpfs2's uploader only: httpfs's own leaves the upload open in the first three cases
    and names no file (seen on this rig), so it is no model here."""
    impl = "httpfs2"
    abort_open_uploads(rig)
    key = f"{PREFIX}uploads/{mode.replace('+', '-')}-{impl}-{client}.csv"
    db = writer(connect, impl, client)
    db.con.execute(BOUNDED)
    hostile_s3.mode = mode
    outcome = db.run(f"COPY ({UPLOAD_ROWS}) TO '{rig.url(key)}' (FORMAT csv)", proxy=hostile_s3)
    counts = hostile_s3.counts
    hostile_s3.mode = "normal"
    left_open = [upload["Key"] for upload in open_multipart_uploads(rig)]
    try:
        equal = sha256(stored(rig, key)) == sha256(upload_local)
    except rig.s3.exceptions.NoSuchKey:
        equal = None
    hits = {name: value for name, value in counts.items() if name.startswith("hit:")}
    report(request, outcome=outcome.text(), object_equal=equal, uploads_left_open=len(left_open), hits=hits)
    fail_on_hang(outcome, "the COPY")
    assert hits, f"the fault never happened: {counts}"
    assert_right_or_names_the_file(outcome, equal, key, "the COPY succeeded but the object is not what it wrote")
    assert left_open == [], f"multipart uploads left open: {left_open}"


@pytest.mark.parametrize("client", CLIENTS)
def test_parts_answered_slow_down_are_retried_after_a_wait_and_slow_the_uploads(
    request, connect, rig, hostile_s3, upload_local, client
):
    """S3 answers a client past its request rate 503 SlowDown. UploadParts answered so reach httpfs2's uploader (not
    retried at once inside httpfs): each is counted and waits before it is sent again; a burst of them (the first
    twelve part attempts refused: the prefix past its pace) closes the prefix's gate and halves the parts the
    database's uploads send at once; the COPY completes byte-exact and leaves no multipart upload."""
    abort_open_uploads(rig)
    key = f"{PREFIX}uploads/slow-down-{client}.csv"
    db = writer(connect, "httpfs2", client)
    db.con.execute(BOUNDED)
    # httpfs's default retries, within which a throttled part is sent again: fewer answers slow down than that.
    db.con.execute("SET http_retries = 3; SET http_retry_wait_ms = 50")
    streams_before = stats(db.con)["upload_streams"]
    hostile_s3.reset()
    hostile_s3.slow_down_parts = 12
    hostile_s3.mode = "part_slow_down"
    outcome = db.run(f"COPY ({UPLOAD_ROWS}) TO '{rig.url(key)}' (FORMAT csv)", proxy=hostile_s3)
    counts = hostile_s3.counts
    hostile_s3.mode = "normal"
    hostile_s3.slow_down_parts = 4
    fail_on_hang(outcome, "the COPY")
    counters = stats(db.con)
    report(
        request,
        outcome=outcome.text(),
        slowed=counts.get("hit:part_slow_down", 0),
        **{name: counters[name] for name in ("throttled_answers", "throttled_wait_seconds", "upload_streams")},
    )
    assert outcome.error is None, outcome.text()
    assert sha256(stored(rig, key)) == sha256(upload_local)
    assert counts.get("hit:part_slow_down", 0) >= 1, counts
    assert counters["throttled_answers"] == counts["hit:part_slow_down"], (counters, counts)
    assert counters["throttled_wait_seconds"] > 0
    assert counters["upload_streams"] < max(streams_before, 2), (streams_before, counters["upload_streams"])
    assert open_multipart_uploads(rig) == []


def expire_the_session_token(db, rig, hostile_s3, when):
    """Gives `db` the rig's secret with session token "token-1", and the proxy the mode that refuses it (400
    ExpiredToken) from the moment `when(expire)` calls `expire` (at a hook of the proxy's), which first replaces the
    secret with one of token "token-2" from another connection of the database, as a user's other thread would."""
    secret = rig.secret_sql(endpoint=hostile_s3.endpoint).replace(")", ", SESSION_TOKEN '{}')")
    db.con.execute(secret.format("token-1"))
    replacer = db.con.cursor()

    def expire():
        replacer.execute(secret.format("token-2"))
        hostile_s3.expired_tokens = {"token-1"}

    hostile_s3.reset()
    hostile_s3.mode = "expiring_token"
    when(expire)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_read_that_outlives_its_session_token_follows_the_secret(request, connect, rig, hostile_s3, data, client):
    """STS credentials last an hour or less, a long scan longer. The secret's session token expires mid-read (the
    store answers 400 ExpiredToken to requests signed with it) after the user replaced the secret with fresh
    credentials: httpfs2's requests so refused look the secret up again and are signed and sent again, once, and the
    read is byte-exact; the refreshed credentials appear in no stat or error."""
    results = {}
    for impl in ("native", "httpfs2_small"):
        db = connect(impl, client)
        expire_the_session_token(db, rig, hostile_s3, lambda expire: hostile_s3.on_get(3, expire))
        outcome = db.run(f"SELECT sha256(content) FROM read_blob('{rig.url(PREFIX + 'blob64.bin')}')", proxy=hostile_s3)
        counts = hostile_s3.counts
        hostile_s3.mode = "normal"
        fail_on_hang(outcome, "the read")
        refreshed = stats(db.con)["credentials_refreshed"] if impl != "native" else None
        results[impl] = (outcome, counts.get("hit:expiring_token", 0), refreshed)
    report(request, **{impl: f"{o.text()}, refused {r}, refreshed {f}" for impl, (o, r, f) in results.items()})
    outcome, refused, refreshed = results["httpfs2_small"]
    assert refused >= 1, "the token never expired during the read"
    assert outcome.error is None, outcome.text()
    assert outcome.rows == [(data.sha("blob64.bin"),)]
    assert refreshed >= 1
    assert "token-2" not in str(stats(db.con))


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("expire_after_part", [2, 3])
def test_a_copy_that_outlives_its_session_token_follows_the_secret(
    request, connect, rig, hostile_s3, upload_local, client, expire_after_part
):
    """The session token a COPY's upload was begun with expires after its second part, or after its last (the store
    answers 400 ExpiredToken to the requests signed with it: the next parts, the completion), after the user replaced
    the secret with fresh credentials. httpfs2's requests so refused look the secret up again and are signed and sent
    again within the same upload (its id kept): the object is byte-equal to the local COPY and no multipart upload is
    left open; the fresh token appears in no stat. httpfs's own uploader is reported beside it. (Expired after the
    last of its 3 parts, the completion is the first request refused: with httpfs 2a6481d's httplib client, DuckDB
    2.0, its answer is in the request's buffer while the response carries the request's own body, and it was read as
    a plain refusal; seen in 2 of 15 runs of the second-part case, where parts 2 and 3 can pass before the expiry.)"""
    results = {}
    for impl in ("native", "httpfs2"):
        abort_open_uploads(rig)
        key = f"{PREFIX}uploads/expiring-token-{impl}-{client}.csv"
        db = writer(connect, impl, client)
        expire_the_session_token(db, rig, hostile_s3, lambda expire: hostile_s3.on_part(expire_after_part, expire))
        outcome = db.run(f"COPY ({UPLOAD_ROWS}) TO '{rig.url(key)}' (FORMAT csv)", proxy=hostile_s3)
        counts = hostile_s3.counts
        hostile_s3.mode = "normal"
        fail_on_hang(outcome, "the COPY")
        try:
            equal = sha256(stored(rig, key)) == sha256(upload_local)
        except rig.s3.exceptions.NoSuchKey:
            equal = None
        refreshed = stats(db.con)["credentials_refreshed"] if impl != "native" else None
        results[impl] = (outcome, counts.get("hit:expiring_token", 0), refreshed, equal, open_multipart_uploads(rig))
    report(
        request,
        **{impl: f"{o.text()}, refused {r}, refreshed {f}, equal {e}" for impl, (o, r, f, e, _) in results.items()},
    )
    outcome, refused, refreshed, equal, left_open = results["httpfs2"]
    assert refused >= 1, "the token never expired during the COPY"
    assert outcome.error is None, outcome.text()
    assert equal is True
    assert refreshed >= 1
    assert left_open == [], left_open
    assert "token-2" not in str(stats(db.con))


@pytest.mark.parametrize("client", CLIENTS)
def test_an_upload_begun_with_an_expired_session_token_follows_the_secret(
    request, connect, rig, hostile_s3, upload_local, client
):
    """A COPY in a transaction that saw the secret before the user replaced it (its session token expired since): the
    upload's first request, CreateMultipartUpload, is refused (400 ExpiredToken), looks the secret up again and is
    sent again, and the object is byte-equal to the local COPY. httpfs's httplib client leaves a POST's answer in the
    request rather than the response: the store's error code is read from there (the COPY used to fail)."""
    abort_open_uploads(rig)
    key = f"{PREFIX}uploads/expired-begin-{client}.csv"
    db = writer(connect, "httpfs2", client)
    expirations = []
    expire_the_session_token(db, rig, hostile_s3, expirations.append)
    db.con.execute("BEGIN TRANSACTION")
    db.con.execute("SELECT count(*) FROM duckdb_secrets()").fetchall()  # the transaction sees token-1 from here on
    expirations[0]()
    outcome = db.run(f"COPY ({UPLOAD_ROWS}) TO '{rig.url(key)}' (FORMAT csv)", proxy=hostile_s3)
    committed = db.run("COMMIT", proxy=hostile_s3)
    refused = [(r["method"], r["query"]) for r in hostile_s3.log if r["fault"] == "expiring_token"]
    hostile_s3.mode = "normal"
    fail_on_hang(outcome, "the COPY")
    refreshed = stats(db.con)["credentials_refreshed"]
    report(request, outcome=outcome.text(), commit=committed.text(), refused=refused, refreshed=refreshed)
    assert outcome.error is None, outcome.text()
    assert committed.error is None, committed.text()
    assert refused and refused[0][0] == "POST" and "uploads" in refused[0][1], refused
    assert refreshed >= 1
    assert sha256(stored(rig, key)) == sha256(upload_local)
    assert open_multipart_uploads(rig) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_files_a_copy_opens_after_its_session_token_expired_start_from_the_fresh_credentials(
    request, connect, rig, hostile_s3, tmp_path, client
):
    """A COPY that rotates to a new file every part and a bit (FILE_SIZE_BYTES): the session token its query began with
    expires at the first file's first part, after the user replaced the secret with fresh credentials. That part is
    refused, looks the secret up again and is sent again; the uploads of the files opened after it, which the query's
    transaction still gives the old token, start from the fresh credentials: the refused requests are a few whatever
    the number of files (they used to be one per file, the begin of each upload), and the files hold the rows."""
    rows = "SELECT i, md5(i::VARCHAR) AS s FROM range(1200000) r(i)"
    folder = f"{PREFIX}uploads/expiring-rotated-{client}"
    for key in stored_keys(rig, folder + "/"):
        rig.s3.delete_object(Bucket=rig.bucket, Key=key)
    abort_open_uploads(rig)
    sql = "SELECT count(*), sum(i), sum(hash(s)) FROM {rows}"
    expected = duckdb.connect().execute(sql.format(rows=f"({rows})")).fetchall()
    db = writer(connect, "httpfs2", client)
    expire_the_session_token(db, rig, hostile_s3, lambda expire: hostile_s3.on_part(1, expire))
    outcome = db.run(
        f"COPY ({rows}) TO '{rig.url(folder)}' (FORMAT csv, FILE_SIZE_BYTES {PART + (1 << 20)})", proxy=hostile_s3
    )
    counts = hostile_s3.counts
    hostile_s3.mode = "normal"
    fail_on_hang(outcome, "the COPY")
    refused = [(r["method"], r["query"]) for r in hostile_s3.log if r["fault"] == "expiring_token"]
    files = stored_keys(rig, folder + "/")
    refreshed = stats(db.con)["credentials_refreshed"]
    report(request, outcome=outcome.text(), refused=len(refused), refreshed=refreshed, files=len(files))
    assert outcome.error is None, outcome.text()
    assert counts.get("hit:expiring_token", 0) >= 1, "the token never expired during the COPY"
    assert len(files) >= 6, files
    for key in files:
        (tmp_path / key.rsplit("/", 1)[1]).write_bytes(stored(rig, key))
    answer = duckdb.connect().execute(sql.format(rows=f"read_csv('{tmp_path}/*.csv')")).fetchall()
    assert answer == expected
    # The requests in flight when the first part was refused (one writer: that part, perhaps the next file's begin).
    assert len(refused) <= 3 < len(files), refused
    assert refreshed <= 3, refreshed
    assert open_multipart_uploads(rig) == []


def parquet_files(rig, tmp_path, folder: str, files: int):
    """`files` parquet files of a few row groups under `folder`: their keys and the local answer of COUNTED_SQL."""
    keys = [f"{folder}/part-{n:02d}.parquet" for n in range(files)]
    local = duckdb.connect()
    for n, key in enumerate(keys):
        path = tmp_path / f"part-{n:02d}.parquet"
        local.execute(
            f"COPY (SELECT i, md5((i * {n + 1})::VARCHAR) AS s FROM range({20_000 + 1_000 * n}) r(i)) "
            f"TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 10000)"
        )
        rig.s3.upload_file(str(path), rig.bucket, key)
    expected = local.execute(COUNTED_SQL.format(paths=f"'{tmp_path}/part-*.parquet'")).fetchall()
    return keys, expected


COUNTED_SQL = "SELECT count(*), sum(i), sum(hash(s)) FROM read_parquet({paths})"


@pytest.mark.parametrize("client", CLIENTS)
def test_throttled_tails_and_listings_are_waited_out_and_sent_again(
    request, connect, rig, hostile_s3, tmp_path, client
):
    """A store throttling a prefix answers 503 SlowDown to any request: here the first and every fifth of each kind
    (tail GETs, other GETs, listings, HEADs). httpfs2's tail GETs and folder listings stand in for HEADs; one so
    answered is told to the read streams and the stats and sent again after a jittered wait, where it used to be
    dropped for the HEAD it stands in for (one more request to a store that asked for fewer, and the footer read
    again). A list of a folder's Parquet files in the folder's order: the answer is the files' own, natively and with
    httpfs2, and with httpfs2 no file opens with a HEAD."""
    keys, expected = parquet_files(rig, tmp_path, f"{PREFIX}throttled-{client}", 6)
    remote = COUNTED_SQL.format(paths=[rig.url(key) for key in keys])
    results = {}
    for impl in ("native", "httpfs2_small"):  # read-ahead on: the latency gate open, as at a store's latency
        db = connect(impl, client)
        # Retries as a user facing throttling sets them: a GET's retries may be throttled too (one in five here).
        db.con.execute("SET threads = 1; SET http_retries = 6; SET http_retry_wait_ms = 50; SET http_retry_backoff = 2")
        hostile_s3.reset()
        hostile_s3.slow_down_every = 5
        hostile_s3.mode = "slow_down"
        outcome = db.run(remote, proxy=hostile_s3)
        counts = hostile_s3.counts
        hostile_s3.mode = "normal"
        fail_on_hang(outcome, "the read")
        results[impl] = (outcome, counts, stats(db.con) if impl != "native" else None)
    hostile_s3.slow_down_every = 4
    outcome, counts, counters = results["httpfs2_small"]
    hits = {name: value for name, value in counts.items() if name.startswith("hit:slow_down")}
    names = ("throttled_answers", "throttled_wait_seconds", "folder_listings", "gate_waits", "streams_throttles")
    shown = {name: counters[name] for name in names}
    report(
        request,
        native=results["native"][0].text(),
        httpfs2=outcome.text(),
        hits=hits,
        heads=counts.get("HEAD", 0),
        **shown,
    )
    assert results["native"][0].rows == expected, results["native"][0].text()
    assert outcome.error is None, outcome.text()
    assert outcome.rows == expected
    assert hits.get("hit:slow_down:tail", 0) >= 1 and hits.get("hit:slow_down:listing", 0) >= 1, hits
    assert counts.get("HEAD", 0) == 0, (counts, "a throttled tail or listing gave way to HEADs")
    # Every throttled answer to httpfs2's own requests is counted; httpfs's own requests (none expected) are not.
    assert hits["hit:slow_down:tail"] + hits["hit:slow_down:listing"] <= counters["throttled_answers"], (hits, shown)
    assert counters["throttled_answers"] <= hits["hit:slow_down"], (hits, shown)
    assert counters["throttled_wait_seconds"] > 0, shown
    # One in five refused whatever the pace is not a prefix past its rate: no wait at its gate, no streams halved.
    assert counters["gate_waits"] == 0 and counters["streams_throttles"] == 0, shown


@pytest.mark.parametrize("client", CLIENTS)
def test_a_read_past_a_prefix_request_rate_is_throttled_and_ends_right(
    request, connect, rig, hostile_s3, tmp_path, client
):
    """S3 answers 503 SlowDown to requests past a request rate per prefix (slow_down_rate: more than 8 a second to the
    folder here), not to a share of them: the throttling lasts as long as the client keeps its pace. A read of 12
    files of one folder answers the files' own rows; httpfs2_stats() counts the throttled answers and the streams
    halved for them. On DuckDB 2.0 the host cuts each read into 2 MiB pieces read side by side, each a request that
    would back off alone while the refused ones keep the prefix over its rate (606 of 739 GETs refused, a minute or
    more): httpfs2's admission gate of the prefix holds its requests to a rate once throttled, so most wait there
    rather than being refused, and the read ends within the hang limit on both versions."""
    keys, expected = parquet_files(rig, tmp_path, f"{PREFIX}throttled-rate-{client}", 12)
    db = connect("httpfs2_small", client)
    db.con.execute("SET http_retries = 8; SET http_retry_wait_ms = 50; SET http_retry_backoff = 2")
    hostile_s3.reset()
    hostile_s3.rate_limit = 8
    hostile_s3.mode = "slow_down_rate"
    outcome = db.run(COUNTED_SQL.format(paths=[rig.url(key) for key in keys]), proxy=hostile_s3)
    throttled = hostile_s3.counts.get("hit:slow_down_rate", 0)
    gets = hostile_s3.counts.get("GET", 0)  # refused ones too
    hostile_s3.mode = "normal"
    hostile_s3.rate_limit = 50
    fail_on_hang(outcome, "the read")
    counters = stats(db.con)
    names = ("throttled_answers", "gate_waits", "gate_wait_seconds", "streams", "streams_settled", "streams_throttles")
    shown = {name: counters.get(name) for name in names}
    report(request, httpfs2=outcome.text(), seconds=round(outcome.seconds, 2), throttled=throttled, gets=gets, **shown)
    assert outcome.error is None, outcome.text()
    assert outcome.rows == expected
    assert throttled >= 1, "the proxy throttled nothing: the read never passed the rate"
    assert 1 <= counters["throttled_answers"] <= throttled, (throttled, shown)
    assert counters["streams_throttles"] >= 1, shown


@pytest.mark.parametrize("client", CLIENTS)
def test_a_glob_whose_listing_is_throttled_is_listed_again(request, connect, rig, hostile_s3, tmp_path, client):
    """A glob's first listing answered 503 SlowDown (the first two listings throttled). httpfs on DuckDB 2.0 fails the
    query at once (its listing is not retried); 1.5's retries it. httpfs2 (read-ahead on, which expands the listing at
    the glob) sends the listing again through its retry policy, counts the throttled answers, and the answer is the
    files'."""
    folder = f"{PREFIX}throttled-glob-{client}"
    _, expected = parquet_files(rig, tmp_path, folder, 4)
    sql = COUNTED_SQL.format(paths=f"'{rig.url(folder)}/*.parquet'")
    results = {}
    for impl in ("native", "httpfs2_small"):
        db = connect(impl, client)
        db.con.execute("SET http_retry_wait_ms = 10")
        hostile_s3.reset()
        hostile_s3.slow_down_kinds = {"listing"}
        hostile_s3.slow_down_first = 2
        hostile_s3.mode = "slow_down"
        outcome = db.run(sql, proxy=hostile_s3)
        throttled = hostile_s3.counts.get("hit:slow_down:listing", 0)
        hostile_s3.mode = "normal"
        fail_on_hang(outcome, "the glob")
        counted = stats(db.con)["throttled_answers"] if impl != "native" else None
        results[impl] = (outcome, throttled, counted)
    report(request, **{impl: f"{o.text()}, throttled {t}, counted {c}" for impl, (o, t, c) in results.items()})
    outcome, throttled, counted = results["httpfs2_small"]
    assert outcome.error is None, outcome.text()
    assert outcome.rows == expected
    assert throttled == 2, "the listings were not throttled"
    if DUCKDB_2:
        assert counted >= 1, "httpfs2 listed again: the throttled listing is counted"


def read_in_a_throttled_burst(db, rig, hostile_s3, first: int):
    """The CSV's answer (or error) while the first `first` object GETs (not tails) are answered 503 SlowDown, and how
    many were."""
    hostile_s3.reset()
    hostile_s3.slow_down_kinds = {"get"}
    hostile_s3.slow_down_first = first
    hostile_s3.mode = "slow_down"
    outcome = db.run(CSV_SQL.format(url=rig.url(PREFIX + "data.csv")), proxy=hostile_s3)
    throttled = hostile_s3.counts.get("hit:slow_down:get", 0)
    hostile_s3.mode = "normal"
    fail_on_hang(outcome, "the read")
    return outcome, throttled


@pytest.mark.parametrize("client", CLIENTS)
def test_a_get_throttled_again_and_again_is_sent_until_the_store_takes_it(
    request, connect, rig, data, hostile_s3, client
):
    """A store throttling a prefix answers 503 SlowDown to a burst of requests: here the first five object GETs (tails
    and HEADs pass). A CSV read at threads 1 reads its windows one GET at a time, so its first GET is throttled five
    times in a row: httpfs's four attempts (http_retries = 3) are all spent in the burst. A throttled answer says the
    store is busy, not that the request failed: httpfs2's earns one more attempt each, up to five beyond httpfs's,
    after a jittered wait that grows, and the read's answer is the file's. Native 1.5 fails here (its fourth attempt
    throttled); native 2.0 retries throttled requests five more times too."""
    results = {}
    for impl in ("native", "httpfs2"):
        db = connect(impl, client)
        db.con.execute("SET threads = 1; SET http_retry_wait_ms = 10; SET http_retry_backoff = 2")
        outcome, throttled = read_in_a_throttled_burst(db, rig, hostile_s3, 5)
        counters = stats(db.con) if impl != "native" else {}
        results[impl] = (outcome, throttled, counters.get("throttled_answers"))
    report(request, **{impl: f"{o.text()}, throttled {t}, counted {c}" for impl, (o, t, c) in results.items()})
    outcome, throttled, counted = results["httpfs2"]
    assert outcome.error is None, outcome.text()
    assert outcome.rows == expected_of(data, "data.csv")
    assert throttled == 5, "the burst was not played"
    assert counted == 5, "every throttled answer is httpfs2's GET's and counted"
    # A burst longer than the attempts: the read fails with httpfs's error, saying what httpfs2 tried and which
    # setting gives more (http_retries = 1: two attempts and five more, all throttled).
    db.con.execute("SET http_retries = 1")
    outcome, _ = read_in_a_throttled_burst(db, rig, hostile_s3, 50)
    assert isinstance(outcome.error, duckdb.HTTPException), outcome.text()
    message = str(outcome.error)
    assert "data.csv" in message and "503" in message, message
    assert "after 7 attempt(s), 7 of them throttled (http_retries = 1)" in message, message


@pytest.mark.parametrize("client", CLIENTS)
def test_an_interrupt_ends_a_read_waiting_out_throttled_retries(request, connect, rig, data, hostile_s3, client):
    """Every object GET throttled, and retries that wait long (http_retry_wait_ms = 2000: 2, 4, 8 s... up to 20 s a
    throttled wait): the query is interrupted after 2 s, in a wait. httpfs2's waits are slept in slices that ask
    whether the query was interrupted, so it ends at once with DuckDB's interrupt, not after the wait and the
    attempts left (before: only the proxy closing its connections ended it)."""
    db = connect("httpfs2", client)
    db.con.execute("SET threads = 1; SET http_retries = 8; SET http_retry_wait_ms = 2000; SET http_retry_backoff = 2")
    hostile_s3.reset()
    hostile_s3.slow_down_kinds = {"get"}
    hostile_s3.slow_down_first = 1000
    hostile_s3.mode = "slow_down"
    outcome = db.run(CSV_SQL.format(url=rig.url(PREFIX + "data.csv")), limit=2.0, proxy=hostile_s3)
    throttled = hostile_s3.counts.get("hit:slow_down:get", 0)
    hostile_s3.mode = "normal"
    report(request, httpfs2=outcome.text(), throttled=throttled)
    assert throttled >= 1, "no GET was throttled"
    assert outcome.ended_by == "interrupt", outcome.text()
    assert outcome.interrupt_seconds is not None and outcome.interrupt_seconds < 1.0, outcome.text()


@pytest.mark.parametrize("client", CLIENTS)
def test_an_interrupt_ends_the_throttled_retries_of_a_copys_parts(request, connect, rig, hostile_s3, client):
    """Every UploadPart throttled, with retries that wait long (http_retry_wait_ms = 2000): the COPY is interrupted
    after 2 s. The parts' attempts and their waits at the prefix's gate ask whether the query was interrupted, as a
    read's do: no part is sent again once the query has ended, and the upload is aborted, with no multipart upload
    left open (before: each part went on through its attempts in the background, its upload open meanwhile). The
    abort is not held to the pace of the gate the throttled parts slowed: the upload is gone a moment after the query
    ends (when it waited its turn there: 0.72-1.14 s later, 4 runs; now 2-4 ms)."""
    abort_open_uploads(rig)
    key = f"{PREFIX}uploads/throttled-parts-{client}.csv"
    db = writer(connect, "httpfs2", client)
    db.con.execute("SET http_retries = 8; SET http_retry_wait_ms = 2000; SET http_retry_backoff = 2")
    hostile_s3.reset()
    hostile_s3.slow_down_kinds = {"part"}
    hostile_s3.slow_down_first = 1000
    hostile_s3.mode = "slow_down"
    try:
        outcome = db.run(f"COPY ({UPLOAD_ROWS}) TO '{rig.url(key)}' (FORMAT csv)", limit=2.0, proxy=hostile_s3)
        at_end = hostile_s3.counts.get("hit:slow_down:part", 0)
        ended = time.monotonic()
        left_open = []
        for _ in range(50):
            left_open = [upload["Key"] for upload in open_multipart_uploads(rig)]
            if not left_open:
                break
            time.sleep(0.1)
        open_for = time.monotonic() - ended
        time.sleep(1.0)
        later = hostile_s3.counts.get("hit:slow_down:part", 0)
    finally:
        hostile_s3.mode = "normal"
    report(request, outcome=outcome.text(), throttled_parts=at_end, throttled_after=later - at_end)
    assert at_end >= 1, "no part was throttled"
    assert later == at_end, f"{later - at_end} parts sent again after the query ended"
    assert outcome.ended_by == "interrupt", outcome.text()
    assert outcome.interrupt_seconds is not None and outcome.interrupt_seconds < INTERRUPT_LIMIT, outcome.text()
    assert left_open == [], f"multipart uploads left open: {left_open}"
    assert open_for < 0.5, f"the upload was left open {open_for:.2f} s after the query ended"
    with pytest.raises(rig.s3.exceptions.NoSuchKey):
        stored(rig, key)


def test_one_failed_completion_of_a_partitioned_copy_fails_it_naming_the_file(connect, rig, hostile_s3, tmp_path):
    """A PARTITION_BY COPY of 21 files, one of whose CompleteMultipartUpload is answered 200 with an <Error> body:
    the COPY fails naming that file, which is absent; the 20 others are complete, as each would be had its close
    failed on its own (their completions went on in the background beside it); no multipart upload is left."""
    abort_open_uploads(rig)
    folder = f"{PREFIX}uploads/partitioned-completions/"
    query = "SELECT i, i % 21 AS k, md5(i::VARCHAR) AS s FROM range(3000000) r(i)"  # ~6.3 MB per file: 2 parts
    local = tmp_path / "partitioned"
    duckdb.connect().execute(f"COPY ({query}) TO '{local}' (FORMAT csv, PARTITION_BY (k))")
    # httpfs's own timeouts: 21 files' parts at once through this Python proxy on a loaded machine can outlast
    # BOUNDED's 1 s, and the fault here is an answer, not a hang (db.run bounds the query anyway).
    db = writer(connect, "httpfs2", "curl")
    hostile_s3.reset()
    key_filter = hostile_s3.key_filter
    hostile_s3.key_filter = quote(f"/{folder}k=3/", safe="/")  # as the request's path has it
    hostile_s3.mode = "complete_error_body"
    try:
        outcome = db.run(f"COPY ({query}) TO '{rig.url(folder)}' (FORMAT csv, PARTITION_BY (k))", proxy=hostile_s3)
    finally:
        counts = hostile_s3.counts
        hostile_s3.mode = "normal"
        hostile_s3.key_filter = key_filter
    fail_on_hang(outcome, "the COPY")
    assert counts.get("hit:complete_error_body", 0) >= 1, (outcome.text(), counts)
    assert names_the_file(outcome, f"{folder}k=3/"), outcome.text()
    written = {item["Key"] for item in rig.s3.list_objects_v2(Bucket=rig.bucket, Prefix=folder).get("Contents", [])}
    assert not any(key.startswith(f"{folder}k=3/") for key in written), written
    assert len(written) == 20, written
    for key in written:
        path = local / key.removeprefix(folder)
        assert sha256(stored(rig, key)) == sha256(path.read_bytes()), key
    assert open_multipart_uploads(rig) == []


@needs_registry_package("duckdb-extension-ducklake")
def test_a_ducklake_insert_whose_file_fails_to_complete_leaves_the_table_as_it_was(connect, rig, hostile_s3, tmp_path):
    """DuckLake commits its metadata inside the transaction's commit, before httpfs2's commit hook would run: its
    files' closes wait for their objects, so an insert whose data file's CompleteMultipartUpload fails (answered 200
    with an <Error> body) fails naming the file, and the catalog never names it: the table reads as before."""
    abort_open_uploads(rig)
    db = writer(connect, "httpfs2", "curl")
    db.con.execute("SET threads = 1")
    db.con.execute(f"LOAD '{ducklake_extension()}'")
    folder = f"{PREFIX}uploads/lake-{tmp_path.name}/"
    db.con.execute(f"ATTACH 'ducklake:{tmp_path / 'lake.ducklake'}' AS lake (DATA_PATH '{rig.url(folder)}')")
    rows = "SELECT i, md5(i::VARCHAR) || md5((i * 3)::VARCHAR) AS s FROM range({}, {}) r(i)"  # ~12 MB a file
    check = "SELECT count(*), sum(i) FROM lake.t"
    try:
        db.con.execute(f"CREATE TABLE lake.t AS {rows.format(0, 400000)}")
        before = db.con.execute(check).fetchone()
        hostile_s3.mode = "complete_error_body"
        outcome = db.run(f"INSERT INTO lake.t {rows.format(400000, 800000)}", proxy=hostile_s3)
        hits = hostile_s3.counts.get("hit:complete_error_body", 0)
        hostile_s3.mode = "normal"
        fail_on_hang(outcome, "the INSERT")
        assert hits >= 1, "the fault never happened: the data file was not a multipart upload"
        assert names_the_file(outcome, folder), outcome.text()
        assert db.con.execute(check).fetchone() == before == (400000, sum(range(400000)))
    finally:
        hostile_s3.mode = "normal"
        db.con.execute("DETACH lake")
    assert open_multipart_uploads(rig) == []


@pytest.mark.parametrize("client", CLIENTS)
def test_the_uploads_of_a_transaction_share_kept_connections(connect, rig, hostile_s3, client):
    """Three COPYs in one transaction, each one PUT made after the one before was answered: they go on one kept
    connection (the hostile proxy keeps client connections alive, versitygw closes its own), where an upload that
    kept only its own connections would open one each. The objects are the rows written."""
    db = writer(connect, "httpfs2", client)
    hostile_s3.reset()
    keys = [f"{PREFIX}uploads/kept-{client}-{n}.csv" for n in range(3)]
    db.con.execute("BEGIN")
    for n, key in enumerate(keys):
        db.con.execute(f"COPY (SELECT {n} AS n, i FROM range(1000) r(i)) TO '{rig.url(key)}' (FORMAT csv)")
        time.sleep(0.3)  # the PUT, sent in the background, is answered
    db.con.execute("COMMIT")
    counts = hostile_s3.counts
    assert counts.get("PUT") == 3, counts
    assert counts.get("connections:PUT") == 1, counts
    for n, key in enumerate(keys):
        assert stored(rig, key).decode().splitlines()[1] == f"{n},0", key


@pytest.mark.parametrize("client", CLIENTS)
def test_a_part_answer_that_trickles_ends_at_an_interrupt_and_leaves_no_upload(
    request, connect, rig, hostile_s3, client
):
    """Every UploadPart's answer comes one byte every 0.5 s (so no single wait reaches http_timeout = 1 s; httplib
    waits for it without end, curl until its low-speed limit): an interrupt ends the COPY at once, the upload is
    aborted, and once the trickles end no multipart upload is left open. httpfs's own COPY does not end at an
    interrupt (seen on this rig), so it is no model here."""
    abort_open_uploads(rig)
    key = f"{PREFIX}uploads/trickle-{client}.csv"
    db = writer(connect, "httpfs2", client)
    db.con.execute(BOUNDED)
    hostile_s3.trickle_interval = 0.5
    hostile_s3.trickle_seconds = 30.0
    hostile_s3.mode = "part_trickle"
    limit = 3 * HTTP_TIMEOUT + 1
    outcome = db.run(f"COPY ({UPLOAD_ROWS}) TO '{rig.url(key)}' (FORMAT csv)", limit=limit)
    counts = hostile_s3.counts
    hostile_s3.mode = "normal"
    hostile_s3.drop_connections()  # ends the trickles still running
    left_open = []
    for _ in range(100):  # the parts in flight end with the trickles, after the abort
        left_open = [upload["Key"] for upload in open_multipart_uploads(rig)]
        if not left_open:
            break
        time.sleep(0.1)
    report(
        request,
        outcome=outcome.text(),
        seconds=round(outcome.seconds, 2),
        interrupt_seconds=outcome.interrupt_seconds,
        trickled=counts.get("hit:part_trickle", 0),
        uploads_left_open=len(left_open),
    )
    assert counts.get("hit:part_trickle", 0) >= 1, counts
    if outcome.hung:
        assert outcome.ended_by == "interrupt", outcome.text()
        assert outcome.interrupt_seconds <= 1.0, outcome.text()
    else:
        assert names_the_file(outcome, key), outcome.text()
    with pytest.raises(rig.s3.exceptions.NoSuchKey):
        stored(rig, key)
    assert left_open == [], f"multipart uploads left open: {left_open}"


@pytest.mark.parametrize("client", CLIENTS)
def test_a_part_that_straggles_is_sent_again_and_the_copy_ends_right(
    request, connect, rig, hostile_s3, upload_local, client
):
    """Part 2's first UploadPart is stored at once and its answer trickles a byte a second for 40 s (a straggler; no
    wait reaches http_timeout); its other attempts and the other parts are answered as usual. httpfs2 sends a part
    whose answer has not come by the uploads' hedging deadline (10 s until parts were timed, then 3 x their 95th
    percentile, never under 5 s) again as the same part number and takes the first answer: the COPY ends byte-equal
    long before the trickle, with no multipart upload left open."""
    abort_open_uploads(rig)
    key = f"{PREFIX}uploads/straggler-{client}.csv"
    db = writer(connect, "httpfs2", client)
    db.con.execute("SET http_timeout = 60")
    hostile_s3.trickle_interval = 1.0
    hostile_s3.trickle_seconds = 40.0
    hostile_s3.mode = "part_trickle_once"
    outcome = db.run(f"COPY ({UPLOAD_ROWS}) TO '{rig.url(key)}' (FORMAT csv)", limit=30, proxy=hostile_s3)
    counts = hostile_s3.counts
    hostile_s3.mode = "normal"
    hostile_s3.drop_connections()  # ends the trickle still running
    fail_on_hang(outcome, "the COPY")
    counters = stats(db.con)
    report(
        request,
        outcome=outcome.text(),
        seconds=round(outcome.seconds, 2),
        trickled=counts.get("hit:part_trickle", 0),
        hedges_sent=counters["hedges_sent"],
        hedges_won=counters["hedges_won"],
    )
    assert counts.get("hit:part_trickle", 0) == 1, counts
    assert outcome.error is None, outcome.text()
    assert outcome.seconds < 25, outcome.text()
    assert sha256(stored(rig, key)) == sha256(upload_local)
    assert counters["hedges_sent"] >= 1 and counters["hedges_won"] >= 1, counters
    assert open_multipart_uploads(rig) == []


def test_a_same_size_overwrite_behind_size_style_validators_is_read_anew(rig, tmp_path):
    """A plain HTTP server whose ETag is the object's size and whose Last-Modified never moves (rig/http_server.py,
    as servers that make validators of size and mtime look after an overwrite within a second): a Parquet file
    replaced between two queries by one of the same size is read anew, footer included. Its footer's statistics
    would otherwise prune every row group (0 rows), or its remembered last bytes mix with the new ones."""
    paths = {}
    writer_con = duckdb.connect()
    for name, offset in (("old", 0), ("new", 1_500_000)):
        paths[name] = tmp_path / f"{name}.parquet"
        writer_con.execute(
            f"COPY (SELECT (i + {offset})::BIGINT AS f, (i * 7)::BIGINT AS g FROM range(200000) t(i)) "
            f"TO '{paths[name]}' (COMPRESSION uncompressed, ROW_GROUP_SIZE 50000)"
        )
    assert paths["old"].stat().st_size == paths["new"].stat().st_size
    served = tmp_path / "served"
    served.mkdir()
    target = served / "data.parquet"
    target.write_bytes(paths["old"].read_bytes())
    with serve_http(served) as base_url:
        con = next(uncached(duckdb_connect(rig)))
        enable(con)
        url = f"{base_url}/data.parquet"
        selective = f"SELECT count(*) FROM read_parquet('{url}') WHERE f > 1500000"
        whole = f"SELECT sum(f), sum(g) FROM read_parquet('{url}')"
        assert con.execute(selective).fetchone()[0] == 0
        assert con.execute(whole).fetchone() == (sum(range(200000)), 7 * sum(range(200000)))
        target.write_bytes(paths["new"].read_bytes())
        assert con.execute(selective).fetchone()[0] == 199_999
        assert con.execute(whole).fetchone() == (sum(range(200000)) + 200000 * 1_500_000, 7 * sum(range(200000)))
        con.close()


@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("hook_at", [2, 8])
def test_a_file_of_a_followed_list_replaced_mid_scan_is_read_at_one_version(
    request, connect, hostile_s3, rig, tmp_path, hook_at, impl
):
    """A list of a folder's files in the folder's order is read at the versions the folder's listing gave (httpfs2
    lists it at the second file's open): a file replaced meanwhile is read whole at one version, or the query fails
    naming it, never a mix of both."""
    local = duckdb.connect()
    folder = f"{PREFIX}followed_{hook_at}_{impl}/"
    paths = []
    for number in range(12):
        path = tmp_path / f"part-{number:02d}.parquet"
        local.execute(f"""COPY (SELECT {number} AS n, range AS i, md5((range + {number})::VARCHAR) AS s
                          FROM range(20000)) TO '{path}' (FORMAT parquet)""")
        rig.s3.upload_file(str(path), rig.bucket, f"{folder}{path.name}")
        paths.append(path)
    replacement = tmp_path / "replacement.parquet"
    local.execute(f"""COPY (SELECT 6 AS n, range * 3 AS i, md5((range * 5)::VARCHAR) AS s FROM range(30000))
                      TO '{replacement}' (FORMAT parquet)""")
    sql = "SELECT count(*), sum(n), sum(i), sum(hash(s)) FROM read_parquet([{}])"
    answers = [
        local.execute(sql.format(", ".join(f"'{path}'" for path in files))).fetchall()
        for files in (paths, paths[:6] + [replacement] + paths[7:])
    ]
    db = connect(impl)
    hostile_s3.on_get(hook_at, lambda: rig.s3.upload_file(str(replacement), rig.bucket, f"{folder}part-06.parquet"))
    outcome = db.run(sql.format(", ".join(f"'s3://{rig.bucket}/{folder}{path.name}'" for path in paths)))
    counts = hostile_s3.counts
    listings = stats(db.con)["folder_listings"] if impl != "native" else None
    which = answers.index(outcome.rows) if outcome.rows in answers else None
    report(request, outcome=outcome.text(), version=which, listings=listings, counts=counts)
    fail_on_hang(outcome, "the scan")
    assert counts.get("hooks_called") == 1, counts
    # httpfs2 follows the list where it reads ahead (httpfs2_small: the latency gate open).
    assert listings == {"native": None, "httpfs2": 0, "httpfs2_small": 1}[impl]
    mix = f"a mix of two versions: {outcome.rows}"
    if isinstance(outcome.error, UnicodeDecodeError) or str(outcome.error).startswith("UnicodeDecodeError:"):
        # A read httpfs's handle made at the listed version got the new object: httpfs's error carries that answer's
        # body (the object's bytes) beside its message, which the Python client fails to decode (duckdb 1.5 raises the
        # UnicodeDecodeError, 2.0 a RuntimeError naming it). An error all the same.
        return
    assert_right_or_names_the_file(outcome, which is not None, "part-06.parquet", mix)


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("form", ["glob", "list"])
def test_tails_and_listings_that_outlive_their_session_token_follow_the_secret(
    request, connect, rig, hostile_s3, tmp_path, form, client
):
    """Twelve Parquet files read by a glob or by a list of their paths (then httpfs2 lists their folder after the
    first), one thread: the session token expires mid-query (after the glob's listing, or at the list's first GET),
    after the user replaced the secret with fresh credentials (the store answers 400 ExpiredToken to every request
    signed with the old one from then on). httpfs2's tail GETs and folder listings, which stand in for httpfs's
    HEADs, are refused like its range GETs, look the secret up again and are signed and sent again once: the answer is
    the files' own and no file opens with a HEAD (they used to give way to HEADs signed with the old token). The
    refusal is learnt once for the database: the files opened after it (their tails, readers and the folder's listing,
    which the query's transaction still gives the old token) start from the fresh credentials, so the refused requests
    are a few whatever the number of files (they used to be one per file). Native httpfs reads the secrets the query
    began with (its transaction's) at each open and refreshes nothing on 1.5.5: its next request after the expiry is
    refused (400) and the query fails."""
    files = 12
    keys, expected = parquet_files(rig, tmp_path, f"{PREFIX}expiring-{form}-{client}", files)
    paths = f"'{rig.url(keys[0].rsplit('/', 1)[0])}/part-*.parquet'" if form == "glob" else [rig.url(k) for k in keys]
    sql = COUNTED_SQL.format(paths=paths)
    # A glob's listing (httpfs's, at bind) goes through, and its files' footers come from checked range GETs (the
    # listing gave their versions), which are refused. A list's first file opens from a tail GET, the first refused.
    expire_at = (
        (lambda expire: hostile_s3.on_listing(1, expire))
        if form == "glob"
        else (lambda expire: hostile_s3.on_get(1, expire))
    )
    # Two IO threads: the requests already in flight when the first refusal comes back (a glob's footers are fetched
    # ahead all at once) are refused too, however few the files; fewer than the files here.
    io_threads = 2
    results = {}
    for impl in ("native", "httpfs2_small"):
        db = connect(impl, client)
        db.con.execute("SET threads = 1")
        if impl != "native":
            db.con.execute(f"SET GLOBAL httpfs2_parallel_read_io_threads = {io_threads}")
        expire_the_session_token(db, rig, hostile_s3, expire_at)
        outcome = db.run(sql, proxy=hostile_s3)
        counts = hostile_s3.counts
        hostile_s3.mode = "normal"
        fail_on_hang(outcome, "the read")
        results[impl] = (outcome, counts, stats(db.con) if impl != "native" else None)
    refused = [r for r in hostile_s3.log if r["fault"] == "expiring_token"]
    outcome, counts, counters = results["httpfs2_small"]
    native = results["native"][0]
    report(
        request,
        native=native.text(),
        httpfs2=outcome.text(),
        refused=counts.get("hit:expiring_token", 0),
        heads=counts.get("HEAD", 0),
        listings=counts.get("listings", 0),
        refreshed=counters["credentials_refreshed"],
    )
    assert counts.get("hit:expiring_token", 0) >= 1, "the token never expired during the read"
    assert outcome.error is None, outcome.text()
    assert outcome.rows == expected
    assert counters["credentials_refreshed"] >= 1, counters
    assert counts.get("HEAD", 0) == 0, (counts, "a refused tail gave way to HEADs")
    # Learnt once: only the requests sent with the old token before the first refresh recorded its replacement (those
    # of the IO threads and of the scan's thread) are refused, not one or more per file as before.
    assert len(refused) <= io_threads + 1 < files, [(r["range"], r["query"]) for r in refused]
    assert counters["credentials_refreshed"] <= io_threads + 1, counters
    # The stand-in the form exercises was refused and sent again.
    if form == "list":
        assert any((r["range"] or "").startswith("bytes=-") for r in refused), refused
        # The folder's listing, made at the second file's open, started from the fresh credentials.
        assert counters["folder_listings"] >= 1, counters
        assert not any("list-type" in r["query"] for r in refused), refused
    assert "token-2" not in str(counters)
    if not DUCKDB_2:
        assert native.error is not None and "400" in native.text(), native.text()


@pytest.mark.parametrize("client", CLIENTS)
def test_a_tail_get_whose_answer_begins_late_is_hedged(request, connect, rig, data, hostile_s3, client):
    """The first open of a Parquet file is one tail GET: a store that holds it 40 s before answering would hold the
    open up to the tail's own deadline (2 s), then the HEAD and footer read it stands in for. Hedged as a range GET
    is, the tail is sent again once its answer is late (the hedge's range is answered at once): the answer is right,
    the query ends long before the stall (20 s, a hang guard), no file opens with a HEAD, and the hedge is counted."""
    db = connect("httpfs2", client)
    sql = PARQUET_SQL.format(url=rig.url(PREFIX + "data.parquet"))
    outcome, counts, counters = read_with_stragglers(db, hostile_s3, sql, 1, 20, stall_seconds=40.0, kinds={"tail"})
    report(
        request,
        seconds=round(outcome.seconds, 2),
        stalled=counts.get("hit:stall_first_byte", 0),
        heads=counts.get("HEAD", 0),
        hedges_sent=counters["hedges_sent"],
        hedges_won=counters["hedges_won"],
        outcome=outcome.text(),
    )
    fail_on_hang(outcome, "data.parquet with its tail stalled")
    assert counts.get("hit:stall_first_byte", 0) >= 1, counts
    assert outcome.error is None, outcome.text()
    assert outcome.rows == data.answer(PARQUET_SQL, "data.parquet")
    assert counts.get("HEAD", 0) == 0, (counts, "the stalled tail gave way to a HEAD")
    assert counters["hedges_sent"] >= 1 and counters["hedges_won"] >= 1, counters

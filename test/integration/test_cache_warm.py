"""A warm query over the block cache (issue 44) sends only what proves the versions it reads, and with a trust window
nothing but what the query itself needs (a glob's listing): read-ahead, footers fetched ahead of their opens and a
file's tail all look in the cache first. Every run is a fresh process; answers are checked against values computed
here, and requests are counted in versitygw's access log."""

import pytest

from helpers import DUCKDB_2
from rig.s3rig import read_bytes
from test_cache import cache_setup, read_counting_requests, read_in_child

FILES = 6
BLOCK = 256 * 1024  # BlockCache::BLOCK_SIZE
# Uncompressed files of ~1.3 and ~1.1 MiB whose last block (holding the footer) is ~36 KiB or ~121 KiB (over 64 KiB):
# either way a footer fetched ahead is fetched as asked and kept as the file's tail piece, not widened.
# Values from BASE on all have 6 digits, so every file of a size has the same length.
ROWS = (57500, 50000)
BASE = 100000
GLOB_QUERY = "SELECT sum(a) + sum(b) + count(*) FILTER (WHERE c LIKE 'pad-%') FROM read_parquet(?)"


def expected_total(first: int, rows: int) -> int:
    values = range(first, first + rows)
    return sum(values) + sum(v * 7 % 1000 for v in values) + rows


def put_glob(con, rig, tmp_path, prefix: str, rows: int) -> tuple:
    """FILES Parquet files of `rows` rows each under `prefix` (each a different slice of rows), written through the S3
    API: the glob's URL, the answer of GLOB_QUERY over all, and each file's size."""
    total, sizes = 0, []
    for n in range(FILES):
        local = tmp_path / f"part-{n}.parquet"
        con.execute(
            f"COPY (SELECT range AS a, range * 7 % 1000 AS b, 'pad-' || range AS c FROM range({BASE + n * rows}, "
            f"{BASE + (n + 1) * rows})) TO '{local}' (FORMAT parquet, COMPRESSION uncompressed)"
        )
        data = local.read_bytes()
        sizes.append(len(data))
        rig.put_object(f"{prefix}/part-{n}.parquet", data)
        total += expected_total(BASE + n * rows, rows)
    return rig.url(f"{prefix}/*.parquet"), total, sizes


@pytest.fixture(params=ROWS)
def glob_files(con, rig, tmp_path, request):
    """FILES Parquet files under one prefix (each a different slice of rows) and the answer of GLOB_QUERY over all."""
    rows = request.param
    url, total, sizes = put_glob(con, rig, tmp_path, f"cache-warm/{tmp_path.name}", rows)
    for size in sizes:
        assert (size % BLOCK > 64 * 1024) == (rows == ROWS[1]), size
    return url, total, rows


@pytest.mark.parametrize("trust_seconds", [0, 3600])
def test_a_warm_glob_aggregate_makes_only_its_listing(rig, glob_files, tmp_path, trust_seconds):
    """Cold, the files are listed and read (footers fetched ahead of their opens, row groups by read-ahead), filling
    the cache. Warm, in a fresh process, with or without a trust window, the one request left is the listing: the
    glob needs it to know the files, and its ETags and sizes prove every file's version, so no footer, tail or range
    GET is sent (before, each footer fetched ahead and each row group went to the store again)."""
    url, total, _ = glob_files
    setup = cache_setup(tmp_path / "cache", trust_seconds=trust_seconds)
    cold, cold_requests = read_counting_requests(rig, [url], setup, query=GLOB_QUERY, settle=True)
    assert cold["shas"] == [total]
    assert cold_requests.get("GetObject", 0) >= FILES, cold_requests
    warm, warm_requests = read_counting_requests(rig, [url], setup, query=GLOB_QUERY)
    assert warm["shas"] == [total]
    assert warm_requests == {"ListObjectsV2": 1}, warm_requests
    assert warm["stats"]["cache_misses"] == 0 and warm["stats"]["cache_hits"] > 0


def test_a_replaced_file_in_a_warm_glob_is_read_at_its_new_version(rig, glob_files, tmp_path):
    """Without a trust window the listing proves each file's version: a file replaced by another of the same size is
    read anew, never from its old blocks."""
    url, total, rows = glob_files
    setup = cache_setup(tmp_path / "cache")
    assert read_in_child(rig, [url], setup, query=GLOB_QUERY, settle=True)["shas"] == [total]
    key = url.split("/", 3)[3].replace("*.parquet", "part-0.parquet")
    old = (tmp_path / "part-0.parquet").read_bytes()
    # The same file with another prefix of `c`, of the same length (uncompressed, so the strings are in the bytes).
    new = old.replace(b"pad-", b"dap-")
    assert new != old and len(new) == len(old)
    rig.put_object(key, new)
    warm, requests = read_counting_requests(rig, [url], setup, query=GLOB_QUERY)
    assert warm["shas"] == [total - rows]  # none of its rows match now
    assert requests.get("GetObject", 0) >= 1, requests  # the replaced file, from the store


@pytest.mark.parametrize("trust_seconds", [0, 3600])
def test_a_warm_projection_makes_no_range_get(con, rig, tmp_path, trust_seconds):
    """A projection (2 of 4 columns) of one file opened without a listing. Warm without a trust window, the one
    request is the tail GET that proves the version (and gives the footer); trusted, there is none: the footer and
    the column chunks all come from the cache."""
    key = f"cache-warm/{tmp_path.name}/projection.parquet"
    local = tmp_path / "projection.parquet"
    rows = 400000
    con.execute(
        f"COPY (SELECT range AS a, range * 3 % 1000 AS b, hash(range) AS c, 'row-' || range AS d FROM range({rows})) "
        f"TO '{local}' (FORMAT parquet, ROW_GROUP_SIZE 100000)"
    )
    rig.put_object(key, local.read_bytes())
    expected = sum(range(rows)) * 1000 + sum(r * 3 % 1000 for r in range(rows))
    query = "SELECT sum(a) * 1000 + sum(b) FROM read_parquet(?)"
    setup = cache_setup(tmp_path / "cache", trust_seconds=trust_seconds)
    cold, cold_requests = read_counting_requests(rig, [rig.url(key)], setup, query=query, settle=True)
    assert cold["shas"] == [expected] and cold_requests.get("GetObject", 0) >= 2, cold_requests
    warm, warm_requests = read_counting_requests(rig, [rig.url(key)], setup, query=query)
    assert warm["shas"] == [expected]
    # The proof: the listing of the file's folder (its only file), one round trip as a tail GET's.
    assert warm_requests == ({} if trust_seconds else {"ListObjectsV2": 1}), warm_requests
    assert warm["stats"]["cache_misses"] == 0 and warm["stats"]["cache_hits"] > 0


def tables_query(url: str, parts) -> str:
    """GLOB_QUERY's sums over the files `parts` of the glob `url`, each file a scan of its own (as TPC-H's tables are
    views over one file each), the URL parameter unused."""
    scans = [
        f"(SELECT sum(a) + sum(b) + count(*) FILTER (WHERE c LIKE 'pad-%') FROM "
        f"read_parquet('{url.replace('*.parquet', f'part-{n}.parquet')}'))"
        for n in parts
    ]
    return f"SELECT {' + '.join(scans)} WHERE ? IS NOT NULL"


def test_warm_queries_prove_the_files_of_a_folder_with_one_listing_each(rig, glob_files, tmp_path):
    """Files opened by name in one query, each a scan of its own (TPC-H's tables): warm, in a fresh process, each
    file's version was proven by a request of its own (a tail GET, or a HEAD once its footer was remembered: 60 over
    TPC-H's 22 queries). Now the query's first open there lists the folder and its versions prove them all: one
    listing per query, no GET, nothing missed. A file replaced meanwhile is read at its new version."""
    url, total, rows = glob_files
    parts = (0, 2, 4)
    query = tables_query(url, parts)
    expected = sum(expected_total(BASE + n * rows, rows) for n in parts)
    setup = cache_setup(tmp_path / "cache")
    cold = read_in_child(rig, [url], setup, query=query, settle=True)
    assert cold["shas"] == [expected]
    warm, requests = read_counting_requests(rig, [url, url], setup, query=query)
    assert warm["shas"] == [expected, expected]
    assert requests == {"ListObjectsV2": 2}, requests  # one per query, each query proving its own
    assert warm["stats"]["cache_versions_listed"] >= 2 * len(parts), warm["stats"]
    assert warm["stats"]["cache_misses"] == 0 and warm["stats"]["cache_hits"] > 0
    key = url.split("/", 3)[3].replace("*.parquet", "part-2.parquet")
    new = (tmp_path / "part-2.parquet").read_bytes().replace(b"pad-", b"dap-")
    rig.put_object(key, new)
    replaced, requests = read_counting_requests(rig, [url], setup, query=query)
    assert replaced["shas"] == [expected - rows]  # none of its rows match now
    assert requests.get("GetObject", 0) >= 1 and requests.get("ListObjectsV2", 0) == 1, requests


def test_a_folder_too_wide_for_a_proof_listing_is_listed_once(con, rig, tmp_path):
    """A warm file in a folder of more files than a proof listing asks for (100), sorting after them: the listing does
    not reach it, so its open proves it as before, and the process does not list that folder again."""
    folder = f"cache-warm/{tmp_path.name}/wide"
    for n in range(101):
        rig.put_object(f"{folder}/a-{n:03}.bin", b"x")
    local = tmp_path / "z.parquet"
    con.execute(f"COPY (SELECT range AS a FROM range(1000)) TO '{local}' (FORMAT parquet)")
    rig.put_object(f"{folder}/z.parquet", local.read_bytes())
    url = rig.url(f"{folder}/z.parquet")
    query = "SELECT sum(a) FROM read_parquet(?)"
    setup = cache_setup(tmp_path / "cache")
    assert read_in_child(rig, [url], setup, query=query, settle=True)["shas"] == [sum(range(1000))]
    warm, requests = read_counting_requests(rig, [url, url, url], setup, query=query)
    assert warm["shas"] == [sum(range(1000))] * 3
    assert requests.get("ListObjectsV2", 0) == 1, requests
    assert warm["stats"]["cache_versions_listed"] == 0 and warm["stats"]["cache_misses"] == 0


def test_a_trusted_warm_file_list_makes_no_request(rig, glob_files, tmp_path):
    """The same files named one by one: without a listing, each file's open would prove its version with a tail GET,
    and the opens before it fetch its tail ahead. Trusted and held, neither is sent: no request at all (before, each
    tail was still fetched ahead). Untrusted, their folder's listing proves the versions."""
    url, total, _ = glob_files
    urls = ", ".join(f"'{url.replace('*.parquet', f'part-{n}.parquet')}'" for n in range(FILES))
    query = GLOB_QUERY.replace("read_parquet(?)", f"read_parquet([{urls}]) WHERE ? IS NOT NULL")
    trusting = cache_setup(tmp_path / "cache", trust_seconds=3600)
    cold, _ = read_counting_requests(rig, [url], trusting, query=query, settle=True)
    assert cold["shas"] == [total]
    warm, requests = read_counting_requests(rig, [url], cache_setup(tmp_path / "cache"), query=query)
    assert warm["shas"] == [total]
    # On DuckDB 2.0 now and then two (2 in 5 runs): it opens a list's files ahead of its scan, and one opened before
    # the statement's query began proves nothing for the query (what is learnt outside a query is forgotten at its
    # start), which lists again.
    assert set(requests) == {"ListObjectsV2"} and requests["ListObjectsV2"] <= (2 if DUCKDB_2 else 1), requests
    trusted, requests = read_counting_requests(rig, [url], trusting, query=query)
    assert trusted["shas"] == [total] and requests == {}, requests
    assert trusted["stats"]["cache_versions_trusted"] >= FILES and trusted["stats"]["cache_misses"] == 0


def test_a_cold_glob_with_the_cache_costs_what_it_costs_without(rig, glob_files, tmp_path):
    """The cache fills from what a cold query fetches anyway: a footer fetched ahead is kept as asked, as the file's
    tail piece (before, over the probe's 64 KiB, its block was fetched again in the background: one request more per
    file, and the block's other bytes), and reads that miss one block at once share one fetch. So a cold glob makes
    no more requests than without the cache, and fetches little more (the reads widened to whole blocks)."""
    url, total, _ = glob_files
    cached = cache_setup(tmp_path / "cache")
    plain = [statement for statement in cached if "httpfs2_cache_" not in statement]
    runs = {}
    for name, setup in (("off", plain), ("cold", cached)):
        before = read_bytes(rig.toxiproxy.pid)
        out, requests = read_counting_requests(rig, [url], setup, query=GLOB_QUERY, settle=True)
        assert out["shas"] == [total]
        runs[name] = (requests, read_bytes(rig.toxiproxy.pid) - before)
    (off_requests, off_bytes), (cold_requests, cold_bytes) = runs["off"], runs["cold"]
    assert cold_requests.get("ListObjectsV2", 0) == off_requests.get("ListObjectsV2", 0) == 1
    # Open: a read that meets its block while another read's piece of it is written fetches it again, now and then
    # one GET more on 1.5 (1 in 12 runs, up to 5 in 12 with 64 files ahead) and up to one per file where DuckDB 2.0's
    # own reads race read-ahead. Before the tail pieces every file cost one more (+6 here): on 2.0 the count cannot
    # tell that from the race (the bytes below still can); on 1.5 it does.
    slack = FILES if DUCKDB_2 else 1
    assert cold_requests.get("GetObject", 0) <= off_requests.get("GetObject", 0) + slack, (cold_requests, off_requests)
    # These files' columns are all read: what the blocks widen their reads by is small beside them (before: 10% more,
    # each footer's block fetched again).
    assert off_bytes > 0 and cold_bytes <= off_bytes * 1.05, (cold_bytes, off_bytes)

"""Objects replaced while a query reads them, behind answers that cannot tell the two versions apart (issue 41): GET
answers without the ETag their HEAD has (a gateway or cache that drops it), and Last-Modified and Date pinned to one
second (rig/hostile_proxy.py's pinned_validators: how every answer looks when an object is written, replaced and read
within one second, forced so that the timing does not decide). The object is replaced through the S3 API by one of
the same size just before the 2nd or the 5th GET of it. A query's answer is one version's, or an error naming the file
where httpfs alone fails too; never an answer that matches neither version."""

import os

import duckdb
import pytest

from helpers import stats
from hostile import CLIENTS, HOSTILE, PREFIX, fail_on_hang, fixed_width_csv, names_the_file, report

pytestmark = HOSTILE

VERSIONS_PREFIX = PREFIX + "versions/"
IMPLS = ("native", "httpfs2", "httpfs2_small")
BLOB_SQL = "SELECT md5(content) FROM read_blob('{url}')"
CSV_SQL = (
    "SELECT count(*), sum(i), sum(k), sum(hash(s)) FROM read_csv('{url}', header = true, "
    "columns = {{'i': 'BIGINT', 'k': 'INTEGER', 's': 'VARCHAR'}})"
)
PARQUET_SQL = "SELECT count(*), sum(f), sum(g), sum(hash(s)) FROM read_parquet('{url}')"
GLOB_FILES = 4


def parquet_version(path, seed: int):
    """A Parquet file whose size does not depend on `seed`: fixed-width values, no compression."""
    duckdb.connect().execute(
        f"""COPY (SELECT (i + {seed} * 1000000)::BIGINT AS f, (i * 7 + {seed})::BIGINT AS g,
                         md5((i + {seed})::VARCHAR) AS s FROM range(120000) t(i))
            TO '{path}' (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE 30000)"""
    )
    return path.read_bytes()


class Workload:
    """Two versions of the same size of what one query reads, and the answer to the query over each."""

    def __init__(self, name: str, sql: str, key: str, versions: list, answers: list, replaced_key: str):
        self.name = name  # the object's name, or "glob"
        self.sql = sql
        self.key = key  # what the query names (a glob for "glob")
        self.versions = versions
        self.answers = answers
        self.replaced_key = replaced_key

    def which(self, rows):
        return self.answers.index(rows) if rows in self.answers else None


@pytest.fixture(scope="module")
def workloads(rig, tmp_path_factory):
    folder = tmp_path_factory.mktemp("versions")
    local = duckdb.connect()
    made = {}

    def single(name: str, sql: str, versions: list) -> Workload:
        """`versions` of one object named `name`, each kept in a local file too, with the query's answer over each."""
        answers = []
        for number, version in enumerate(versions):
            path = folder / f"v{number}-{name}"
            path.write_bytes(version)
            answers.append(local.execute(sql.format(url=path)).fetchall())
        return Workload(name, sql, name, versions, answers, VERSIONS_PREFIX + name)

    made["blob"] = single("blob.bin", BLOB_SQL, [os.urandom((4 << 20) + 12345) for _ in range(2)])
    made["csv"] = single("data.csv", CSV_SQL, [fixed_width_csv(seed, 100_000) for seed in (0, 1)])
    parquets = [parquet_version(folder / f"v{seed}.parquet", seed) for seed in (0, 1)]
    assert len(parquets[0]) == len(parquets[1])
    made["parquet"] = single("data.parquet", PARQUET_SQL, parquets)

    # The Parquet file named by a glob that matches it alone: opened at the listing's version (its ETag), not from a
    # tail GET; each row group is then a read of its own.
    made["listed"] = Workload(
        "listed",
        PARQUET_SQL,
        "listed/*.parquet",
        parquets,
        made["parquet"].answers,
        VERSIONS_PREFIX + "listed/p.parquet",
    )
    # A glob of GLOB_FILES files, the second of which is replaced.
    others = [parquet_version(folder / f"g{seed}.parquet", seed) for seed in range(2, 2 + GLOB_FILES)]
    glob_answers = []
    for version in parquets:
        for number, data in enumerate([others[0], version, *others[2:]]):
            (folder / f"glob{len(glob_answers)}" / f"part-{number}.parquet").parent.mkdir(exist_ok=True)
            (folder / f"glob{len(glob_answers)}" / f"part-{number}.parquet").write_bytes(data)
        glob_answers.append(local.execute(PARQUET_SQL.format(url=folder / f"glob{len(glob_answers)}" / "*")).fetchall())
    made["glob"] = Workload(
        "glob", PARQUET_SQL, "glob/*.parquet", [others, parquets], glob_answers, VERSIONS_PREFIX + "glob/part-1.parquet"
    )
    return made


def put_first_version(rig, workload: Workload):
    """The object (for the glob: every file of it) as its first version, through the S3 API, so it has an ETag."""
    if workload.name == "glob":
        others, parquets = workload.versions
        for number, data in enumerate([others[0], parquets[0], *others[2:]]):
            rig.put_object(f"{VERSIONS_PREFIX}glob/part-{number}.parquet", data)
        return
    rig.put_object(workload.replaced_key, workload.versions[0])


def second_version(workload: Workload) -> bytes:
    return workload.versions[1][1] if workload.name == "glob" else workload.versions[1]


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("replaced_before_get", [2, 5])
@pytest.mark.parametrize("name", ["blob", "csv", "parquet", "listed", "glob"])
def test_an_object_replaced_behind_answers_that_cannot_tell_is_read_at_one_version(
    request, connect, rig, hostile_s3, workloads, name, replaced_before_get, threads, client
):
    workload = workloads[name]
    url = rig.url(VERSIONS_PREFIX + workload.key)
    outcomes = {}
    for impl in IMPLS:
        put_first_version(rig, workload)
        db = connect(impl, client)
        db.con.execute(f"SET threads = {threads}")
        hostile_s3.reset()
        hostile_s3.mode = "get_no_etag+pinned_validators"
        hostile_s3.on_get(replaced_before_get, lambda: rig.put_object(workload.replaced_key, second_version(workload)))
        outcome = db.run(workload.sql.format(url=url), proxy=hostile_s3)
        counts = hostile_s3.counts
        hostile_s3.mode = "normal"
        fail_on_hang(outcome, f"{impl}: {workload.sql}")
        unproven = stats(db.con)["range_answers_unproven"] if impl != "native" else None
        outcomes[impl] = (outcome, workload.which(outcome.rows), counts.get("hooks_called", 0), unproven)
        assert counts.get("hit:get_no_etag", 0) >= 1, counts
    report(
        request,
        **{impl: f"{o.text()}, version {v}, replaced {r}, unproven {u}" for impl, (o, v, r, u) in outcomes.items()},
    )
    native_ok = outcomes["native"][0].error is None and outcomes["native"][1] is not None
    for impl, (outcome, version, replaced, _) in outcomes.items():
        if outcome.error is not None:
            assert names_the_file(outcome, workload.replaced_key.rsplit("/", 1)[1]), f"{impl}: {outcome.text()}"
            assert impl == "native" or not native_ok, f"{impl} failed where httpfs alone read one version: {outcome}"
        else:
            assert version is not None or impl == "native", (
                f"{impl}: an answer of neither version {outcome.rows} (replaced: {replaced})"
            )
    # Split into many GETs, the pieces could not prove their version: httpfs2 read the object as httpfs alone does.
    small = outcomes["httpfs2_small"]
    assert small[3] >= 1, f"httpfs2_small: no answer found unproven: {small[0].text()}"

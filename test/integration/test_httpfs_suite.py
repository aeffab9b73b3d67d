"""httpfs's own S3 test files (duckdb-httpfs's sqllogictests, run by test/httpfs_suite/) pass with httpfs2 loaded:
each file that passes natively on the rig (all but native_excluded.txt's), in each of httpfs2's modes (suite.MODES),
save the expected differences (expected_differences.txt, each with its reason). In DuckDB 2.0.x, the files of
httpfs's main and the lists named _2.0."""

import contextlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "httpfs_suite"))

import suite  # noqa: E402
from server import MinioStandIn  # noqa: E402

EXCLUDED = suite.read_list("native_excluded")
DIFFERENCES = suite.read_list("expected_differences")


def _files() -> list[str]:
    try:
        return [f for f in suite.s3_files() if f not in EXCLUDED]
    except FileNotFoundError:
        return []  # no vendored httpfs: the test below says so


FILES = _files()


@pytest.fixture(scope="module")
def httpfs_tree(tmp_path_factory):
    try:
        return suite.unpack_httpfs(tmp_path_factory.mktemp("httpfs"))
    except FileNotFoundError as missing:
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def urls():
    with suite.url_map() as mapped:
        yield mapped


@pytest.fixture(scope="module")
def minio_for():
    """A server per mode, started on first use: the files expect the buckets as the other files left them once (a
    second run of a file finds its own objects)."""
    with contextlib.ExitStack() as stack:
        servers = {}

        def start(mode: str) -> MinioStandIn:
            if mode not in servers:
                servers[mode] = stack.enter_context(MinioStandIn())
                suite.share_presigned(servers[mode])
            return servers[mode]

        yield start


def test_lists_name_files_of_the_suite():
    """A renamed or dropped file must not leave a stale entry (or an empty suite) behind."""
    if not FILES:
        pytest.skip(f"{suite.VENDOR / suite.HTTPFS_ARCHIVE} not found")
    known = set(suite.s3_files())
    assert set(EXCLUDED) <= known
    assert {key.split(":", 1)[1] for key in DIFFERENCES} <= known - set(EXCLUDED)
    assert {key.split(":", 1)[0] for key in DIFFERENCES} <= set(suite.MODES)


@pytest.mark.parametrize("mode", list(suite.MODES))
@pytest.mark.parametrize("file", FILES)
def test_file_passes_with_httpfs2(httpfs_tree, minio_for, urls, file, mode):
    outcome = suite.run_one(httpfs_tree, file, minio_for(mode), True, suite.MODES[mode], urls=urls)
    if outcome["status"] == "skip":
        pytest.skip(outcome["reason"])
    difference = DIFFERENCES.get(f"{mode}:{file}")
    if difference:
        # Still run: the file must fail where the list says, not elsewhere (a new failure is not covered by it). An
        # entry that says "timing:" may pass too (a count that depends on how fast the extension runs).
        if outcome["status"] == "pass" and "timing:" in difference:
            return
        assert outcome["status"] == "fail", f"{file} passes now: remove it from expected_differences{suite.LISTS}.txt"
        assert f"(line {outcome['line']})" in difference, f"{file} fails at another place:\n{outcome['reason']}"
        return
    assert outcome["status"] == "pass", f"{file} line {outcome.get('line')}:\n{outcome['reason']}"

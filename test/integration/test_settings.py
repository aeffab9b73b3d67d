"""The settings. What the loaded extension reports in duckdb_settings() is the truth (SETTING_SPECS, in C++): the
README's table must say the same (name, type, default, description), its ranges and scopes must be what the extension
enforces, and bad values must be rejected with a message naming the setting and its range."""

import re

import duckdb
import pytest

from rig import duckdb_connect
from rig.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
SIZE_UNITS = {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
TYPES = {"BOOLEAN", "BIGINT", "VARCHAR"}


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def readme_section(heading: str) -> list[str]:
    lines = README.read_text().splitlines()
    start = lines.index(heading) + 1
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("#")), len(lines))
    return lines[start:end]


def readme_table() -> dict[str, dict[str, str]]:
    """The settings table of the README: {setting: {column: cell}}."""
    table = [line for line in readme_section("### Settings") if line.startswith("|")]
    header = cells(table[0])
    rows = [dict(zip(header, cells(line), strict=True)) for line in table[2:]]
    return {row["Setting"].strip("`"): row for row in rows}


def readme_experiments() -> list[str]:
    """The settings the README's note on experiments names, one a bullet."""
    section = readme_section("### Settings")
    start = next(i for i, line in enumerate(section) if line.startswith("Experiments:"))
    bullets = [line for line in section[start + 1 :] if line.startswith("- ")]
    return [re.match(r"- `([a-z0-9_]+)`", line)[1] for line in bullets]


def size(text: str) -> int:
    """`65536`, `64 KiB`: the README's way of writing a number of bytes (or of anything)."""
    match = re.fullmatch(r"(\d+)(?: (KiB|MiB|GiB|TiB))?", text)
    assert match, f"README: {text!r} is not a number such as 65536 or 64 KiB"
    return int(match[1]) * SIZE_UNITS.get(match[2], 1)


def readme_range(row: dict) -> tuple[int, int]:
    low, _, high = row["Range"].partition("..")
    return size(low), size(high)


TABLE = readme_table()
INTEGERS = sorted(name for name, row in TABLE.items() if row["Type"] == "BIGINT")


@pytest.fixture(scope="module")
def reported():
    """duckdb_settings() of a fresh database with the extension loaded: {name: (default, type, description)}."""
    con = duckdb_connect()
    rows = con.execute(
        "SELECT name, value, input_type, description FROM duckdb_settings() WHERE name LIKE 'httpfs2_%'"
    ).fetchall()
    con.close()
    return {name: (value, kind, description) for name, value, kind, description in rows}


def test_every_setting_has_a_type_and_a_description(reported):
    assert len(reported) >= 10, "the spec names ten settings at least"
    for name, (_, kind, description) in reported.items():
        assert kind in TYPES, name
        assert description.strip(), f"{name} has no description"


def test_readme_lists_exactly_the_extensions_settings(reported):
    assert sorted(TABLE) == sorted(reported)


@pytest.mark.parametrize("name", sorted(TABLE))
def test_readme_row_says_what_the_extension_reports(reported, name):
    row = TABLE[name]
    assert name in reported, f"the README lists {name}, which the extension does not have"
    default, _, note = row["Default"].partition(" ")
    if row["Type"] == "VARCHAR":
        default, note = row["Default"].strip("`").strip("'"), ""  # written `''` for the empty text
    assert (default, row["Type"], row["Description"]) == reported[name]
    if note:
        # "16777216 (16 MiB)": the readable form must be the same number
        assert note.startswith("(") and note.endswith(")"), row["Default"]
        assert size(note[1:-1]) == int(default), row["Default"]
    assert bool(row["Range"]) == (row["Type"] == "BIGINT"), "integers have a range, flags none"
    assert row["Scope"] in ("session", "global")


@pytest.mark.parametrize("name", INTEGERS)
def test_integer_settings_accept_the_readme_range_and_reject_what_is_outside(con, reported, name):
    low, high = readme_range(TABLE[name])
    for good in (low, high):
        con.execute(f"SET {name} = {good}")
        assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] == good
    for bad in (low - 1, high + 1, -1):
        with pytest.raises(duckdb.InvalidInputException) as error:
            con.execute(f"SET {name} = {bad}")
        message = str(error.value)
        assert f"Invalid value {bad} for setting '{name}'" in message
        assert f"between {low} and {high}" in message
    con.execute(f"RESET {name}")
    assert str(con.execute(f"SELECT current_setting('{name}')").fetchone()[0]) == reported[name][0]


@pytest.mark.parametrize("name", sorted(TABLE))
def test_scope_is_the_readmes(con, reported, name):
    """A global setting set in one connection holds in the database's other connections; a session one does not."""
    default, kind, _ = reported[name]
    if kind == "BOOLEAN":
        value = default != "true"
    elif kind == "VARCHAR":
        value = "/tmp/httpfs2-scope-test"
    else:
        low, high = readme_range(TABLE[name])
        value = low if low != int(default) else high
    other = con.cursor()
    con.execute(f"SET {name} = '{value}'" if kind == "VARCHAR" else f"SET {name} = {value}")
    seen_by_other = other.execute(f"SELECT current_setting('{name}')").fetchone()[0]
    assert (seen_by_other == value) == (TABLE[name]["Scope"] == "global")
    con.execute(f"RESET {name}")


def test_experiments_are_settings_of_the_extension(reported):
    experiments = readme_experiments()
    assert experiments, "the README's note on experiments lists no setting"
    assert set(experiments) <= set(reported)


def test_rejected_value_leaves_the_previous_one(con):
    con.execute("SET httpfs2_parallel_read_max_fanout = 8")
    with pytest.raises(duckdb.InvalidInputException):
        con.execute("SET httpfs2_parallel_read_max_fanout = 0")
    assert con.execute("SELECT current_setting('httpfs2_parallel_read_max_fanout')").fetchone()[0] == 8


def test_null_is_rejected_naming_the_setting(con, reported):
    for name in reported:
        with pytest.raises(duckdb.InvalidInputException, match=f"Setting '{name}' cannot be NULL"):
            con.execute(f"SET {name} = NULL")


def test_non_numeric_value_is_rejected(con):
    # DuckDB casts the value before the setting's callback sees it: its cast error names no setting.
    with pytest.raises(duckdb.InvalidInputException, match="Could not convert string 'lots' to INT64"):
        con.execute("SET httpfs2_parallel_read_chunk_size_bytes = 'lots'")


def test_booleans_round_trip(con, reported):
    for name, (default, kind, _) in reported.items():
        if kind != "BOOLEAN":
            continue
        flipped = default != "true"
        con.execute(f"SET {name} = {flipped}")
        assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] is flipped
        con.execute(f"RESET {name}")
        assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] is (default == "true")


def test_text_settings_round_trip(con, reported):
    for name, (default, kind, _) in reported.items():
        if kind != "VARCHAR":
            continue
        con.execute(f"SET {name} = '/somewhere/it''s'")
        assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] == "/somewhere/it's"
        con.execute(f"RESET {name}")
        assert con.execute(f"SELECT current_setting('{name}')").fetchone()[0] == default


def test_io_threads_resizes_the_pool(con):
    con.execute("SET GLOBAL httpfs2_parallel_read_io_threads = 3")
    assert con.execute("SELECT DISTINCT io_threads FROM httpfs2_stats()").fetchall() == [(3,)]

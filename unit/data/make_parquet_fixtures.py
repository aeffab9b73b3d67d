"""Writes the Parquet fixtures of parquet_layout_test.cpp and the layouts DuckDB reads them with.

Run with the project's venv (it pins the duckdb package to the DuckDB the extension targets):
    .venv/bin/python test/unit/data/make_parquet_fixtures.py

The layouts come from DuckDB's own parquet_metadata() function, turned into byte ranges by DuckDB 1.5.5's rules
(extension/parquet: ColumnReader::FileOffset and ParquetReader::GetGroupOffset/GetGroupSpan/GetGroupCompressedSize),
so the C++ parser is checked against DuckDB's reading of the metadata rather than against itself.
"""

import os
import sys

import duckdb

DATA_DIR = os.path.dirname(os.path.abspath(__file__))
LAYOUTS_FILE = "parquet_layouts.txt"

# name -> (query, COPY options). Deterministic data (no random()), written on one thread so reruns give the same bytes.
FIXTURES = {
    "row_groups.parquet": (
        """SELECT i AS id,
                  'category_' || (i % 13) AS category,
                  CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 7) % 1000 END::INTEGER AS maybe_null,
                  i / 3.0 AS ratio
           FROM range(10000) t(i)""",
        "ROW_GROUP_SIZE 2048",
    ),
    "nested.parquet": (
        """SELECT i AS id,
                  {'a': i % 100, 'b': CASE WHEN i % 11 = 0 THEN NULL ELSE 'name_' || (i % 17) END} AS s,
                  CASE WHEN i % 9 = 0 THEN NULL ELSE range(i % 4)::INTEGER[] END AS l
           FROM range(6000) t(i)""",
        "ROW_GROUP_SIZE 2048",
    ),
    "single_row_group.parquet": (
        "SELECT i AS id, 'word_' || (i % 3) AS word FROM range(100) t(i)",
        "",
    ),
    "zstd.parquet": (
        """SELECT i AS id, repeat('text_' || (i % 29), 1 + i % 5) AS body, (i % 2 = 0) AS even
           FROM range(5000) t(i)""",
        "ROW_GROUP_SIZE 2500, COMPRESSION 'zstd'",
    ),
}

METADATA_QUERY = """
SELECT row_group_id, column_id, data_page_offset, dictionary_page_offset, index_page_offset,
       total_compressed_size, row_group_compressed_bytes
FROM parquet_metadata(?)
ORDER BY row_group_id, column_id
"""


def chunk_range(data_page_offset, dictionary_page_offset, index_page_offset, total_compressed_size):
    """ColumnReader::FileOffset: the lowest page offset that is set; the chunk is total_compressed_size long."""
    start = min(o for o in (data_page_offset, dictionary_page_offset, index_page_offset) if o is not None)
    return start, total_compressed_size


def row_group_span(columns, row_group_compressed_bytes):
    """GetGroupOffset/GetGroupSpan, empty when GetGroupCompressedSize is 0 (DuckDB then skips the whole-group read)."""
    if not columns:
        return 0, 0
    start = min(offset for offset, _ in columns)
    end = max(offset + length for offset, length in columns)
    compressed = row_group_compressed_bytes or sum(length for _, length in columns)
    return start, (end - start) if compressed else 0


def layout_lines(con, name):
    path = os.path.join(DATA_DIR, name)
    groups = {}
    compressed_bytes = {}
    for row in con.execute(METADATA_QUERY, [path]).fetchall():
        group, column, data, dictionary, index, size, group_bytes = row
        columns = groups.setdefault(group, [])
        assert column == len(columns), "parquet_metadata rows out of column order"
        columns.append(chunk_range(data, dictionary, index, size))
        compressed_bytes[group] = group_bytes
    lines = [f"file {name} {os.path.getsize(path)}"]
    for group in sorted(groups):
        span = row_group_span(groups[group], compressed_bytes[group])
        ranges = " ".join(f"{offset}:{length}" for offset, length in groups[group])
        lines.append(f"row_group {group} span {span[0]}:{span[1]} columns {ranges}")
    return lines


def main():
    con = duckdb.connect()
    con.execute("SET threads = 1")
    lines = [
        f"# Written by make_parquet_fixtures.py with duckdb {duckdb.__version__}; do not edit.",
        "# file <name> <size>, then per row group: row_group <index> span <offset>:<length>"
        " columns <offset>:<length>...",
    ]
    for name, (query, options) in FIXTURES.items():
        path = os.path.join(DATA_DIR, name)
        copy_options = "FORMAT parquet" + (", " + options if options else "")
        con.execute(f"COPY ({query}) TO '{path}' ({copy_options})")
        lines.extend(layout_lines(con, name))
    with open(os.path.join(DATA_DIR, LAYOUTS_FILE), "w") as out:
        out.write("\n".join(lines) + "\n")
    total = sum(os.path.getsize(os.path.join(DATA_DIR, name)) for name in FIXTURES)
    print(f"wrote {len(FIXTURES)} fixtures ({total} bytes) and {LAYOUTS_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main()

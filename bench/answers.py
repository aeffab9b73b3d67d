"""What a correct read answers: DuckDB values in a JSON-able form, and the comparison of two answers that forgives
only what may differ between correct reads (the order of addition in sums of doubles, ties of an ORDER BY).

Kept free of the rig's imports: the worker loads it, and boto3 would add to the peak RSS that writes report.
"""

import datetime
import decimal
import json
import math
import uuid


def normalize(value):
    """A JSON-able form of one DuckDB value: exact for integers and strings, float for decimals and doubles."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, (float, decimal.Decimal)):
        return float(value)
    if isinstance(value, (datetime.date, datetime.datetime, datetime.time)):
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    return str(value)


def normalize_rows(rows) -> list:
    return [[normalize(v) for v in row] for row in rows]


def _same_value(got, expect) -> bool:
    if isinstance(expect, float) or isinstance(got, float):
        if got is None or expect is None:
            return got is expect
        # Sums of doubles depend on the order of addition (threads, row group order).
        return math.isclose(got, expect, rel_tol=1e-9, abs_tol=1e-9)
    return got == expect


def _same_row(got, expect) -> bool:
    return len(got) == len(expect) and all(_same_value(a, b) for a, b in zip(got, expect, strict=True))


def _same_in_order(got, expect) -> bool:
    return len(got) == len(expect) and all(_same_row(g, e) for g, e in zip(got, expect, strict=True))


def same_rows(got: list, expect: list) -> bool:
    """Row by row; when that fails, as multisets ordered by their exact columns (ties of an ORDER BY)."""
    if _same_in_order(got, expect):
        return True

    def key(row):
        return [json.dumps(v) for v in row if not isinstance(v, float)]

    return _same_in_order(sorted(got, key=key), sorted(expect, key=key))

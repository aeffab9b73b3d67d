#!/usr/bin/env python3
"""Appends the 512-byte metadata footer DuckDB checks when it LOADs an extension.

Layout (DuckDB's ParseExtensionMetaData): eight 32-byte fields stored last field first, so byte 96 holds the
ABI type, 128 the extension version, 160 the DuckDB version, 192 the platform and 224 the magic value "4";
then a 256-byte signature, all zeros for an unsigned extension.
"""

import argparse

FIELD = 32
SIGNATURE = 256


def field(text: str) -> bytes:
    raw = text.encode()
    if len(raw) > FIELD:
        raise SystemExit(f"metadata field too long: {text!r}")
    return raw.ljust(FIELD, b"\0")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("extension")
    parser.add_argument("--duckdb-version", required=True)
    parser.add_argument("--platform", required=True)
    parser.add_argument("--extension-version", required=True)
    parser.add_argument("--abi", default="CPP")
    args = parser.parse_args()

    metadata = (
        field("") * 3
        + field(args.abi)
        + field(args.extension_version)
        + field(args.duckdb_version)
        + field(args.platform)
        + field("4")
    )
    with open(args.extension, "ab") as out:
        out.write(metadata + b"\0" * SIGNATURE)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the wheel of duckdb_extension_httpfs2: the package in this folder with an httpfs2 binary at
duckdb_extension_httpfs2/extensions/<DuckDB version>/httpfs2.duckdb_extension, where the duckdb-extension-* wheels
keep theirs. Standard library only: a wheel is a zip of the files and a .dist-info folder whose RECORD has their
sha256 (PEP 427). Prints the wheel's path.

Versions and platform are the binary's own: its metadata footer (scripts/append_metadata.py wrote it from CMake's
values; DuckDB checks it at LOAD) gives the DuckDB version (the folder, the pinned duckdb and, as the official
duckdb-extension-* wheels are versioned, the wheel's version), httpfs2's version (the local label: 2.0.1+httpfs2.0.1.0,
so the wheels of one httpfs2 for several DuckDB versions differ in name, and `pip install
"duckdb_extension_httpfs2==2.0.1"` picks the one for DuckDB 2.0.1) and the platform. The platform tag is
manylinux_<glibc>_<arch> for the oldest glibc that has every symbol version the binary needs (objdump -T) from glibc
and, on the distributions of that manylinux policy, from libstdc++: pip on an older system does not pick a wheel whose
LOAD would fail there.
"""

import argparse
import base64
import hashlib
import re
import subprocess
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LICENSE = HERE.parent.parent / "LICENSE"
PACKAGE = "duckdb_extension_httpfs2"
PACKAGE_FILES = ("__init__.py", "py.typed")
# The Pythons of the duckdb each wheel requires (its pyproject.toml's requires-python), by DuckDB's major.minor.
REQUIRES_PYTHON = {"1.5": ">=3.10", "2.0": ">=3.11"}
FOOTER_BYTES = 512
FIELD_BYTES = 32
ARCHES = {"linux_amd64": "x86_64"}
# The oldest manylinux glibc whose policy allows a libstdc++ symbol version, as the libstdc++ of that policy's
# distributions has it (auditwheel's manylinux-policy.json, x86_64): a build with GCC 12 needs GLIBCXX_3.4.30, which
# AlmaLinux 9 (glibc 2.34, GCC 11) lacks, so it is manylinux_2_35.
LIBSTDCXX_GLIBC = {
    "GLIBCXX": {
        (3, 4, 19): (2, 17),
        (3, 4, 22): (2, 24),
        (3, 4, 24): (2, 27),
        (3, 4, 28): (2, 31),
        (3, 4, 29): (2, 34),
        (3, 4, 30): (2, 35),
    },
    "CXXABI": {(1, 3, 7): (2, 17), (1, 3, 10): (2, 24), (1, 3, 11): (2, 27), (1, 3, 12): (2, 31), (1, 3, 13): (2, 34)},
}
OLDEST_GLIBC = (2, 17)  # manylinux2014's, the oldest tag pip still meets
# Every entry gets this time, so the same binary gives the same wheel byte for byte.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def footer(binary: Path) -> dict[str, str]:
    """The fields of the binary's metadata footer: eight of 32 bytes, last field first, then the signature."""
    with binary.open("rb") as file:
        file.seek(-FOOTER_BYTES, 2)
        raw = file.read(FOOTER_BYTES)
    fields = [raw[i * FIELD_BYTES : (i + 1) * FIELD_BYTES].rstrip(b"\0").decode() for i in range(8)]
    if fields[7] != "4":
        raise SystemExit(f"{binary}: no DuckDB extension metadata footer")
    return {"extension_version": fields[4], "duckdb_version": fields[5], "platform": fields[6]}


def platform_tag(binary: Path, platform: str) -> str:
    """manylinux_<major>_<minor>_<arch> (PEP 600) of the oldest glibc that has every GLIBC_, GLIBCXX_ and CXXABI_
    symbol version the binary needs."""
    if platform not in ARCHES:
        raise SystemExit(f"{binary}: platform {platform} has no wheel tag here (only {', '.join(ARCHES)})")
    symbols = subprocess.run(["objdump", "-T", str(binary)], capture_output=True, text=True, check=True).stdout
    glibc = OLDEST_GLIBC
    for library, found in re.findall(r"\b(GLIBC|GLIBCXX|CXXABI)_([0-9][0-9.]*)", symbols):
        needed = tuple(int(part) for part in found.split("."))
        if library == "GLIBC":
            glibc = max(glibc, needed[:2])
            continue
        covering = [oldest for allowed, oldest in LIBSTDCXX_GLIBC[library].items() if allowed >= needed]
        if not covering:
            raise SystemExit(f"{binary}: needs {library}_{found}, newer than the manylinux policies known here")
        glibc = max(glibc, min(covering))
    return f"manylinux_{glibc[0]}_{glibc[1]}_{ARCHES[platform]}"


def metadata(version: str, duckdb_version: str) -> str:
    readme = (HERE / "README.md").read_text()
    return (
        "Metadata-Version: 2.4\n"
        f"Name: {PACKAGE}\n"
        f"Version: {version}\n"
        "Summary: httpfs2, the DuckDB extension that makes remote reads fast, and a helper that loads it\n"
        "License-Expression: MIT\n"
        "License-File: LICENSE\n"
        f"Requires-Python: {REQUIRES_PYTHON[duckdb_version.rsplit('.', 1)[0]]}\n"
        f"Requires-Dist: duckdb=={duckdb_version}\n"
        "Description-Content-Type: text/markdown\n"
        f"\n{readme}"
    )


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}\n"


def write_wheel(binary: Path, out: Path) -> Path:
    fields = footer(binary)
    release = fields["extension_version"].removeprefix("v")
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", release):
        raise SystemExit(f"{binary}: extension version {fields['extension_version']} is not a release number")
    duckdb_version = fields["duckdb_version"].removeprefix("v")
    version = f"{duckdb_version}+httpfs2.{release}"
    if duckdb_version.rsplit(".", 1)[0] not in REQUIRES_PYTHON:
        raise SystemExit(f"{binary}: DuckDB {duckdb_version} has no Requires-Python here: add it to REQUIRES_PYTHON")
    tag = f"py3-none-{platform_tag(binary, fields['platform'])}"
    dist_info = f"{PACKAGE}-{version}.dist-info"
    files = {f"{PACKAGE}/{name}": (HERE / PACKAGE / name).read_bytes() for name in PACKAGE_FILES}
    files[f"{PACKAGE}/extensions/{fields['duckdb_version']}/httpfs2.duckdb_extension"] = binary.read_bytes()
    files[f"{dist_info}/METADATA"] = metadata(version, duckdb_version).encode()
    files[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: httpfs2 packaging/python/build_wheel.py\nRoot-Is-Purelib: true\nTag: {tag}\n"
    ).encode()
    files[f"{dist_info}/licenses/LICENSE"] = LICENSE.read_bytes()
    record = "".join(record_line(name, data) for name, data in files.items()) + f"{dist_info}/RECORD,,\n"
    files[f"{dist_info}/RECORD"] = record.encode()

    wheel = out / f"{PACKAGE}-{version}-{tag}.whl"
    partial = wheel.with_name(wheel.name + ".partial")  # never a half-written wheel under the wheel's name
    with zipfile.ZipFile(partial, "w") as archive:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, ZIP_TIME)
            entry.external_attr = 0o644 << 16
            archive.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED)
    partial.replace(wheel)
    return wheel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("extension", type=Path, help="the httpfs2.duckdb_extension to package")
    parser.add_argument("out", type=Path, help="the folder to write the wheel into")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(write_wheel(args.extension, args.out))


if __name__ == "__main__":
    main()

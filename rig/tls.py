"""A certificate authority and a server certificate for the rig's TLS, made with the `openssl` CLI at each start into
the rig's scratch folder (removed with it; never committed). Two certificates, not one self-signed: rustls (obstore)
refuses a CA certificate as a server's, and a server certificate as a CA."""

import shutil
import subprocess
from pathlib import Path

DAYS = "2"  # a rig lives for one run


def _openssl(*args, cwd: Path):
    if shutil.which("openssl") is None:
        raise RuntimeError("the rig's TLS needs the openssl CLI (apt-get install openssl)")
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certificate(folder: Path, ip: str) -> tuple:
    """(ca.pem, server.pem, server.key) in `folder`: a CA, and a certificate for `ip` and localhost that it signed."""
    folder.mkdir(parents=True, exist_ok=True)
    _openssl(
        *("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", DAYS, "-subj", "/CN=httpfs2 rig CA"),
        *("-keyout", "ca.key", "-out", "ca.pem"),
        *("-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"),
        cwd=folder,
    )
    (folder / "server.ext").write_text(
        f"basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
        f"extendedKeyUsage=serverAuth\nsubjectAltName=IP:{ip},DNS:localhost\n"
    )
    _openssl(
        *("req", "-newkey", "rsa:2048", "-nodes", "-subj", f"/CN={ip}", "-keyout", "server.key", "-out", "server.csr"),
        cwd=folder,
    )
    _openssl(
        *("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial"),
        *("-days", DAYS, "-extfile", "server.ext", "-out", "server.pem"),
        cwd=folder,
    )
    return folder / "ca.pem", folder / "server.pem", folder / "server.key"

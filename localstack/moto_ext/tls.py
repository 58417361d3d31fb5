"""The test bed's TLS: one CA in the role of RDS's CA bundle ("Using SSL/TLS to encrypt a connection
to a DB instance or cluster", https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/UsingWithRDS.SSL.html),
and the server certificate every real server (``engines.py``) presents, made once per moto run with
openssl. ``GET /_rds_ext/ca.pem`` serves the CA, which the operator's ``--ca-bundle`` takes.
"""

from __future__ import annotations

import os
import subprocess
import threading

ROOT = os.environ.get("MOTO_RDS_ENGINES_DIR") or f"/tmp/moto-rds-engines-{os.environ.get('MOTO_PORT', '4566')}"
NETWORK = os.environ.get("MOTO_RDS_ENGINE_NETWORK") or "127.0.0"
_LOCK = threading.Lock()
DIR = os.path.join(ROOT, "tls")


def files() -> dict[str, str]:
    """The test bed's CA and the one server certificate every server presents, made once per
    run: its names are every address a server or endpoint can have (the engine network's and the
    loopback range's), so a client verifies the host it connects to (verify-full)."""
    files = {k: os.path.join(DIR, f"{k}.pem") for k in ("ca", "ca-key", "server", "server-key")}
    with _LOCK:
        if os.path.exists(files["server"]):
            return files
        os.makedirs(DIR, exist_ok=True)
        names = ["DNS:localhost"] + [f"IP:{net}.{n}" for net in sorted({NETWORK, "127.0.0"}) for n in range(1, 255)]
        ext = os.path.join(DIR, "server.ext")
        with open(ext, "w") as f:
            f.write("subjectAltName=" + ",".join(names) + "\nbasicConstraints=CA:FALSE\n"
                    "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
        csr = os.path.join(DIR, "server.csr")
        for cmd in (
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj",
             "/CN=moto_ext test-bed RDS CA", "-keyout", files["ca-key"], "-out", files["ca"]],
            ["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=rds.test-bed",
             "-keyout", files["server-key"], "-out", csr],
            ["openssl", "x509", "-req", "-in", csr, "-CA", files["ca"], "-CAkey", files["ca-key"],
             "-CAcreateserial", "-days", "3650", "-extfile", ext, "-out", files["server"]],
        ):
            done = subprocess.run(cmd, capture_output=True, timeout=60)
            if done.returncode != 0:
                raise RuntimeError(f"openssl failed: {done.stderr.decode(errors='replace')[-300:]}")
        os.chmod(files["server-key"], 0o644)
        return files


def ca_bundle() -> bytes:
    with open(files()["ca"], "rb") as f:
        return f.read()

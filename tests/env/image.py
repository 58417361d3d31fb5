#!/usr/bin/env python3
"""Builds a one-layer container image archive (docker-archive, which `ctr images import` reads)
from files on this machine, since no registry, and so no base image, is reachable here.

    image.py OUT.tar NAME:TAG --user UID:GID --entrypoint '["/bin"]' [--cmd '["run"]']
             [--env K=V ...] [--workdir /] FILE=SRC ... [DIR/]

FILE=SRC copies SRC (a file, or a folder with what is in it) to FILE in the image; a bare `DIR/` makes an empty directory. Every
file is owned by root and not writable by others; every directory is 0755 except `/tmp` (1777).
"""

import argparse
import hashlib
import io
import json
import os
import tarfile
import time


def layer(entries: list[str]) -> bytes:
    buf = io.BytesIO()
    made: set[str] = set()
    now = int(time.time())
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:

        def directory(path: str) -> None:
            path = path.strip("/")
            if not path or path in made:
                return
            directory(os.path.dirname(path))
            info = tarfile.TarInfo(path + "/")
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if path == "tmp" else 0o755
            info.mtime = now
            tar.addfile(info)
            made.add(path)

        for entry in entries:
            if "=" not in entry:
                directory(entry)
                continue
            dest, src = entry.split("=", 1)
            dest = dest.strip("/")
            if os.path.isdir(src):
                for root, _, files in os.walk(src):
                    for name in sorted(files):
                        path = os.path.join(root, name)
                        rel = os.path.relpath(path, src)
                        entries.append(f"{dest}/{rel}={path}")
                continue
            directory(os.path.dirname(dest))
            with open(src, "rb") as f:
                data = f.read()
            info = tarfile.TarInfo(dest)
            info.size = len(data)
            info.mode = 0o755 if os.access(src, os.X_OK) else 0o644
            info.mtime = now
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("name")
    p.add_argument("--user", default="0:0")
    p.add_argument("--entrypoint", default="[]")
    p.add_argument("--cmd", default="[]")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--workdir", default="/")
    p.add_argument("files", nargs="*")
    a = p.parse_intermixed_args()
    blob = layer(a.files)
    diff_id = "sha256:" + hashlib.sha256(blob).hexdigest()
    config = {
        "architecture": "amd64",
        "os": "linux",
        "config": {
            "User": a.user,
            "Entrypoint": json.loads(a.entrypoint),
            "Cmd": json.loads(a.cmd),
            "Env": ["PATH=/usr/local/bin:/usr/bin:/bin"] + a.env,
            "WorkingDir": a.workdir,
        },
        "rootfs": {"type": "layers", "diff_ids": [diff_id]},
        "history": [{"created_by": "tests/env/image.py"}],
    }
    config_bytes = json.dumps(config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    layer_name = diff_id[len("sha256:"):] + "/layer.tar"
    manifest = [{"Config": config_name, "RepoTags": [a.name], "Layers": [layer_name]}]
    with tarfile.open(a.out, "w") as out:
        for name, data in [
            (config_name, config_bytes),
            (layer_name, blob),
            ("manifest.json", json.dumps(manifest).encode()),
        ]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            out.addfile(info, io.BytesIO(data))


if __name__ == "__main__":
    main()

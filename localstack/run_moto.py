"""Runs moto in server mode with the time-faithful RDS extension (moto_ext).

Usage: python run_moto.py [--host 127.0.0.1] [--port 4566]
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import moto_ext  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=int(os.environ.get("MOTO_PORT", "4566")))
    args = parser.parse_args()
    os.environ.setdefault("MOTO_PORT", str(args.port))

    moto_ext.install()

    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple

    app = moto_ext.ControlMiddleware(DomainDispatcherApplication(create_backend_app))
    print(f"moto {moto_ext.PINNED_MOTO} with moto_ext on http://{args.host}:{args.port} delays={moto_ext.CONFIG}", flush=True)
    run_simple(args.host, args.port, app, threaded=True, request_handler=MotoRequestHandler)


if __name__ == "__main__":
    main()

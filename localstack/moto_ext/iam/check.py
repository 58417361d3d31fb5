#!/usr/bin/env python3
"""The emulator's one check of an IAM database authentication token, as a program: run by
``rds_iam.c`` (the MariaDB servers' AWSAuthenticationPlugin, and PostgreSQL's PAM module), with the
token on stdin and the user logging in in PAM_USER.
It asks the emulator (``POST /_rds_ext/iam-auth``, ``iam_auth.py``), which knows the instance, its
endpoints and the signing keys; exit status 0 lets the login in. Usage: check.py URL SERVER."""

import json
import os
import sys
import urllib.request


def main() -> int:
    if len(sys.argv) != 3:
        return 2
    url, server = sys.argv[1], sys.argv[2]
    token = sys.stdin.read().rstrip("\0\r\n")
    body = json.dumps({"server": server, "user": os.environ.get("PAM_USER", ""), "token": token}).encode()
    request = urllib.request.Request(f"{url}/_rds_ext/iam-auth", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            verdict = json.load(answer)
    except OSError as e:
        print(f"rds-iam: the emulator did not answer: {e}", file=sys.stderr)
        return 1
    if verdict.get("ok"):
        return 0
    print(f"rds-iam: refused: {verdict.get('why')}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())

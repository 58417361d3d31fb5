"""moto's own RDS tests (tests/test_rds/ of moto's source distribution, at the pinned version), run
in-process with moto_ext installed: the emulator must keep every promise moto's tests hold it to,
or the failure must be listed in known_failures.txt with the AWS page that shows RDS does not do
what moto's test expects.

`localstack/moto.sh suite` fetches the tests and runs them; this file is copied beside them.
A failure not listed fails the run, and so does a listed test that passes (the list is kept true).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.environ["MOTO_EXT_DIR"])

# Every reply held to RDS's service model (moto_ext/model_check.py).
os.environ["MOTO_EXT_STRICT"] = "1"

import moto_ext  # noqa: E402
from moto_ext import model_check  # noqa: E402

moto_ext.install()

LISTED: dict[str, str] = {}
for line in Path(os.environ["MOTO_SUITE_LIST"]).read_text().splitlines():
    line = line.strip()
    if line and not line.startswith("#"):
        test, _, why = line.partition(" ")
        LISTED[test] = why.strip()

SEEN: dict[str, str] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" and not report.failed:
        return
    name = item.nodeid.split("tests/", 1)[-1]
    if report.failed:
        SEEN[name] = "failed"
        if name in LISTED:
            # Listed: RDS does not do what moto's test expects (the page is in the list).
            # Reported as an expected failure (xfailed), with its reason.
            report.outcome = "skipped"
            report.wasxfail = f"listed: {LISTED[name]}"
    elif report.when == "call":
        SEEN.setdefault(name, "passed")


def pytest_sessionfinish(session, exitstatus):
    broken = model_check.take()
    if broken:
        print(f"\n{len(broken)} replies broke RDS's service model:")
        for text in sorted(set(broken)):
            print(f"  {text}")
        session.exitstatus = 1
    passing = sorted(t for t in LISTED if SEEN.get(t) == "passed")
    unknown = sorted(t for t in LISTED if t not in SEEN)
    if passing or unknown:
        for t in passing:
            print(f"\nlisted in known_failures.txt but passes: {t}")
        for t in unknown:
            print(f"\nlisted in known_failures.txt but not run: {t}")
        session.exitstatus = 1

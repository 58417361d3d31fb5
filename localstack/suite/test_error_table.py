"""crates/aws/src/aws_error/model_errors.txt is what the service models say: the codes the operator's error
table (crates/aws/src/aws_error/table.rs) must class come from botocore's service-2.json, not from a list
kept by hand (issue 52). Regenerate with `make model-errors`."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.environ["MOTO_EXT_DIR"])

import model_errors  # noqa: E402


def test_the_committed_error_codes_are_the_service_models():
    committed = model_errors.FILE.read_text().splitlines()
    assert committed == model_errors.lines(), "stale: run `make model-errors`"

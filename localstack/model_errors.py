"""The error codes AWS's service models (botocore's service-2.json, as the emulator's botocore has
them) list for every operation of the services the operator calls: `crates/aws/src/aws_error/model_errors.txt`,
whose codes `crates/aws/src/aws_error/table.rs` must each class (its coverage test). Regenerate with
`make model-errors`; localstack/suite/test_error_table.py fails while the file is stale.

One line per operation: service, operation, then its codes as they come on the wire (an error
shape's `error.code`, else its name), sorted.
"""

from __future__ import annotations

import sys
from pathlib import Path

SERVICES = ["rds", "secretsmanager", "resourcegroupstaggingapi", "sts", "sqs", "cloudwatch"]
FILE = Path(__file__).resolve().parent.parent / "crates" / "aws" / "src" / "aws_error" / "model_errors.txt"


def lines() -> list[str]:
    import botocore
    import botocore.session

    session = botocore.session.get_session()
    out = [f"# botocore {botocore.__version__}: service operation code... (localstack/model_errors.py)"]
    for service in SERVICES:
        model = session.get_service_model(service)
        for name in model.operation_names:
            shapes = model.operation_model(name).error_shapes
            codes = sorted({s.metadata.get("error", {}).get("code") or s.name for s in shapes})
            out.append(" ".join([service, name, *codes]))
    return out


if __name__ == "__main__":
    FILE.write_text("\n".join(lines()) + "\n")
    print(f"wrote {FILE}", file=sys.stderr)

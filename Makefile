# Entry points for people. CI runs .ci/run, which calls `make lint` and `make test`.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/rds-operator/target

.PHONY: run stop test lint crds manifests model-errors build

## run: local control plane + moto + the operator, with the Coffee Manage sample database
## (NODE=1: on a real node, the operator installed by helm as a Pod, the app as a Deployment)
run:
	NODE=$(NODE) tests/env/demo.sh start

## stop: stop what `make run` started
stop:
	tests/env/demo.sh stop

## test: unit and integration tests (starts moto unless AWS_ENDPOINT_URL is set)
test:
	tests/run.sh

## lint: formatting and clippy
lint:
	cargo fmt --all --check
	cargo clippy --locked --workspace --all-targets -- -D warnings

## crds: regenerate every registered kind's CRD (src/kinds.rs) in crds/ and the chart's crds/, the
## chart's Artifact Hub annotations, then deploy/ and the OLM bundle
crds:
	cargo run --quiet --locked -- crd --out crds
	cargo run --quiet --locked -- crd --out helm/rds-operator/crds
	cargo run --quiet --locked -- chart-annotations
	$(MAKE) manifests

## manifests: render deploy/*.yaml from the Helm chart, then the OLM bundle (bundle/) from them
manifests:
	helm/render-deploy.sh
	cargo run --quiet --locked -- olm-bundle --out bundle

## model-errors: the error codes the RDS, Secrets Manager, tagging, STS and SQS models list per
## operation (crates/aws/src/aws_error/model_errors.txt), which crates/aws/src/aws_error/table.rs must each class
model-errors:
	localstack/moto.sh install >/dev/null
	$(HOME)/.cache/rds-operator/moto-venv/bin/python localstack/model_errors.py

build:
	cargo build --locked

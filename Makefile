# Entry points for people. CI runs .ci/run, which calls `make lint` and `make test`.
export CARGO_TARGET_DIR ?= $(HOME)/.cache/rds-operator/target

.PHONY: run stop test lint crds manifests build

## run: local control plane + moto + the operator, with the Coffee Manage sample database
run:
	tests/env/demo.sh start

## stop: stop what `make run` started
stop:
	tests/env/demo.sh stop

## test: unit and integration tests (starts moto unless AWS_ENDPOINT_URL is set)
test:
	tests/run.sh

## lint: formatting and clippy
lint:
	cargo fmt --check
	cargo clippy --locked --all-targets -- -D warnings

## crds: regenerate crds/*.yaml (and the chart's copies) from src/dbinstance/, src/dbsubnetgroup/ and src/dbparametergroup/, then deploy/
crds:
	cargo run --quiet --locked -- crd dbinstance > crds/dbinstance.yaml
	cargo run --quiet --locked -- crd dbsubnetgroup > crds/dbsubnetgroup.yaml
	cargo run --quiet --locked -- crd dbparametergroup > crds/dbparametergroup.yaml
	cp crds/dbinstance.yaml crds/dbsubnetgroup.yaml crds/dbparametergroup.yaml helm/rds-operator/crds/
	$(MAKE) manifests

## manifests: render deploy/*.yaml from the Helm chart
manifests:
	helm/render-deploy.sh

build:
	cargo build --locked

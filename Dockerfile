# syntax=docker/dockerfile:1
# The rds-operator image: a static (musl) build of the same crate and Cargo.lock the tests run,
# on a distroless non-root base. Build: docker build -t rds-operator .

FROM rust:1.95-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends musl-tools cmake clang && rm -rf /var/lib/apt/lists/* \
 && rustup target add x86_64-unknown-linux-musl
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY crds ./crds
COPY tests ./tests
RUN cargo build --release --locked --target x86_64-unknown-linux-musl --bin rds-operator \
 && cp target/x86_64-unknown-linux-musl/release/rds-operator /rds-operator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /rds-operator /rds-operator
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/rds-operator"]
CMD ["run"]

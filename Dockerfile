# syntax=docker/dockerfile:1
# The rds-operator image: a static (musl) build of the same crate and Cargo.lock the tests run,
# on a distroless non-root base, for amd64 and arm64. Build one:
#   docker build -t rds-operator .
# or both (the build stage runs on each platform, emulated where it is not the host's):
#   docker buildx build --platform linux/amd64,linux/arm64 -t rds-operator .

FROM rust:1.95-bookworm AS build
ARG TARGETARCH
RUN case "${TARGETARCH:-amd64}" in \
      amd64) echo x86_64-unknown-linux-musl ;; \
      arm64) echo aarch64-unknown-linux-musl ;; \
      *) echo "no Rust target for TARGETARCH=$TARGETARCH" >&2; exit 1 ;; \
    esac >/rust-target \
 && apt-get update && apt-get install -y --no-install-recommends musl-tools cmake clang && rm -rf /var/lib/apt/lists/* \
 && rustup target add "$(cat /rust-target)"
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY crds ./crds
COPY tests ./tests
RUN cargo build --release --locked --target "$(cat /rust-target)" --bin rds-operator \
 && cp "target/$(cat /rust-target)/release/rds-operator" /rds-operator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /rds-operator /rds-operator
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/rds-operator"]
CMD ["run"]

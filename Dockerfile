# syntax=docker/dockerfile:1
#
# The service's image: the `serve` binary alone (no simulator or demo), run as a non-root
# user on a read-only root filesystem. Everything it writes (the SQLite database and the
# spool) goes under /var/lib/scaling-facts, a volume; the tokens file and the database
# URL come from mounted Secrets (deploy/).
#
#   docker build -t scaling-facts:0.1.0 .
#
# `.ci/run` builds the same binary with the command of the build stage below, read from
# this file, and tests/deploy.rs checks the stages, the user and the flags.

ARG RUST_VERSION=1.94

FROM rust:${RUST_VERSION}-slim-bookworm AS build
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --no-default-features -p scaling-facts --bin scaling-facts \
 && install -D -m 0755 target/release/scaling-facts /out/scaling-facts

FROM debian:bookworm-slim AS runtime
# The data directory belongs to the user the service runs as; nothing else is writable.
RUN install -d -o 65532 -g 65532 -m 0750 /var/lib/scaling-facts
COPY --from=build /out/scaling-facts /usr/local/bin/scaling-facts
# Container defaults: listen on every interface, keep the database and the spool on the
# volume. Every other setting keeps the binary's documented default.
ENV SCALING_FACTS_LISTEN_ADDR=0.0.0.0:8080 \
    SCALING_FACTS_DATABASE_URL=sqlite:///var/lib/scaling-facts/scaling-facts.db?mode=rwc \
    SCALING_FACTS_SPOOL_PATH=/var/lib/scaling-facts/scaling-facts.spool \
    SCALING_FACTS_LOG_FORMAT=json
USER 65532:65532
WORKDIR /var/lib/scaling-facts
VOLUME ["/var/lib/scaling-facts"]
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/scaling-facts"]
CMD ["serve"]

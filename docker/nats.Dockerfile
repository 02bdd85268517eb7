# NATS from Debian's package, for runs without an image registry (docker/local-images.sh); docker-compose.yml uses
# the official image unless ALFRED_NATS_IMAGE names this one. Debian bookworm ships nats-server 2.9: pair it with
# docker/nats/nats-2.9.conf (ALFRED_NATS_CONF), which says what that costs.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends nats-server wget \
  && rm -rf /var/lib/apt/lists/* && mkdir -p /data
EXPOSE 4222 8222
ENTRYPOINT ["nats-server"]

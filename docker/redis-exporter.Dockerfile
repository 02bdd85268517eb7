# The Redis exporter from Debian's package (prometheus-redis-exporter 1.45), for runs without an image registry
# (docker/local-images.sh); the `metrics` profile of docker-compose.yml uses the official image unless
# ALFRED_REDIS_EXPORTER_IMAGE names this one. Both read REDIS_ADDR and serve /metrics on 9121.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends prometheus-redis-exporter \
  && rm -rf /var/lib/apt/lists/*
USER nobody
EXPOSE 9121
ENTRYPOINT ["prometheus-redis-exporter"]

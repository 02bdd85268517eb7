# Redis from Debian's package, for runs without an image registry (docker/local-images.sh); docker-compose.yml uses
# the official image unless ALFRED_REDIS_IMAGE names this one. The compose command line sets every option it needs.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends redis-server \
  && rm -rf /var/lib/apt/lists/* && mkdir -p /data
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]

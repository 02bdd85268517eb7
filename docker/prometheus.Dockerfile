# Prometheus from Debian's package, for runs without an image registry (docker/local-images.sh); the `metrics`
# profile of docker-compose.yml uses the official image unless ALFRED_PROMETHEUS_IMAGE names this one.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
RUN apt-get update && apt-get install -y --no-install-recommends prometheus \
  && rm -rf /var/lib/apt/lists/* && mkdir -p /prometheus
EXPOSE 9090
ENTRYPOINT ["prometheus"]

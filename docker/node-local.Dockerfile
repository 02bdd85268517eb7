# A stand-in for node:24-bookworm-slim made without any image registry (docker/local-images.sh): the Debian base
# from debootstrap, the Node 24 binary that npm installed on the host (node_modules/node), and the official image's
# `node` user (uid 1000). The app's Dockerfile builds on it with NODE_IMAGE=alfred-local/node:24.
ARG BASE_IMAGE=alfred-local/debian:bookworm-slim
FROM ${BASE_IMAGE}
COPY .docker-host-app/bin/node /usr/local/bin/node
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
  && node --version

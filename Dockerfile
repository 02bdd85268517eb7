# One image for every service; docker-compose picks the service with the command.
# Build arguments (defaults: the official Node image, the app installed and built inside):
#   NODE_IMAGE       a Node 24 image on Debian bookworm that has a `node` user (alfred-local/node:24 is built
#                    without any registry by docker/local-images.sh)
#   ALFRED_APP_FROM  npm: `npm install` and build here; host: copy the app the host built (.docker-host-app,
#                    made by docker/local-images.sh) for machines whose containers cannot reach the npm registry
# e2e/image-build.e2e-spec.ts runs the app-npm stage's steps on the host, in this order.
ARG NODE_IMAGE=node:24-bookworm-slim
ARG ALFRED_APP_FROM=npm

FROM ${NODE_IMAGE} AS app-npm
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# Without scripts: the root `prepare` script builds sources that are not copied yet, and no production dependency
# needs its install script (the native binaries ship inside their packages; .npmrc skips onnxruntime's download).
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY libs libs
COPY services services
COPY bench bench
# The web console's source; `npm run build` bundles it with Vite into dist/console, which the gateway serves.
COPY console console
# The build script (it builds what changed; here, everything).
COPY scripts scripts
# Production dependencies only, trimmed to what Node loads on this platform (docker/slim-node-modules.mjs says what
# goes; the image's size budget is checked by the compose e2e).
COPY docker/slim-node-modules.mjs docker/
RUN npm run build && npm prune --omit=dev --ignore-scripts && node docker/slim-node-modules.mjs node_modules

FROM ${NODE_IMAGE} AS app-host
WORKDIR /app
COPY .docker-host-app/node_modules node_modules
COPY .docker-host-app/dist dist

FROM app-${ALFRED_APP_FROM} AS app

# The image every service runs (`--target service`; compose's `x-service`).
FROM ${NODE_IMAGE} AS service
# curl: every bundled skill calls the API with it from the agent's bash tool.
# bubblewrap: the OS sandbox around executable skills and the agent's bash (libs/sandbox/README.md).
RUN apt-get update && apt-get install -y --no-install-recommends curl ca-certificates bubblewrap \
  && rm -rf /var/lib/apt/lists/*
# Every volume's mount point exists and belongs to `node`, so a new named volume is writable by the services.
RUN mkdir -p /data/models /data/project/.alfred/skills /data/executable-skills /data/skill-runner/data \
    /data/workspaces /data/vectors /data/tenant-skills /data/skill-installs \
  && chown -R node:node /data
WORKDIR /app
ENV NODE_ENV=production
# No process in this image opens an inspector on SIGUSR1.
ENV NODE_OPTIONS=--disable-sigusr1
COPY --from=app /app/node_modules node_modules
COPY --from=app /app/dist dist
COPY package.json .npmrc ./
COPY skills skills
COPY bin bin
# The `metrics` profile's NATS exporter, and the entrypoint of the two services that run bubblewrap (x-sandboxed in
# docker-compose.yml: it makes the mounts bubblewrap needs, then runs the service as `node` with no capabilities).
COPY docker/nats-exporter.mjs docker/
COPY docker/sandbox-entrypoint.sh /usr/local/bin/alfred-sandbox-entrypoint
USER node

# The skill-registry's image: the services' image and git with ssh, which only the registry uses (it installs skills
# from git repositories, services/skill-registry/src/install). The other services' image stays without them (~90 MB).
FROM service AS skill-registry
USER root
RUN apt-get update && apt-get install -y --no-install-recommends git openssh-client \
  && rm -rf /var/lib/apt/lists/*
USER node

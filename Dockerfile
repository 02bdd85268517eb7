# One image for every service; docker-compose picks the service with the command.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY libs libs
COPY services services
COPY bench bench
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
# bubblewrap: the OS sandbox around executable skills and the agent's bash (curl: what skills' commands call the API with).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap curl && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production
# No process in this image opens an inspector on SIGUSR1.
ENV NODE_OPTIONS=--disable-sigusr1
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
COPY skills skills
COPY bin bin
USER node

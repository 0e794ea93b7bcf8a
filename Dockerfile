# openvat: the service on a supported Node LTS, as a non-root user, listening on 0.0.0.0:8080.
#
#   docker build -t openvat .
#   docker run -p 8080:8080 -v openvat:/data openvat
#
# The embedded shape: SQLite under the /data volume; the first start prints a test key once.
# With DATABASE_URL=postgres://… (and REDIS_URL) it is one instance of the scaled shape.
# docs/deployment.md ("Container image and cluster shapes") has the details.

# Node 24, the Active LTS (docs/development.md, "Node versions"); NODE_VERSION=22 builds on 22.
ARG NODE_VERSION=24
ARG DEBIAN_RELEASE=bookworm

# Production dependencies, better-sqlite3 compiled for this Node when no prebuilt binary is at hand.
FROM docker.io/library/node:${NODE_VERSION}-${DEBIAN_RELEASE}-slim AS deps
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
# node-gyp builds against the headers that come with Node instead of downloading them.
ENV npm_config_nodedir=/usr/local
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
RUN --mount=type=cache,target=/root/.npm \
  npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
  && npm rebuild better-sqlite3 \
  && rm -rf node_modules/@openvat node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
    node_modules/better-sqlite3/build/Release/obj.target node_modules/better-sqlite3/build/Release/.deps \
    node_modules/better-sqlite3/build/Release/test_extension.node

# The build: src/ bundled into dist/cli/ by esbuild (scripts/build.mjs; dev dependencies stay in this stage).
FROM docker.io/library/node:${NODE_VERSION}-${DEBIAN_RELEASE}-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/
COPY src src
RUN node scripts/build.mjs

FROM docker.io/library/node:${NODE_VERSION}-${DEBIAN_RELEASE}-slim
ARG VERSION=0.1.0
ARG REVISION=""
LABEL org.opencontainers.image.title="openvat" \
  org.opencontainers.image.description="Self-hostable VAT validation service" \
  org.opencontainers.image.version="${VERSION}" \
  org.opencontainers.image.licenses="Apache-2.0" \
  org.opencontainers.image.revision="${REVISION}"
ENV NODE_ENV=production \
  HOST=0.0.0.0 \
  PORT=8080 \
  DATABASE_URL=sqlite:/data/openvat.sqlite
WORKDIR /app
COPY package.json README.md LICENSE CHANGELOG.md ./
COPY data/rates.json data/
COPY public public
COPY docs docs
COPY clients/typescript/README.md clients/typescript/
COPY clients/typescript/examples clients/typescript/examples
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
# `openvat …` in the container (e.g. `docker exec CONTAINER openvat keys create`); /data for the
# node user (uid 1000), the only place the service writes.
RUN chmod 755 dist/cli/index.js \
  && ln -s /app/dist/cli/index.js /usr/local/bin/openvat \
  && mkdir /data \
  && chown 1000:1000 /data
USER 1000:1000
VOLUME /data
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "/app/dist/cli/index.js"]
CMD ["serve"]

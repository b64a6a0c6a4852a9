# One image for every role: `docker run queueworks api --service invoice`, `... worker --queues
# invoice-render --concurrency 4`. (`start`, the all-in-one dev mode, needs redis-server: not here.)
FROM node:20-bookworm-slim

WORKDIR /app
# Dependencies first, so code changes do not reinstall them. Runtime dependencies only: tsx (runs
# the TypeScript sources directly) and the invoice fonts (@embedpdf/fonts-*) are among them.
COPY package.json package-lock.json .npmrc ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY tsconfig.json ./
COPY src ./src
COPY jobs ./jobs
COPY workers ./workers
COPY scripts ./scripts
# The web consoles' bundles, built now: the service runs as `node`, which cannot write here.
RUN node --import tsx scripts/build-console.ts

ENV NODE_ENV=production HOST=0.0.0.0
USER node
EXPOSE 3001 3002 3003
# Node receives SIGTERM directly (exec form), so graceful shutdown works under `docker stop`.
ENTRYPOINT ["node", "--import", "tsx", "src/main.ts"]
CMD ["api"]

# adops-export worker image: the compiled CLI on Node 22 (LTS). Build: docker build -t adops-export .
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY bench ./bench
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY sql ./sql
COPY jobs ./jobs
USER node
# The worker's /metrics and /health (ADOPS_METRICS_PORT); set ADOPS_METRICS_HOST=0.0.0.0 to reach them from outside the container.
EXPOSE 9464
ENTRYPOINT ["node", "bin/adops.js"]
CMD ["worker"]

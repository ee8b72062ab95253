# One image for every role; the role is chosen by the command (see docker-compose.yml).
# Node 26: the current LTS (docs/operations.md "Node versions"); its images are Debian 13 (trixie).

# The build: the TypeScript compiler (a dev dependency) turns src/ into dist/ with the templates it reads.
FROM node:26-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:26-trixie-slim

# Chromium's headless shell prints the PDFs (found through CHROMIUM_PATH; docs/documents.md "The browser");
# fonts ship with the app.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium-headless-shell ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# NODE_OPTIONS: V8's young generation at 2 x 8 MiB instead of 2 x 16 for every node of the image (the server,
# its roles, the admin CLI): some 15 MiB less, no CPU per request measurable above the noise.
ENV CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell NODE_ENV=production NODE_OPTIONS=--max-semi-space-size=8

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
COPY --from=build /app/dist ./dist

USER node
EXPOSE 3000
# The compiled server: no TypeScript loader in the process (some 35 MiB less than `npm start`'s tsx):
# docs/performance.md "PDF memory, again". `npm run admin` keeps running the CLI from src/ through tsx.
CMD ["node", "dist/main.js"]

# One image for every role; the role is chosen by the command (see docker-compose.yml).
# Node 26: the current LTS (docs/operations.md "Node versions"); its images are Debian 13 (trixie).
FROM node:26-trixie-slim

# Chromium prints the PDFs (found through CHROMIUM_PATH); fonts ship with the app.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV CHROMIUM_PATH=/usr/bin/chromium NODE_ENV=production

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .

USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "src/main.ts"]

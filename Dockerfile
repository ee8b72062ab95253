# One image for every role; the role is chosen by the command (see docker-compose.yml).
# Node 26: the current LTS (docs/operations.md "Node versions"); its images are Debian 13 (trixie).
FROM node:26-trixie-slim

# Chromium's headless shell prints the PDFs (found through CHROMIUM_PATH; docs/documents.md "The browser");
# fonts ship with the app.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium-headless-shell ca-certificates \
 && rm -rf /var/lib/apt/lists/*
ENV CHROMIUM_PATH=/usr/lib/chromium/chromium-headless-shell NODE_ENV=production

WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .

USER node
EXPOSE 3000
CMD ["node", "--import", "tsx", "src/main.ts"]

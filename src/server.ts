/**
 * The process shell: starts the roles of this process (all of them by
 * default) on one runtime, and stops them in order on SIGTERM/SIGINT:
 * stop accepting, finish in-flight requests and batches, close the database,
 * stop the embedded PostgreSQL when this process started it.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createApp, type Mount } from './api/app.ts';
import { metricsRouter } from './api/metrics.ts';
import type { RouteSpec } from './api/route.ts';
import type { Config, Role } from './config.ts';
import type { Projector } from './projections/projector.ts';
import { ProjectionRunner } from './projections/runner.ts';
import { openRuntime, type Runtime } from './runtime.ts';
import type { Logger } from './shared/logger.ts';
import type { Worker } from './workers/worker.ts';

export interface RunningServer {
  runtime: Runtime;
  url: string | null;
  /** Where /metrics is served when METRICS_PORT is set (any role), else null (then it is on the API port). */
  metricsUrl: string | null;
  runners: ProjectionRunner[];
  stop(): Promise<void>;
}

/** Run once the runtime is open, before any role starts (e.g. first-start demo data). */
export type StartupHook = (rt: Runtime, roles: Role[]) => Promise<void>;

/** What makes up a process: src/main.ts lists them; tests and the CLI take the same list. */
export interface ProcessParts {
  /** Every route of /api/v1 (role api). */
  routes: readonly RouteSpec[];
  /** Web apps served beside the API (role api), e.g. the dashboard. */
  mounts: readonly Mount[];
  /** Every read-model projector (role projector; writes wait for them). */
  projectors: readonly Projector[];
  /** Background workers, each started by its role. */
  workers: readonly Worker[];
  /** Start-up hooks, in order. */
  hooks: readonly StartupHook[];
}

function listen(config: Config, rt: Runtime, parts: ProcessParts): Promise<http.Server> {
  const app = createApp(rt, parts.routes, parts.mounts);
  const server = config.tlsCertFile
    ? https.createServer({ cert: readFileSync(config.tlsCertFile), key: readFileSync(config.tlsKeyFile!) }, app)
    : http.createServer(app);
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, () => resolve(server));
  });
}

/** METRICS_PORT: /metrics alone on its own port, for every role (a worker process has no API port). */
function listenMetrics(port: number, rt: Runtime): Promise<http.Server> {
  const app = express();
  app.disable('x-powered-by');
  app.use(metricsRouter(rt));
  const server = http.createServer(app);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve(server));
  });
}

function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // In-flight requests finish; connections idle after them are closed by close().
    setTimeout(() => server.closeAllConnections(), 10_000).unref();
  });
}

export async function startServer(config: Config, logger: Logger, roles: Role[], parts: ProcessParts): Promise<RunningServer> {
  const { projectors, workers, hooks } = parts;
  const rt = await openRuntime(config, logger, { projectors, poolSize: 30, applicationName: `invoicing:${roles.join('+')}` });
  for (const hook of hooks) await hook(rt, roles);

  const runners = roles.includes('projector')
    ? projectors.map((p) => new ProjectionRunner({ db: rt.database.db, store: rt.store, url: rt.database.url, logger, progress: rt.progress, applied: rt.inline?.applied }, p))
    : [];
  runners.forEach((r) => r.start());
  const started: { name: string; stop(): Promise<void> }[] = [];
  for (const w of workers.filter((w) => roles.includes(w.role))) {
    started.push({ name: w.name, ...(await w.start(rt)) });
  }

  let server: http.Server | null = null;
  let url: string | null = null;
  if (roles.includes('api')) {
    server = await listen(config, rt, parts);
    const { port } = server.address() as AddressInfo;
    url = `${config.tlsCertFile ? 'https' : 'http'}://localhost:${port}/api/v1`;
  }

  const metricsServer = config.metricsPort ? await listenMetrics(config.metricsPort, rt) : null;
  const metricsUrl = metricsServer ? `http://localhost:${(metricsServer.address() as AddressInfo).port}/metrics` : null;

  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      if (metricsServer) await closeServer(metricsServer);
      if (server) await closeServer(server);
      await Promise.all(started.map((w) => w.stop().catch((err) => logger.error({ err, worker: w.name }, 'worker stop failed'))));
      await Promise.all(runners.map((r) => r.stop()));
      await rt.close();
      // The embedded PostgreSQL stops with the server, unless the admin CLI is using it.
      await rt.database.embedded?.release();
    })());
  return { runtime: rt, url, metricsUrl, runners, stop };
}

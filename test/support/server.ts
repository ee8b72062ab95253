/**
 * A real server (all roles by default) on a fresh database and a free port,
 * for HTTP end-to-end tests. Each suite starts its own.
 */
import { loadConfig, type Config, type Role } from '../../src/config.ts';
import type { RouteSpec } from '../../src/api/route.ts';
import { processParts } from '../../src/main.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { createLogger, silentLogger } from '../../src/shared/logger.ts';
import { freshDatabase, type TestDatabase } from './database.ts';

export interface TestServer {
  /** Base URL ending in /api/v1 */
  url: string;
  /** Server root (for /healthz, /openapi.json) */
  root: string;
  server: RunningServer;
  database: TestDatabase;
  stop(): Promise<void>;
}

export async function startTestServer(
  options: { env?: Record<string, string>; roles?: Role[]; database?: TestDatabase; routes?: readonly RouteSpec[] } = {},
): Promise<TestServer> {
  const database = options.database ?? (await freshDatabase());
  // DEMO_BOOTSTRAP follows the process (test/hooks.ts turns it off; test/demo/ turns it on);
  // INLINE_PROJECTIONS too: the HTTP suites run in either projection mode.
  const inherited = { DEMO_BOOTSTRAP: process.env.DEMO_BOOTSTRAP, INLINE_PROJECTIONS: process.env.INLINE_PROJECTIONS };
  const config: Config = loadConfig({ ...inherited, ...options.env, DATABASE_URL: database.url, PORT: '0' });
  const logger = process.env.TEST_LOG ? createLogger(process.env.TEST_LOG) : silentLogger;
  const roles = options.roles ?? ['api', 'projector', 'webhooks', 'scheduler'];
  const server = await startServer(config, logger, roles, { ...processParts, routes: options.routes ?? processParts.routes });
  const url = server.url!;
  return {
    url,
    root: url.replace(/\/api\/v1$/, ''),
    server,
    database,
    async stop() {
      await server.stop();
      if (!options.database) await database.drop();
    },
  };
}

/**
 * Mocha hooks for the enclosing describe: one server for all its tests
 * (started before, stopped after), and before each test `perTest(server)`
 * (a fresh tenant's client, say), handed to `use`.
 */
export function serverPerSuite<T>(perTest: (server: TestServer) => Promise<T>, use: (fixture: T) => void): void {
  let server: TestServer | undefined;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server?.stop());
  beforeEach(async () => {
    use(await perTest(server!));
  });
}

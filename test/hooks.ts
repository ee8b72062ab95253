/** Mocha root hooks: one PostgreSQL server for the whole run. */
import { startTestServer, stopTestServer } from './support/database.ts';

export async function mochaGlobalSetup(): Promise<void> {
  await startTestServer();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopTestServer();
}

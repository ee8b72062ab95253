/** Mocha root hooks: one PostgreSQL server for the whole run. */
import { startDatabaseServer, stopDatabaseServer } from './support/database.ts';

export async function mochaGlobalSetup(): Promise<void> {
  // Test servers start clean; test/demo/ runs the bootstrap explicitly.
  process.env.DEMO_BOOTSTRAP = 'false';
  await startDatabaseServer();
}

export async function mochaGlobalTeardown(): Promise<void> {
  await stopDatabaseServer();
}

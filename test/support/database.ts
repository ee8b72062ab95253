/**
 * One PostgreSQL server for the whole test run (embedded, or DATABASE_URL's
 * server), and a fresh migrated database per suite, cloned from a template
 * (CREATE DATABASE ... TEMPLATE takes milliseconds, migrations run once).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createPool } from '../../src/db/database.ts';
import { ensureEmbeddedPostgres, type EmbeddedHandle } from '../../src/db/embedded.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

const TEMPLATE = 'invoicing_test_template';

let serverUrl: string | null = null;
let embedded: EmbeddedHandle | null = null;
let embeddedDir: string | null = null;
let counter = 0;

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(withDatabase(serverUrl!, 'postgres'));
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export async function startDatabaseServer(): Promise<void> {
  if (process.env.DATABASE_URL) {
    serverUrl = process.env.DATABASE_URL;
  } else {
    embeddedDir = await mkdtemp(path.join(tmpdir(), 'invoicing-test-'));
    // fsync off: test data is thrown away, and it makes CREATE DATABASE fast.
    embedded = await ensureEmbeddedPostgres({
      dataDir: embeddedDir,
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '400' },
    });
    serverUrl = embedded.url;
  }
  await admin(async (c) => {
    await c.query(`drop database if exists ${TEMPLATE}`);
    await c.query(`create database ${TEMPLATE}`);
  });
  const pool = createPool(withDatabase(serverUrl, TEMPLATE), 2);
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  await migrateToLatest(db);
  await db.destroy();
}

export async function stopDatabaseServer(): Promise<void> {
  if (embedded) await embedded.stop();
  if (embeddedDir) await rm(embeddedDir, { recursive: true, force: true });
}

export interface TestDatabase {
  name: string;
  url: string;
  pool: pg.Pool;
  db: Kysely<any>;
  drop(): Promise<void>;
}

/** A new database with every migration applied, private to the caller. */
export async function freshDatabase(): Promise<TestDatabase> {
  if (!serverUrl) throw new Error('test database server not started (test/hooks.ts)');
  const name = `t_${process.pid}_${++counter}_${Date.now().toString(36)}`;
  await admin((c) => c.query(`create database ${name} template ${TEMPLATE}`));
  const url = withDatabase(serverUrl, name);
  const pool = createPool(url, 20, 'test');
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  let dropped = false;
  return {
    name,
    url,
    pool,
    db,
    async drop() {
      if (dropped) return;
      dropped = true;
      await db.destroy();
      await admin((c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

export function testServerUrl(): string {
  if (!serverUrl) throw new Error('test database server not started');
  return serverUrl;
}

/**
 * Where the data lives: DATABASE_URL, or the embedded PostgreSQL in ./.data.
 * One pg Pool per process, shared by kysely (read models) and the event store.
 */
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { ConfigError } from '../config.ts';
import { guardPool } from './connection.ts';
import { prepareRepeated } from './prepared.ts';
import { ensureEmbeddedPostgres, type EmbeddedHandle } from './embedded.ts';
import type { Database } from './schema.ts';

// Return int8 and numeric as strings (default); dates (type 1082) stay strings
// so a calendar date never shifts through a time zone.
pg.types.setTypeParser(1082, (v) => v);

/** The connections of a process: the pg pool, Kysely over it (typed by src/db/schema.ts), the URL, the embedded server. */
export interface DatabaseConnection {
  url: string;
  pool: pg.Pool;
  db: Kysely<Database>;
  embedded: EmbeddedHandle | null;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl: string | null;
  dataDir: string;
  poolSize?: number;
  applicationName?: string;
  onEmbeddedLog?: (line: string) => void;
  /** EMBEDDED_PG_PORT. */
  embeddedPort?: number | null;
}

export function createPool(url: string, max = 20, applicationName = 'invoicing'): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    application_name: applicationName,
    // An open write transaction holds every log consumer back (docs/architecture.md "Event store (PostgreSQL adapter)").
    idle_in_transaction_session_timeout: 10_000,
    connectionTimeoutMillis: 10_000,
  });
  // Repeated statements are parsed and planned once per connection (src/db/prepared.ts).
  pool.on('connect', (client) => prepareRepeated(client));
  // A dropped connection, idle or checked out, must not crash the process; the pool replaces it.
  return guardPool(pool);
}

/** Connect and check once, so a bad DATABASE_URL fails with one clear line. */
async function probe(pool: pg.Pool, fromEnv: boolean): Promise<void> {
  try {
    await pool.query('select 1');
  } catch (err: any) {
    await pool.end().catch(() => {});
    if (fromEnv) throw new ConfigError('DATABASE_URL', `cannot connect: ${err.message ?? err}`);
    throw err;
  }
}

export async function openDatabase(options: OpenOptions): Promise<DatabaseConnection> {
  let embedded: EmbeddedHandle | null = null;
  let url = options.databaseUrl;
  if (!url) {
    embedded = await ensureEmbeddedPostgres({ dataDir: options.dataDir, port: options.embeddedPort, onLog: options.onEmbeddedLog });
    url = embedded.url;
  }
  const pool = createPool(url, options.poolSize, options.applicationName);
  await probe(pool, options.databaseUrl !== null);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    url,
    pool,
    db,
    embedded,
    async close() {
      await db.destroy(); // ends the pool too
    },
  };
}

/**
 * The PostgreSQL a benchmark runs on: DATABASE_URL's server when set, else an
 * embedded PostgreSQL started in a temporary directory with the server's
 * normal durability settings (fsync, synchronous_commit and full_page_writes
 * on: unlike the test server, commits really reach the disk). Each benchmark
 * creates its own fresh, migrated database on it and drops it afterwards.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { createPool } from '../../src/db/database.ts';
import { ensureEmbeddedPostgres, type EmbeddedHandle } from '../../src/db/embedded.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';

export interface BenchServer {
  /** URL of the server's maintenance database (`postgres`, or DATABASE_URL's). */
  url: string;
  embedded: boolean;
  /** One line: where it runs, version and durability settings as the server reports them. */
  description: string;
  settings: Record<string, string>;
  stop(): Promise<void>;
}

export interface BenchDatabase {
  name: string;
  url: string;
  pool: pg.Pool;
  db: Kysely<any>;
  drop(): Promise<void>;
}

export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client(url);
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

const REPORTED = ['server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'shared_buffers', 'max_connections'];

let servers = 0;

/**
 * Starts the benchmark server (or connects to DATABASE_URL). `settings` are
 * extra `-c` settings for the embedded server only (default: none, i.e. the
 * normal durable configuration); BENCH_PG_SETTINGS (a JSON object) adds or
 * overrides some for a diagnosis (e.g. auto_explain, with a log directory).
 */
export async function startBenchServer(options: { settings?: Record<string, string> } = {}): Promise<BenchServer> {
  const fromEnv = process.env.DATABASE_URL;
  let embedded: EmbeddedHandle | null = null;
  let dir: string | null = null;
  let url: string;
  if (fromEnv) {
    url = fromEnv;
  } else {
    dir = await mkdtemp(path.join(tmpdir(), 'invoicing-bench-'));
    try {
      const extra = process.env.BENCH_PG_SETTINGS ? (JSON.parse(process.env.BENCH_PG_SETTINGS) as Record<string, string>) : {};
      embedded = await ensureEmbeddedPostgres({ dataDir: dir, settings: { max_connections: '200', ...options.settings, ...extra } });
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    url = embedded.url;
  }
  servers++;
  const settings = await withClient(url, async (c) => {
    const { rows } = await c.query('select name, setting, unit from pg_settings where name = any($1)', [REPORTED]);
    const out: Record<string, string> = {};
    for (const r of rows) out[r.name] = r.unit === '8kB' ? `${(Number(r.setting) * 8) / 1024}MB` : r.setting;
    return out;
  });
  const where = embedded ? `embedded PostgreSQL in a temp dir (${dir})` : `DATABASE_URL (${new URL(url).host})`;
  const description =
    `${where}, PostgreSQL ${settings.server_version}; fsync=${settings.fsync}, synchronous_commit=${settings.synchronous_commit}, ` +
    `full_page_writes=${settings.full_page_writes}, wal_sync_method=${settings.wal_sync_method}, shared_buffers=${settings.shared_buffers}`;
  return {
    url,
    embedded: embedded !== null,
    description,
    settings,
    async stop() {
      if (embedded) await embedded.stop();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A new database on the server with every migration applied (unless
 * migrate: false), with its own pool of `poolSize` connections.
 */
export async function createBenchDatabase(
  server: BenchServer,
  options: { poolSize?: number; migrate?: boolean; prefix?: string } = {},
): Promise<BenchDatabase> {
  const name = `${options.prefix ?? 'bench'}_${process.pid}_${servers}_${Date.now().toString(36)}`;
  await withClient(server.url, (c) => c.query(`create database ${name}`));
  const url = withDatabase(server.url, name);
  const pool = createPool(url, options.poolSize ?? 20, 'bench');
  const db = new Kysely<any>({ dialect: new PostgresDialect({ pool }) });
  if (options.migrate !== false) await migrateToLatest(db);
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
      await withClient(server.url, (c) => c.query(`drop database if exists ${name} with (force)`));
    },
  };
}

/** Opens `n` pool connections at once, so connection set-up is not timed. */
export async function warmPool(pool: pg.Pool, n: number): Promise<void> {
  const clients = await Promise.all(Array.from({ length: n }, () => pool.connect()));
  for (const c of clients) c.release();
}

/**
 * The fault suite's harness: the server as `npm start` runs it (every role,
 * embedded PostgreSQL in its own data directory, so the database can be
 * stopped and started under it), a tenant provisioned through the API (so
 * every read-model row comes from events and can be compared with a rebuild),
 * a write load that records what was acknowledged, and the faults themselves.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect } from 'kysely';
import type pg from 'pg';
import { createPool } from '../../src/db/database.ts';
import { ensureEmbeddedPostgres, freePort } from '../../src/db/embedded.ts';
import { newIce } from '../customers/support.ts';
import { bindClient, type InvoicesClient } from '../invoices/support.ts';
import { call, createAccount, createKey } from '../support/fixtures.ts';
import { sleep, until } from '../support/wait.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

export class FaultServer {
  child: ChildProcess | null = null;
  output = '';
  /** Extra environment of the next `start()` (e.g. SCHEDULER_CRON). */
  env: Record<string, string> = {};
  pool!: pg.Pool;
  db!: Kysely<any>;
  url = '';
  private constructor(
    readonly dataDir: string,
    readonly port: number,
  ) {}

  /** A new data directory, and the server started on it. */
  static async create(env: Record<string, string> = {}): Promise<FaultServer> {
    const s = new FaultServer(await mkdtemp(path.join(tmpdir(), 'invoicing-faults-')), await freePort());
    s.env = env;
    await s.start();
    const state = JSON.parse(readFileSync(path.join(s.dataDir, 'embedded.json'), 'utf8')) as { port: number; password: string };
    s.url = `postgres://postgres:${encodeURIComponent(state.password)}@127.0.0.1:${state.port}/postgres`;
    s.pool = createPool(s.url, 4, 'faults-test');
    s.db = new Kysely<any>({ dialect: new PostgresDialect({ pool: s.pool }) });
    return s;
  }

  get root(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get api(): string {
    return `${this.root}/api/v1`;
  }

  async start(): Promise<void> {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATABASE_URL: '',
        EVENTSTORE_URL: '',
        DATA_DIR: this.dataDir,
        PORT: String(this.port),
        LOG_LEVEL: 'warn',
        SERVICE_MODE: 'test',
        DEMO_BOOTSTRAP: 'false',
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d) => (this.output += d));
    this.child.stderr!.on('data', (d) => (this.output += d));
    await until(async () => (await fetch(`${this.root}/healthz`).catch(() => null))?.status === 200, 120_000, `server on ${this.port}`, 100);
  }

  alive(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  /** pg_terminate_backend on every connection of the server; returns how many. */
  async terminateBackends(): Promise<number> {
    const { rows } = await this.pool.query(
      `select count(*) filter (where pg_terminate_backend(pid))::int as n from pg_stat_activity
        where application_name like 'invoicing%' and pid <> pg_backend_pid()`,
    );
    return rows[0].n;
  }

  /** Stops the embedded PostgreSQL (pg_ctl stop -m fast), as a crash or a restart would. */
  async stopDatabase(): Promise<void> {
    const handle = await ensureEmbeddedPostgres({ dataDir: this.dataDir }); // adopts the running one
    await handle.stop();
  }

  async startDatabase(): Promise<void> {
    await ensureEmbeddedPostgres({ dataDir: this.dataDir });
  }

  async readyz(): Promise<number> {
    const res = await fetch(`${this.root}/readyz`).catch(() => null);
    return res?.status ?? 0;
  }

  /** Milliseconds from now until /readyz answers 200 (throws after `limitMs`). */
  async msUntilReady(limitMs = 20_000): Promise<number> {
    const started = Date.now();
    await until(async () => (await this.readyz()) === 200, limitMs, '/readyz 200', 25);
    return Date.now() - started;
  }

  async close(): Promise<void> {
    await this.kill('SIGTERM').catch(() => {});
    await this.db?.destroy().catch(() => {});
    // The server stops the database on a graceful exit unless someone else was connected.
    await (await ensureEmbeddedPostgres({ dataDir: this.dataDir }).catch(() => null))?.stop().catch(() => {});
    await rm(this.dataDir, { recursive: true, force: true });
  }
}

/** An account with an organization created through POST /organizations, and an organization key. */
export async function provisionTenant(server: FaultServer): Promise<InvoicesClient> {
  const accountId = await createAccount(server.db, 'fiduciaire', { requestsPerMinute: 1_000_000 });
  const accountKey = await createKey(server.db, { accountId });
  const res = await call(`${server.api}/organizations`, accountKey.secret, {
    method: 'POST',
    body: { legal_name: 'Atlas Pannes SARL', ice: newIce() },
  });
  if (res.status !== 201) throw new Error(`POST /organizations: ${res.status} ${JSON.stringify(res.body)}`);
  const organizationId = res.body.data.id as string;
  const key = await createKey(server.db, { accountId, organizationId });
  return bindClient(server.api, { accountId, organizationId, key });
}

/**
 * Drafts and finalizes invoices with a few concurrent workers and records
 * every answer. What it was told succeeded (201 draft, 200 finalize) must
 * survive any fault; a refused write must be a 503 with Retry-After (or a
 * 409 of contention), never a 500 nor a dropped connection.
 */
export class WriteLoad {
  readonly drafts = new Set<string>();
  readonly finalized = new Map<string, string>();
  readonly statuses: Record<string, number> = {};
  readonly wrong: string[] = [];
  /** Finalize requests sent and not yet answered. */
  finalizing = 0;
  private stopped = false;
  private workers: Promise<void>[] = [];

  constructor(
    private readonly api: InvoicesClient,
    private readonly customerId: string,
  ) {}

  get acknowledged(): number {
    return this.drafts.size + this.finalized.size;
  }

  start(concurrency = 6): void {
    this.workers = Array.from({ length: concurrency }, () => this.work());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.workers);
  }

  /** Resolves once `n` more writes were acknowledged (the load is flowing). */
  async progressed(n: number, ms = 60_000): Promise<void> {
    const target = this.acknowledged + n;
    await until(() => this.acknowledged >= target, ms, `${n} more acknowledged writes`, 20);
  }

  private note(what: string, res: { status: number; headers: Headers; body: any } | null, error?: unknown): boolean {
    if (!res) {
      this.statuses.network = (this.statuses.network ?? 0) + 1;
      this.wrong.push(`${what}: no answer (${String((error as Error)?.cause ?? error)})`);
      return false;
    }
    this.statuses[res.status] = (this.statuses[res.status] ?? 0) + 1;
    if (res.status === 503 && !/^\d+$/.test(res.headers.get('retry-after') ?? '')) this.wrong.push(`${what}: 503 without Retry-After`);
    if (res.status >= 500 && res.status !== 503) this.wrong.push(`${what}: ${res.status} ${JSON.stringify(res.body).slice(0, 200)}`);
    return res.status < 300;
  }

  private async work(): Promise<void> {
    while (!this.stopped) {
      const created = await this.api.create({ customer_id: this.customerId, issue_date: '2026-03-14', items: [{ description: 'Conseil', quantity: 1, unit_price: 100 }] }).catch((e) => {
        this.note('create', null, e);
        return null;
      });
      if (!created || !this.note('create', created)) {
        await sleep(50); // a client honouring Retry-After briefly (the suite wants many attempts)
        continue;
      }
      const id = created.body.data.id as string;
      this.drafts.add(id);
      this.finalizing++;
      const fin = await this.api
        .action(id, 'finalize')
        .catch((e) => {
          this.note('finalize', null, e);
          return null;
        })
        .finally(() => this.finalizing--);
      if (fin && this.note('finalize', fin)) this.finalized.set(id, fin.body.data.invoice_number);
    }
  }
}

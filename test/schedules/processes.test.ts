/**
 * The scheduler as operators run it: `node --import tsx src/main.ts --role
 * scheduler` child processes ticking every second (SCHEDULER_CRON), beside
 * an in-process server that runs the API and the projectors on the same
 * database. Schedules are due on the real clock (start dates today or in
 * the past): these tests never wait for a date.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'chai';
import { sql } from 'kysely';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { until } from '../support/wait.ts';
import { dayFromToday, line, schedulesClient, type SchedulesClient } from './support.ts';

class SchedulerProcess {
  child: ChildProcess | null = null;
  output = '';
  constructor(private readonly databaseUrl: string) {}

  start(): void {
    this.child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'scheduler'], {
      env: { ...process.env, DATABASE_URL: this.databaseUrl, SCHEDULER_CRON: '* * * * * *', LOG_LEVEL: 'warn', SERVICE_MODE: 'test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child.stdout!.on('data', (d) => (this.output += d));
    this.child.stderr!.on('data', (d) => (this.output += d));
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }
}

async function count(db: TestServer['database']['db'], query: ReturnType<typeof sql<{ n: string }>>): Promise<number> {
  const { rows } = await query.execute(db);
  return Number(rows[0].n);
}

describe('recurring scheduler in real processes', function () {
  this.timeout(300_000);
  let t: TestDatabase;
  let server: TestServer;
  let api: SchedulesClient;
  let customer: any;
  const processes: SchedulerProcess[] = [];

  before(async () => {
    t = await freshDatabase();
    server = await startTestServer({ database: t, roles: ['api', 'projector', 'webhooks'] });
  });
  beforeEach(async () => {
    api = await schedulesClient(server);
    customer = await api.invoices.customer();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') for (const p of processes) console.log(`      scheduler output (tail):\n${p.output.slice(-3000)}`);
    await Promise.all(processes.splice(0).map((p) => p.kill('SIGTERM')));
    // Out of the next test's sight (the due list reads the read model).
    await server.database.db.updateTable('recurring_schedules').set({ status: 'cancelled' }).where('status', '=', 'active').execute();
  });
  after(async () => {
    await server?.stop();
    await t?.drop();
  });

  const organization = () => api.invoices.tenant.organizationId;

  it('two scheduler processes and 100 due schedules: exactly 100 invoices, one per schedule', async () => {
    const ids: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const made = await Promise.all(Array.from({ length: 10 }, () => api.make(customer.id, { start_date: dayFromToday(0), name: `S${batch}` })));
      ids.push(...made.map((s) => s.id));
    }
    for (let i = 0; i < 2; i++) {
      const p = new SchedulerProcess(t.url);
      processes.push(p);
      p.start();
    }
    const db = server.database.db;
    const runs = () => count(db, sql`select count(*) as n from schedule_runs where organization_id = ${organization()} and status = 'success'`);
    await until(async () => (await runs()) === 100, 180_000, '100 runs', 250);
    // Let both processes tick again (each second) over the finished schedules: still nothing more.
    const ticksBefore = Date.now();
    await until(async () => Date.now() - ticksBefore > 3_000 && (await runs()) === 100, 30_000, 'quiet ticks', 500);
    const invoices = await count(db, sql`select count(*) as n from invoices where organization_id = ${organization()}`);
    expect(invoices).to.equal(100);
    const { rows } = await sql<{ schedule_id: string; n: string }>`
      select r.schedule_id, count(*) as n from schedule_runs r join invoices i on i.id = r.invoice_id
       where r.organization_id = ${organization()} group by r.schedule_id`.execute(db);
    expect(rows).to.have.length(100);
    expect(rows.every((r) => Number(r.n) === 1)).to.equal(true);
    const list = (await api.list('per_page=100&status=active')).body.data;
    expect(list.every((s: any) => s.occurrences === 1)).to.equal(true);
  });

  it('SIGKILL in the middle of a tick with auto_finalize: after a restart every occurrence has one invoice and numbers are gapless', async () => {
    const schedules = 15;
    const weeks = 8; // start 8 weeks ago: 9 due runs each
    for (let i = 0; i < schedules; i++) await api.make(customer.id, { frequency: 'weekly', start_date: dayFromToday(-7 * weeks), auto_finalize: true, items: [line()] });
    const expected = schedules * (weeks + 1);
    const db = server.database.db;
    const invoices = () => count(db, sql`select count(*) as n from invoices where organization_id = ${organization()}`);
    const first = new SchedulerProcess(t.url);
    processes.push(first);
    first.start();
    await until(async () => (await invoices()) >= 20, 120_000, 'a tick under way', 20);
    await first.kill('SIGKILL');
    expect(await invoices()).to.be.below(expected);
    const second = new SchedulerProcess(t.url);
    processes.push(second);
    second.start();
    const done = () => count(db, sql`select count(*) as n from schedule_runs where organization_id = ${organization()} and status = 'success' and invoice_number is not null`);
    await until(async () => (await done()) === expected, 240_000, `${expected} numbered runs`, 250);
    await until(async () => (await count(db, sql`select count(*) as n from invoices where organization_id = ${organization()} and invoice_number is not null`)) === expected, 60_000, 'numbers projected', 250);
    expect(await invoices()).to.equal(expected);
    // One invoice per (schedule, occurrence), dated on its own run date.
    const { rows: perRun } = await sql<{ n: string }>`
      select count(*) as n from schedule_runs r join invoices i on i.id = r.invoice_id and i.issue_date = r.run_date
       where r.organization_id = ${organization()}`.execute(db);
    expect(Number(perRun[0].n)).to.equal(expected);
    // Gapless numbers per year of issue.
    const { rows } = await sql<{ invoice_number: string }>`
      select invoice_number from invoices where organization_id = ${organization()} order by invoice_number`.execute(db);
    const byYear = new Map<string, number[]>();
    for (const r of rows) {
      const [, year, n] = r.invoice_number.split('-');
      byYear.set(year, [...(byYear.get(year) ?? []), Number(n)]);
    }
    for (const numbers of byYear.values()) expect(numbers).to.deep.equal(numbers.map((_, i) => i + 1));
  });
});

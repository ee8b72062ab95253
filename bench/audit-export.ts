/**
 * `npm run bench -- audit-export`: `audit export` as an operator runs it
 * (`npm run admin`'s own process: node with the TypeScript loader) over a
 * log of 1,000,000 events (BENCH_SCALE scales it), JSON lines and CSV, each
 * beside a baseline in the same run: the same command over the same log for
 * a day without events (it reads and filters every event, writes nothing).
 * Targets (docs/audit.md): >= 50,000 events/s and a peak RSS under 200 MiB.
 *
 * The log is written by SQL (one organization, 100,000 streams of ten
 * events of about 1.2 KB, their hashes made up: the export copies hashes,
 * it does not check them). Peak RSS is the process's VmHWM, read from /proc
 * while it runs (a high-water mark: the last reading before it exits is the
 * peak up to then).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAccount, insertOrganizationRow } from '../test/support/fixtures.ts';
import { createBenchDatabase, startBenchServer } from './support/postgres.ts';
import { formatTable, markdownTable, type Cell } from './support/table.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1') || 1;
const EVENTS = Math.max(10_000, Math.round(1_000_000 * SCALE / 10_000) * 10_000);
const ORG = '0193c8a1-0000-7000-8000-000000000001';
const DAY = '2026-11-20';
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function peakRssMiB(pid: number): number {
  try {
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** The node flags of package.json's `admin` script ("node <flags> src/cli/admin.ts"), which the runs use as it does. */
function adminNodeFlags(): string[] {
  const script: string = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.admin;
  const words = script.split(/\s+/);
  if (words[0] !== 'node' || words[words.length - 1] !== 'src/cli/admin.ts') throw new Error(`unexpected admin script: ${script}`);
  return words.slice(1, -1);
}

/** Runs `npm run admin -- audit export` (as its script does: node with its flags and the TypeScript loader), output discarded. */
function exportRun(url: string, day: string, format: string): Promise<{ seconds: number; peakMiB: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, [...adminNodeFlags(), 'src/cli/admin.ts', 'audit', 'export', '--org', ORG, '--from', day, '--to', day, '--format', format], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let peak = 0;
    let stderr = '';
    const poll = setInterval(() => (peak = Math.max(peak, peakRssMiB(child.pid!))), 50);
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => {
      clearInterval(poll);
      if (code !== 0) return reject(new Error(`audit export exited with ${code}: ${stderr.slice(0, 500)}`));
      resolve({ seconds: Number(process.hrtime.bigint() - started) / 1e9, peakMiB: peak });
    });
  });
}

export async function run(): Promise<void> {
  const server = await startBenchServer();
  const db = await createBenchDatabase(server, { poolSize: 2, prefix: 'bench_audit_export' });
  try {
    console.log(`server: ${server.description}`);
    await insertOrganizationRow(db.db, await createAccount(db.db), { id: ORG });
    const seeded = Date.now();
    for (let from = 0; from < EVENTS; from += 100_000) {
      await db.pool.query(
        // Stored as the service stores events: the RFC 8785 text (members sorted, no spaces; migration 0103).
        `insert into es_events (stream_id, revision, event_id, type, data, metadata, hash)
         select 'invoice-' || (($1::int + i) / 10), i % 10, gen_random_uuid(), 'InvoiceUpdated',
           format('{"invoice":{"currency":"MAD","customer_name":"Client Marrakech SA","id":"%s","items":[%s],"status":"draft","subtotal":"15006.00","total":"17632.05","version":%s}}',
             gen_random_uuid(),
             (select string_agg(format('{"description":"Prestation de conseil et accompagnement - phase %s","position":%s,"quantity":"3","tax_rate":"20","total":"3751.50","unit_price":"1250.5"}', p, p), ',' order by p)
              from generate_series(1, 4) p),
             i % 10)::json,
           format('{"actor":"key_3f9a1c2b7d","occurred_at":"%sT10:00:00.000Z","organization_id":"%s","request_id":"%s"}', $3::text, $2::text, gen_random_uuid())::json,
           md5(i::text) || md5(i::text)
         from generate_series(0, least(99999, $4::int - $1::int - 1)) i`,
        [from, ORG, DAY, EVENTS],
      );
    }
    await db.pool.query('vacuum analyze es_events');
    console.log(`  seeded ${EVENTS.toLocaleString('en')} events (${((Date.now() - seeded) / 1000).toFixed(0)} s)`);

    const rows: Cell[][] = [];
    const load = [loadavg()[0]];
    for (const format of ['jsonl', 'csv']) {
      // Interleaved: baseline, export, baseline, export; the best of each (noise only slows).
      const base: { seconds: number; peakMiB: number }[] = [];
      const ours: { seconds: number; peakMiB: number }[] = [];
      for (let round = 0; round < 2; round++) {
        base.push(await exportRun(db.url, '2026-11-21', format));
        ours.push(await exportRun(db.url, DAY, format));
        load.push(loadavg()[0]);
      }
      const best = (runs: { seconds: number }[]) => Math.min(...runs.map((r) => r.seconds));
      const rate = (s: number) => Math.round(EVENTS / s);
      const peak = Math.max(...ours.map((r) => r.peakMiB));
      rows.push([
        `export, ${format}`,
        `${rate(best(ours)).toLocaleString('en')}/s`,
        `${rate(best(base)).toLocaleString('en')}/s`,
        `${((100 * best(base)) / best(ours)).toFixed(0)}%`,
        `${peak.toFixed(0)} MiB (baseline ${Math.max(...base.map((r) => r.peakMiB)).toFixed(0)})`,
        rate(best(ours)) >= 50_000 && peak < 200 ? 'yes' : 'NO',
      ]);
    }
    const headers = ['case', 'events/s (whole process)', 'baseline: same, no event in range', 'ours/base', 'peak RSS', '>= 50,000/s, < 200 MiB'];
    console.log(`\nlog of ${EVENTS.toLocaleString('en')} events, load average ${Math.min(...load).toFixed(1)} to ${Math.max(...load).toFixed(1)}`);
    console.log(formatTable(headers, rows));
    console.log(`\n${markdownTable(headers, rows)}`);
  } finally {
    await db.drop();
    await server.stop();
  }
}

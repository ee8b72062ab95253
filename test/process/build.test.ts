/**
 * `npm run build` gives a runnable server: `node dist/main.js` (no tsx)
 * starts on a test database (the PDF template is read at start-up) and
 * serves the API and the dashboard's pages and assets, all read from dist/
 * (the build copies the templates beside the compiled code).
 */
import { spawn, execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { freePort } from '../../src/db/embedded.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';

const run = promisify(execFile);

describe('npm run build', function () {
  this.timeout(300_000);
  let database: TestDatabase;
  before(async () => {
    database = await freshDatabase();
  });
  after(() => database?.drop());

  it('compiles a server that runs with plain node: API, dashboard pages and assets', async () => {
    await rm('dist', { recursive: true, force: true });
    await run('npm', ['run', 'build'], { cwd: process.cwd() });
    const port = await freePort();
    const child = spawn(process.execPath, ['dist/main.js'], {
      env: { ...process.env, DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn', SERVICE_MODE: 'test', DEMO_BOOTSTRAP: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const root = `http://127.0.0.1:${port}`;
      await until(async () => child.exitCode !== null || (await fetch(`${root}/healthz`).catch(() => null))?.status === 200, 60_000, 'dist server up', 100);
      expect(child.exitCode, output).to.equal(null);
      expect((await fetch(`${root}/readyz`)).status).to.equal(200);
      const signIn = await fetch(`${root}/dashboard`);
      expect(signIn.status, output).to.equal(200);
      expect(await signIn.text()).to.match(/<form[^>]*>/);
      expect((await fetch(`${root}/dashboard/assets/app.css`)).status).to.equal(200);
      expect((await fetch(`${root}/api/v1/invoices`)).status).to.equal(401);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});

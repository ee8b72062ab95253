/**
 * What `npm start` writes where: stdout is the JSON log stream only (one JSON
 * document a line, for a collector), and the start banner with the demo key
 * goes to the terminal on stderr (docs/operations.md "Logs").
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import { freePort } from '../../src/db/embedded.ts';
import { freshDatabase } from '../support/database.ts';
import { until } from '../support/wait.ts';

describe('start-up output: JSON log on stdout, banner on stderr', function () {
  this.timeout(120_000);

  it('the demo key and the banner go to stderr; every stdout line is a JSON log line', async () => {
    const database = await freshDatabase();
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'info', SERVICE_MODE: 'test', DEMO_BOOTSTRAP: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    try {
      await until(() => /listening on/.test(stderr) || child.exitCode !== null, 90_000, 'the banner', 100);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).to.equal(200);
      await until(() => /"msg":"started"/.test(stdout), 10_000, 'the started log line');
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await database.drop();
    }
    const key = stderr.match(/svc_test_[0-9A-Za-z]{43}/)?.[0];
    expect(key, stderr).to.be.a('string');
    expect(stderr).to.match(/Demo data created/);
    expect(stderr).to.match(/Invoicing API listening on http:\/\/localhost:\d+\/api\/v1/);
    expect(stdout).not.to.contain(key!);
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.length).to.be.greaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.to.throw();
    expect(lines.map((l) => JSON.parse(l).msg)).to.include.members(['demo data created', 'started']);
  });
});

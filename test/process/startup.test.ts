/**
 * Start-up faults: a misconfigured variable fails with one clear line naming
 * it (no stack trace) and a non-zero exit.
 */
import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import { freshDatabase } from '../support/database.ts';

function start(env: Record<string, string>, args: string[] = []) {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, DATABASE_URL: '', EVENTSTORE_URL: '', LOG_LEVEL: '', DEMO_BOOTSTRAP: '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: res.status, lines: res.stderr.trim().split('\n').filter(Boolean) };
}

describe('start-up configuration errors', () => {
  const cases: [string, Record<string, string>, string[], RegExp][] = [
    ['DATABASE_URL not a URL', { DATABASE_URL: 'nonsense' }, [], /^error: DATABASE_URL: is not a URL/],
    ['DATABASE_URL wrong scheme', { DATABASE_URL: 'mysql://u@h/db' }, [], /^error: DATABASE_URL: scheme "mysql:"/],
    ['DATABASE_URL unreachable', { DATABASE_URL: 'postgres://u:p@127.0.0.1:1/db' }, [], /^error: DATABASE_URL: cannot connect/],
    ['EVENTSTORE_URL not esdb', { EVENTSTORE_URL: 'http://localhost:2113' }, [], /^error: EVENTSTORE_URL: is not an EventStoreDB connection string/],
    ['SERVICE_MODE unknown', { SERVICE_MODE: 'prod' }, [], /^error: SERVICE_MODE: "prod" is not test or live/],
    ['PORT not a number', { PORT: 'http' }, [], /^error: PORT: "http" is not a TCP port/],
    ['EMBEDDED_PG_PORT not a port', { EMBEDDED_PG_PORT: '0x10' }, [], /^error: EMBEDDED_PG_PORT: "0x10" is not a TCP port/],
    ['unknown role', {}, ['--role', 'cook'], /^error: --role: "cook" is not one of api, projector, webhooks, scheduler/],
    // Every other variable too (src/config.ts reads them all): none is ignored or crashes with a stack.
    ['LOG_LEVEL unknown', { LOG_LEVEL: 'loud' }, [], /^error: LOG_LEVEL: "loud" is not one of fatal, error, warn, info, debug, trace, silent/],
    ['WEBHOOK_TIMEOUT_MS not a number', { WEBHOOK_TIMEOUT_MS: '30s' }, [], /^error: WEBHOOK_TIMEOUT_MS: "30s" is not a number of milliseconds/],
    ['WEBHOOK_TIMEOUT_MS zero', { WEBHOOK_TIMEOUT_MS: '0' }, [], /^error: WEBHOOK_TIMEOUT_MS: "0" is not a number of milliseconds >= 1/],
    ['WEBHOOK_SECRET_KEY too short', { WEBHOOK_SECRET_KEY: 'c2hvcnQ=' }, [], /^error: WEBHOOK_SECRET_KEY: must be 32 bytes, as 64 hex digits or base64/],
    ['WEBHOOK_RETRY_DELAYS_MS not a list', { WEBHOOK_RETRY_DELAYS_MS: '1m,5m' }, [], /^error: WEBHOOK_RETRY_DELAYS_MS: must be a comma-separated list/],
    ['WEBHOOK_ALLOW_INSECURE not a boolean', { WEBHOOK_ALLOW_INSECURE: 'yes' }, [], /^error: WEBHOOK_ALLOW_INSECURE: "yes" is not true or false/],
    ['PDF_RENDER_TIMEOUT_MS too small', { PDF_RENDER_TIMEOUT_MS: '5' }, [], /^error: PDF_RENDER_TIMEOUT_MS: "5" is not a number of milliseconds >= 100/],
    ['PDF_CACHE_MB not a whole number', { PDF_CACHE_MB: '16M' }, [], /^error: PDF_CACHE_MB: "16M" is not a whole number/],
    ['PDF_PAGES zero', { PDF_PAGES: '0' }, [], /^error: PDF_PAGES: "0" is not a whole number from 1 to 16/],
    ['PDF_PAGES not a number', { PDF_PAGES: 'two' }, [], /^error: PDF_PAGES: "two" is not a whole number from 1 to 16/],
    ['PDF_PAGES over 16', { PDF_PAGES: '17' }, [], /^error: PDF_PAGES: "17" is not a whole number from 1 to 16/],
    ['INLINE_PROJECTIONS neither a boolean nor auto', { INLINE_PROJECTIONS: 'sometimes' }, [], /^error: INLINE_PROJECTIONS: "sometimes" is not true, false or auto/],
    ['DEMO_BOOTSTRAP not a boolean', { DEMO_BOOTSTRAP: 'no' }, [], /^error: DEMO_BOOTSTRAP: "no" is not true or false/],
    ['SCHEDULER_CRON not cron', { SCHEDULER_CRON: 'hourly' }, [], /^error: SCHEDULER_CRON: "hourly" is not a cron expression/],
    ['UNAUTHENTICATED_REQUESTS_PER_MINUTE negative', { UNAUTHENTICATED_REQUESTS_PER_MINUTE: '-1' }, [], /^error: UNAUTHENTICATED_REQUESTS_PER_MINUTE: "-1" is not a whole number/],
    ['METRICS_PORT not a port', { METRICS_PORT: '99999' }, [], /^error: METRICS_PORT: "99999" is not a TCP port/],
    ['TLS_CERT_FILE without TLS_KEY_FILE', { TLS_CERT_FILE: '/tmp/cert.pem' }, [], /^error: TLS_KEY_FILE: TLS_CERT_FILE and TLS_KEY_FILE must be set together/],
  ];
  for (const [name, env, args, pattern] of cases) {
    it(`${name}: one line naming the variable, exit 1`, () => {
      const { status, lines } = start(env, args);
      expect(status).to.equal(1);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(pattern);
      expect(lines[0]).not.to.match(/\n\s+at /);
    });
  }

  it('EVENTSTORE_URL unreachable: one line naming the variable, exit 1', async () => {
    const t = await freshDatabase();
    try {
      const { status, lines } = start({ DATABASE_URL: t.url, EVENTSTORE_URL: 'esdb://127.0.0.1:1?tls=false' });
      expect(status).to.equal(1);
      expect(lines).to.have.length(1);
      expect(lines[0]).to.match(/^error: EVENTSTORE_URL: cannot reach EventStoreDB/);
    } finally {
      await t.drop();
    }
  });
});

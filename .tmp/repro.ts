import { spawn } from 'node:child_process';
import { v7 as uuidv7 } from 'uuid';
import { createAccount } from '../src/accounts/accounts.ts';
import { insertKey } from '../src/accounts/keys.ts';
import { bundleScopes } from '../src/accounts/scopes.ts';
import { freePort } from '../src/db/embedded.ts';
import { request } from '../bench/invoices-http.ts';
import { runConcurrently } from '../bench/support/concurrency.ts';
import { createBenchDatabase, startBenchServer } from '../bench/support/postgres.ts';

const server = await startBenchServer();
const database = await createBenchDatabase(server, { poolSize: 4, prefix: 'repro' });
const port = await freePort();
const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'warn', SERVICE_MODE: 'test' }, stdio: ['ignore', 'inherit', 'inherit'] });
child.on('exit', (c, s) => console.log('SERVER EXIT', c, s));
for (;;) { const ok = await request(`http://127.0.0.1:${port}/healthz`, 'GET').then((r) => r.status === 200, () => false); if (ok) break; await new Promise((r) => setTimeout(r, 200)); }
const account = await createAccount(database.db, { name: 'B', plan: 'fiduciaire', requestsPerMinute: 100_000_000 });
const organizationId = uuidv7();
const now = new Date().toISOString();
await database.db.insertInto('organizations').values({ id: organizationId, account_id: account.id, legal_name: 'B SARL', ice: '000000000000002', billing_address: JSON.stringify({ street: null, city: null, postal_code: null, country: 'MA' }), api_enabled: true, archived: false, created_at: now, updated_at: now, version: 0 }).execute();
const { secret } = await insertKey(database.db, { accountId: account.id, organizationId, scopes: bundleScopes('full_access') });
const auth = { authorization: `Bearer ${secret}` };
const api = `http://127.0.0.1:${port}/api/v1`;
const customer = (await request(`${api}/customers`, 'POST', { name: 'C SA', type: 'b2b', ice: '000000000000003' }, auth)).body.data;
const items = Array.from({ length: 5 }, (_, i) => ({ description: `P ${i}`, quantity: i + 1, unit_price: 1250.5, tax_rate: 20 }));
const statuses = new Map<number, number>();
try {
  await runConcurrently(1500, 32, async () => { const r = await request(`${api}/invoices`, 'POST', { customer_id: customer.id, issue_date: '2026-03-14', items }, auth); statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1); if (r.status !== 201) console.log(r.status, JSON.stringify(r.body).slice(0, 300)); });
} catch (e) { console.log('LOAD ERROR', e); }
console.log('statuses', [...statuses]);
child.kill('SIGTERM');
await new Promise((r) => setTimeout(r, 3000));
await database.drop();
await server.stop();
process.exit(0);

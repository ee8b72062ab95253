/**
 * The standing fuzz suite (docs/reliability.md): requests generated from the
 * server's own OpenAPI document (GET /openapi.json: the schemas ajv
 * validates with), valid and mutated bodies, queries, path ids and headers,
 * sent one at a time to a real server. For every answer: no 5xx; an error is
 * the reference's envelope with a known code whose status matches; a
 * refused write appended no event (nothing half-applied). At the end:
 * /readyz 200, numbering gapless, read models equal a rebuild.
 *
 * FUZZ_RUNS requests (default 300 in `npm test`; `npm run test:fuzz` sends
 * 10,000), FUZZ_SEED to replay a run (the seed is printed on failure and with
 * FUZZ_REPORT=1, with the figures).
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { sql } from 'kysely';
import { ERROR_STATUS } from '../../src/shared/errors.ts';
import { newIce } from '../customers/support.ts';
import { expectGaplessNumbering, expectProjectionsEqualRebuild } from '../faults/invariants.ts';
import { call, createAccount, createKey } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { hostileString, hostileValue, mutated, valid } from './schema-arbitrary.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);

interface Operation {
  method: string;
  path: string;
  query: { name: string; schema: any }[];
  body: any | null;
  accountRoute: boolean;
}

interface FuzzRequest {
  op: Operation;
  id: { kind: 'known' | 'uuid' | 'junk'; pick: number; junk: string };
  query: Record<string, string>;
  body: { kind: 'json'; value: unknown } | { kind: 'bytes'; bytes: number[]; contentType: string } | { kind: 'none' };
  auth: 'key' | 'missing' | 'junk' | 'account-with-header';
  idempotencyKey: string | null;
  ifMatch: string | null;
}

const WRITE = new Set(['post', 'patch', 'put', 'delete']);

/** `schema` with every `$ref` to components.schemas replaced by its target (the document names its schemas). */
function inlined(doc: any, schema: any): any {
  if (Array.isArray(schema)) return schema.map((s) => inlined(doc, s));
  if (schema === null || typeof schema !== 'object') return schema;
  if (typeof schema.$ref === 'string') return inlined(doc, doc.components.schemas[schema.$ref.split('/').pop()]);
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, inlined(doc, v)]));
}

function operations(doc: any): Operation[] {
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      const query = (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => ({ name: p.name, schema: p.schema }));
      const body = inlined(doc, op.requestBody?.content?.['application/json']?.schema ?? null);
      ops.push({ method, path, query, body, accountRoute: path.startsWith('/organizations') });
    }
  }
  return ops;
}

function requestArbitrary(ops: Operation[]): fc.Arbitrary<FuzzRequest> {
  return (fc.constantFrom(...ops).chain((op) =>
    fc.record({
      op: fc.constant(op),
      id: fc.record({ kind: fc.constantFrom<'known' | 'uuid' | 'junk'>('known', 'known', 'known', 'known', 'uuid', 'junk'), pick: fc.nat(), junk: hostileString }),
      query: fc.oneof(
        { weight: 3, arbitrary: fc.record(Object.fromEntries(op.query.map((q) => [q.name, valid(q.schema).map(String)])), { requiredKeys: [] }) },
        { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...op.query.map((q) => q.name), 'unknown', 'per_page', 'page'), fc.oneof(hostileString, fc.constantFrom('0x10', ' 5', '1e3', '-1', '9999999999999999999'))) },
      ) as fc.Arbitrary<Record<string, string>>,
      body: op.body
        ? fc.oneof(
            { weight: 6, arbitrary: valid(op.body).map((value) => ({ kind: 'json' as const, value })) },
            { weight: 3, arbitrary: mutated(op.body).map((value) => ({ kind: 'json' as const, value })) },
            {
              weight: 1,
              arbitrary: fc.record({
                kind: fc.constant('bytes' as const),
                bytes: fc.oneof(fc.uint8Array({ maxLength: 64 }).map((a) => [...a]), fc.constantFrom([0x7b], [0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00], [0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])),
                contentType: fc.constantFrom('application/json', 'application/json; charset=utf-16', 'text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json'),
              }),
            },
          )
        : fc.oneof({ weight: 9, arbitrary: fc.constant({ kind: 'none' as const }) }, { weight: 1, arbitrary: hostileValue.map((value) => ({ kind: 'json' as const, value })) }),
      auth: fc.constantFrom<FuzzRequest['auth']>('key', 'key', 'key', 'key', 'key', 'key', 'key', 'account-with-header', 'missing', 'junk'),
      idempotencyKey: op.method === 'post' ? fc.option(fc.oneof(fc.string({ minLength: 1, maxLength: 20 }), hostileString), { freq: 3 }) : fc.constant(null),
      ifMatch: fc.option(fc.oneof(fc.constantFrom('"0"', '"1"', '"2"', '*', 'W/"1"', '3'), hostileString), { freq: 4 }),
    }),
  ) as unknown) as fc.Arbitrary<FuzzRequest>;
}

describe('fuzz: requests generated from the OpenAPI document', function () {
  this.timeout(3_600_000);
  let server: TestServer;
  const ids: Record<string, string[]> = { customers: [], invoices: [], organizations: [] };
  let orgKey = '';
  let accountKey = '';
  let organizationId = '';

  before(async () => {
    server = await startTestServer({ env: { UNAUTHENTICATED_REQUESTS_PER_MINUTE: '0' } });
    const accountId = await createAccount(server.database.db, 'fiduciaire', { requestsPerMinute: 1_000_000_000 });
    accountKey = (await createKey(server.database.db, { accountId })).secret;
    const org = await call(`${server.url}/organizations`, accountKey, { method: 'POST', body: { legal_name: 'Fuzz SARL', ice: newIce() } });
    expect(org.status, JSON.stringify(org.body)).to.equal(201);
    organizationId = org.body.data.id;
    ids.organizations.push(organizationId);
    orgKey = (await createKey(server.database.db, { accountId, organizationId })).secret;
    for (let i = 0; i < 3; i++) {
      const c = await call(`${server.url}/customers`, orgKey, { method: 'POST', body: { name: `Client ${i}`, type: 'b2b', ice: newIce() } });
      ids.customers.push(c.body.data.id);
      const inv = await call(`${server.url}/invoices`, orgKey, { method: 'POST', body: { customer_id: c.body.data.id, issue_date: '2026-03-14', items: [{ description: 'Conseil', quantity: 1, unit_price: 100 }] } });
      ids.invoices.push(inv.body.data.id);
    }
  });
  after(() => server?.stop());

  it(`${RUNS} requests: no 5xx, every error a known code in the envelope, no refused write half-applied; then ready, gapless, projections equal a rebuild`, async () => {
    const doc = await (await fetch(`${server.root}/openapi.json`)).json();
    const ops = operations(doc);
    expect(ops.length).to.be.greaterThan(10);
    const requests = fc.sample(requestArbitrary(ops), { numRuns: RUNS, seed: SEED });
    const failures: string[] = [];
    const statuses: Record<string, number> = {};
    const codes: Record<string, number> = {};
    const resets: string[] = [];
    const head = async () => (await sql<{ n: string }>`select coalesce(max(global_position), 0)::text as n from es_events`.execute(server.database.db)).rows[0].n;
    // A refused write may have reserved and released a unique value or an entity slot
    // (the reservation protocol, docs/organizations.md): those streams net to nothing.
    // Audit digests are appended by a background worker (docs/audit.md), not by the request.
    // Anything else appended by a refused write is a half-applied change.
    const appendedSince = async (position: string) =>
      (await sql<{ stream_id: string; type: string }>`select stream_id, type from es_events where global_position > ${position}::bigint order by global_position`.execute(server.database.db)).rows
        .filter((e) => !/^(orgice|customerice-|orgslot-|audit-)/.test(e.stream_id))
        .map((e) => `${e.stream_id} ${e.type}`);

    for (const r of requests) {
      const collection = r.op.path.split('/')[1];
      const known = ids[collection] ?? ids.invoices;
      let id = r.id.kind === 'known' && known.length ? known[r.id.pick % known.length] : r.id.kind === 'uuid' ? crypto.randomUUID() : encodeURIComponent(r.id.junk.replace(/[\ud800-\udfff]/g, '\ufffd'));
      // Archiving the organization under test would turn every later request into a 403.
      if (id === organizationId && r.op.path.endsWith('/archive')) id = crypto.randomUUID();
      const path = r.op.path.replace('{id}', id);
      const qs = new URLSearchParams(r.query).toString();
      const url = `${server.url}${path}${qs ? `?${qs}` : ''}`;
      const headers: Record<string, string> = {};
      const secret = r.op.accountRoute || r.auth === 'account-with-header' ? accountKey : orgKey;
      if (r.auth === 'key' || r.auth === 'account-with-header') headers.authorization = `Bearer ${secret}`;
      if (r.auth === 'junk') headers.authorization = `Bearer svc_test_${'Z'.repeat(43)}`;
      if (r.auth === 'account-with-header') headers['x-organization-id'] = organizationId;
      if (r.idempotencyKey !== null) headers['idempotency-key'] = r.idempotencyKey.replace(/[^\x20-\x7e]/g, '?');
      if (r.ifMatch !== null) headers['if-match'] = r.ifMatch.replace(/[^\x20-\x7e]/g, '?');
      let body: string | Uint8Array | undefined;
      if (r.op.method === 'get') {
        // fetch sends no body with a GET (the pipeline ignores one anyway: docs/api-pipeline.md).
      } else if (r.body.kind === 'json') {
        const value = r.body.value as Record<string, unknown> | null;
        // Most generated customer ids name nothing; point most of them at a real customer so creates get through.
        if (value && typeof value === 'object' && 'customer_id' in value && r.id.pick % 4 !== 0 && ids.customers.length) value.customer_id = ids.customers[r.id.pick % ids.customers.length];
        body = JSON.stringify(r.body.value) ?? 'null';
        headers['content-type'] = 'application/json';
      } else if (r.body.kind === 'bytes') {
        body = new Uint8Array(r.body.bytes);
        headers['content-type'] = r.body.contentType;
      }
      const before = WRITE.has(r.op.method) ? await head() : null;
      const what = `${r.op.method.toUpperCase()} ${url} ${typeof body === 'string' ? body.slice(0, 300) : body ? `<${body.length} bytes>` : ''}`;
      const send = () => fetch(url, { method: r.op.method.toUpperCase(), headers, body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body) });
      let res: Response;
      try {
        res = await send();
      } catch (first) {
        // A reused keep-alive connection can be reset under the client; counted, and tried once more.
        resets.push(`${what}: ${String((first as Error).cause ?? first)}`);
        try {
          res = await send();
        } catch (err) {
          failures.push(`${what}: no answer (${String((err as Error).cause ?? err)})`);
          continue;
        }
      }
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const text = await res.text();
      if (res.status >= 500) failures.push(`${what}: ${res.status} ${text.slice(0, 300)}`);
      const isFile = res.ok && !/application\/json/.test(res.headers.get('content-type') ?? '');
      if (isFile) continue;
      let parsed: any;
      try {
        parsed = JSON.parse(text);
      } catch {
        failures.push(`${what}: not JSON: ${text.slice(0, 200)}`);
        continue;
      }
      if (res.ok) {
        if (parsed.success !== true) failures.push(`${what}: ${res.status} without success: true`);
        if (res.status === 201 && parsed.data?.id && ids[collection] && r.op.method === 'post' && !r.op.path.includes('{id}')) ids[collection].push(parsed.data.id);
        continue;
      }
      const code = parsed?.error?.code;
      codes[code] = (codes[code] ?? 0) + 1;
      if (parsed.success !== false || typeof parsed.error?.message !== 'string') failures.push(`${what}: ${res.status} not in the error envelope: ${text.slice(0, 200)}`);
      else if (!(code in ERROR_STATUS)) failures.push(`${what}: unknown error code ${code}`);
      else if (ERROR_STATUS[code as keyof typeof ERROR_STATUS] !== res.status) failures.push(`${what}: ${code} with status ${res.status}`);
      if (before !== null && (await head()) !== before) {
        const appended = await appendedSince(before);
        if (appended.length) failures.push(`${what}: refused with ${res.status} ${code} but appended ${appended.join(', ')}`);
      }
    }

    const report = `fuzz seed ${SEED}: ${requests.length} requests; statuses ${JSON.stringify(statuses)}; ${Object.keys(codes).length} distinct error codes ${JSON.stringify(codes)}; 5xx ${Object.entries(statuses).filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0)}; connection resets (retried) ${resets.length}${resets.length ? `: ${resets.slice(0, 3).join(' | ')}` : ''}`;
    if (process.env.FUZZ_REPORT) console.log(`      ${report}`);
    expect(failures.slice(0, 10), `${report}\n${failures.length} failures`).to.deep.equal([]);
    expect((await fetch(`${server.root}/readyz`)).status).to.equal(200);
    await expectProjectionsEqualRebuild(server.database.db, server.database.pool, server.database.url); // caught up first (it waits)
    await expectGaplessNumbering(server.database.db);
  });
});

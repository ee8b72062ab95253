/**
 * A client generated from the served /openapi.json is a good client:
 * openapi-typescript turns the document into types, a small typed client
 * (create, finalize and read an invoice, read `invoice.customer.name`)
 * type-checks under `strict` and then runs against the server. And the
 * document tells the truth: real answers of every resource conform to the
 * response schemas, whose `required` lists are what the types rely on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import _Ajv2020 from 'ajv/dist/2020.js';
import _addFormats from 'ajv-formats';
import { expect } from 'chai';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { call, createKey } from '../support/fixtures.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { invoicesClient, line, type InvoicesClient } from '../invoices/support.ts';

const Ajv2020 = _Ajv2020 as unknown as typeof _Ajv2020.default;
const addFormats = _addFormats as unknown as typeof _addFormats.default;
const root = fileURLToPath(new URL('../../', import.meta.url));

/** The typed client: only the generated types, fetch, and the API's documented shapes. */
const CLIENT = `
import type { components, operations, paths } from './api.ts';

type CreateInvoice = paths['/invoices']['post']['requestBody']['content']['application/json'];
type Created = operations['createInvoice']['responses']['201']['content']['application/json'];
type Finalized = operations['finalizeInvoice']['responses']['200']['content']['application/json'];
type Read = operations['getInvoice']['responses']['200']['content']['application/json'];
type Page = operations['listInvoices']['responses']['200']['content']['application/json'];
export type Invoice = components['schemas']['Invoice'];
type ApiError = components['schemas']['Error'];

export interface Outcome {
  id: string;
  number: string | null;
  status: Invoice['status'];
  customerName: string;
  city: string | null;
  lineTotals: string[];
  total: string;
  listed: number;
  location: string | null;
}

export async function run(base: string, key: string, customerId: string): Promise<Outcome> {
  const headers = { authorization: 'Bearer ' + key, 'content-type': 'application/json' };
  const body: CreateInvoice = {
    customer_id: customerId,
    issue_date: '2026-03-14',
    items: [{ description: 'Conseil', quantity: 2, unit_price: '500.00', tax_rate: 20 }],
  };
  const res = await fetch(base + '/invoices', { method: 'POST', headers, body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(((await res.json()) as ApiError).error.message);
  const created = (await res.json()) as Created;
  const id: string = created.data.id;
  const finalized = (await (await fetch(base + '/invoices/' + id + '/finalize', { method: 'POST', headers })).json()) as Finalized;
  const number: string | null = finalized.data.invoice_number;
  const read = (await (await fetch(base + '/invoices/' + id, { headers })).json()) as Read;
  const invoice = read.data;
  const customerName: string = invoice.customer.name;
  const city: string | null = invoice.customer.address.city;
  const page = (await (await fetch(base + '/invoices?per_page=5', { headers })).json()) as Page;
  const listed: number = page.meta.pagination.total;
  return {
    id,
    number,
    status: invoice.status,
    customerName,
    city,
    lineTotals: invoice.items.map((item) => item.total),
    total: invoice.tax_breakdown.reduce((sum, entry) => sum + entry.tax_amount + ';', '') + invoice.total,
    listed,
    location: res.headers.get('location'),
  };
}
`;

/** Code the types must refuse: the check is not vacuous. */
const WRONG = `
import type { operations } from './api.ts';
type Read = operations['getInvoice']['responses']['200']['content']['application/json'];
export function wrong(read: Read): number {
  const name: number = read.data.customer.name;
  const missing: string = read.data.customer.nickname;
  return name + missing.length;
}
`;

function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: true,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
    typeRoots: [join(root, 'node_modules', '@types')],
    skipLibCheck: true,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file ? `${d.file.fileName.split('/').pop()}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('OpenAPI: a client generated from /openapi.json', function () {
  this.timeout(300_000);
  let server: TestServer;
  let api: InvoicesClient;
  let doc: any;
  let dir: string;

  before(async () => {
    server = await startTestServer();
    api = await invoicesClient(server);
    doc = await (await fetch(`${server.root}/openapi.json`)).json();
    dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
    // package.json: the files are ES modules, as the client's imports say.
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(doc, { silent: true })));
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    writeFileSync(join(dir, 'wrong.ts'), WRONG);
  });
  after(async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    await server?.stop();
  });

  it('generates named types for every resource', () => {
    const names = Object.keys(doc.components.schemas);
    expect(names).to.include.members(['Invoice', 'InvoiceWithCustomer', 'InvoiceCustomer', 'Customer', 'Schedule', 'ScheduleWithHistory', 'Organization', 'Error', 'Pagination']);
    expect(doc.paths['/invoices/{id}'].get.responses['200'].content['application/json'].schema.properties.data).to.deep.equal({ $ref: '#/components/schemas/InvoiceWithCustomer' });
  });

  it('a typed client that creates, finalizes and reads an invoice type-checks under strict', () => {
    expect(typeErrors(join(dir, 'client.ts'))).to.deep.equal([]);
  });

  it('the types refuse a wrong client (the check can fail)', () => {
    const errors = typeErrors(join(dir, 'wrong.ts'));
    expect(errors.join('\n')).to.match(/'string' is not assignable to type 'number'/);
    expect(errors.join('\n')).to.match(/nickname/);
  });

  it('and it works against the server', async () => {
    const customer = await api.customer({ name: 'Riad Yasmine SARL' });
    const client = await import(pathToFileURL(join(dir, 'client.ts')).href);
    const outcome = await client.run(server.url, api.secret, customer.id);
    expect(outcome.number).to.match(/^INV-2026-\d{6}$/);
    expect(outcome.status).to.equal('finalized');
    expect(outcome.customerName).to.equal('Riad Yasmine SARL');
    expect(outcome.city).to.equal('Marrakech');
    expect(outcome.lineTotals).to.deep.equal(['1000.00']);
    expect(outcome.total).to.equal('200.00;1200.00');
    expect(outcome.listed).to.be.greaterThan(0);
    expect(outcome.location).to.equal(`/api/v1/invoices/${outcome.id}`);
  });

  describe('answers conform to the documented response schemas', () => {
    let ajv: InstanceType<typeof Ajv2020>;
    before(() => {
      ajv = new Ajv2020({ strict: false, allErrors: true });
      addFormats(ajv);
      // components.schemas as $defs of one schema, so every $ref resolves.
      const defs = JSON.parse(JSON.stringify(doc.components.schemas).replaceAll('#/components/schemas/', 'https://invoicing.test/schemas#/$defs/'));
      ajv.addSchema({ $id: 'https://invoicing.test/schemas', $defs: defs });
    });

    function conforms(method: string, path: string, reply: { status: number; body: any }) {
      const responses = doc.paths[path]?.[method]?.responses;
      expect(responses, `${method} ${path} documented`).to.be.an('object');
      const documented = responses[String(reply.status)];
      expect(documented, `${method} ${path} documents ${reply.status}: ${JSON.stringify(reply.body).slice(0, 300)}`).to.be.an('object');
      const schema = JSON.parse(JSON.stringify(documented.content['application/json'].schema).replaceAll('#/components/schemas/', 'https://invoicing.test/schemas#/$defs/'));
      const validate = ajv.compile(schema);
      const ok = validate(reply.body);
      expect(ok, `${method} ${path} ${reply.status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(reply.body).slice(0, 500)}`).to.equal(true);
    }

    it('invoices and customers', async () => {
      const customers = `${server.url}/customers`;
      const created = await call(customers, api.secret, { method: 'POST', body: { name: 'Dar Salam', type: 'b2c' } });
      conforms('post', '/customers', created);
      const id = created.body.data.id;
      conforms('get', '/customers/{id}', await call(`${customers}/${id}`, api.secret));
      conforms('patch', '/customers/{id}', await call(`${customers}/${id}`, api.secret, { method: 'PATCH', body: { tags: ['vip'] } }));
      conforms('get', '/customers', await call(customers, api.secret));

      const draft = await api.create({ customer_id: id, issue_date: '2026-03-14', items: [line()] });
      conforms('post', '/invoices', draft);
      const invoiceId = draft.body.data.id;
      conforms('patch', '/invoices/{id}', await api.patch(invoiceId, { notes: 'Merci' }));
      conforms('post', '/invoices/{id}/finalize', await api.action(invoiceId, 'finalize'));
      conforms('post', '/invoices/{id}/send', await api.action(invoiceId, 'send'));
      conforms('post', '/invoices/{id}/pay', await api.action(invoiceId, 'pay', { payment_method: 'virement' }));
      const read = await api.get(invoiceId);
      conforms('get', '/invoices/{id}', read);
      // The check bites: an answer without a required field does not conform.
      const { customer: _dropped, ...withoutCustomer } = read.body.data;
      expect(() => conforms('get', '/invoices/{id}', { status: 200, body: { ...read.body, data: withoutCustomer } })).to.throw(/customer/);
      conforms('get', '/invoices', await api.list());
      conforms('get', '/invoices/{id}/events', await api.events(invoiceId));
      const other = await api.finalized(id);
      conforms('post', '/invoices/{id}/void', await api.action(other.id, 'void', { reason: 'Erreur de saisie' }));
      conforms('delete', '/customers/{id}', await call(`${customers}/${id}`, api.secret, { method: 'DELETE' }));
      conforms('post', '/invoices', await api.create({ customer_id: id, items: [{ description: '' }] }));
    });

    it('recurring schedules', async () => {
      const customer = await api.customer();
      const base = `${server.url}/recurring-invoices`;
      const created = await call(base, api.secret, { method: 'POST', body: { customer_id: customer.id, frequency: 'monthly', start_date: '2026-01-20', items: [line()] } });
      conforms('post', '/recurring-invoices', created);
      const id = created.body.data.id;
      conforms('get', '/recurring-invoices/{id}', await call(`${base}/${id}`, api.secret));
      conforms('get', '/recurring-invoices', await call(base, api.secret));
      conforms('post', '/recurring-invoices/{id}/generate', await call(`${base}/${id}/generate`, api.secret, { method: 'POST' }));
      conforms('get', '/recurring-invoices/{id}/history', await call(`${base}/${id}/history`, api.secret));
      conforms('post', '/recurring-invoices/{id}/pause', await call(`${base}/${id}/pause`, api.secret, { method: 'POST' }));
      conforms('post', '/recurring-invoices/{id}/resume', await call(`${base}/${id}/resume`, api.secret, { method: 'POST' }));
      conforms('put', '/recurring-invoices/{id}', await call(`${base}/${id}`, api.secret, { method: 'PUT', body: { days_until_due: 15 } }));
      conforms('delete', '/recurring-invoices/{id}', await call(`${base}/${id}`, api.secret, { method: 'DELETE' }));
    });

    it('organizations', async () => {
      conforms('get', '/organization', await call(`${server.url}/organization`, api.secret));
      conforms('patch', '/organization', await call(`${server.url}/organization`, api.secret, { method: 'PATCH', body: { phone: '+212522000001' } }));
      const account = await createKey(server.database.db, { accountId: api.tenant.accountId, scopes: ['organizations:read', 'organizations:write', 'organizations:archive'] });
      const base = `${server.url}/organizations`;
      const created = await call(base, account.secret, { method: 'POST', body: { legal_name: 'Atlas Sud SARL', address_city: 'Agadir' } });
      conforms('post', '/organizations', created);
      const id = created.body.data.id;
      conforms('get', '/organizations/{id}', await call(`${base}/${id}`, account.secret));
      conforms('get', '/organizations', await call(base, account.secret));
      conforms('post', '/organizations/{id}/archive', await call(`${base}/${id}/archive`, account.secret, { method: 'POST' }));
      conforms('post', '/organizations/{id}/restore', await call(`${base}/${id}/restore`, account.secret, { method: 'POST' }));
    });
  });
});

/**
 * End to end through the API: customer and invoice writes on a real server
 * reach a receiver as signed webhooks whose data is the resource as the
 * API returned it at that step (never a later state).
 */
import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../support/server.ts';
import { invoicesClient } from '../invoices/support.ts';
import { newEndpoint, Receiver, until } from './support.ts';

describe('webhooks: end to end through the API', function () {
  this.timeout(120_000);
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    receiver = await new Receiver().start();
    server = await startTestServer({ env: { WEBHOOK_ALLOW_INSECURE: 'true' } });
  });
  after(async () => {
    await server?.stop();
    await receiver?.stop();
  });

  it('POST /customers, POST /invoices, finalize, pay: four signed webhooks with the snapshot of each step', async () => {
    const client = await invoicesClient(server);
    const ep = await newEndpoint(server.database.db, client.tenant.organizationId, receiver.url(), 'A');
    const customer = await client.customer();
    const draft = await client.draft(customer.id);
    const finalized = await client.action(draft.id, 'finalize');
    const paid = await client.action(draft.id, 'pay', { payment_method: 'bank_transfer', paid_at: '2026-03-20T10:00:00Z' });
    expect(paid.status, JSON.stringify(paid.body)).to.equal(200);

    await until(() => receiver.requests.length >= 4, 10_000);
    const got = receiver.requests.map((r) => ({ r, body: JSON.parse(r.body.toString('utf8')) }));
    expect(got.map((g) => g.body.event).sort()).to.deep.equal(['customer.created', 'invoice.created', 'invoice.finalized', 'invoice.paid']);
    for (const { r, body } of got) {
      const ts = String(r.headers['x-webhook-timestamp']);
      expect(r.headers['x-webhook-signature']).to.equal(`v1=${createHmac('sha256', ep.secret).update(`${ts}.`).update(r.body).digest('hex')}`);
      expect(body.organization_id).to.equal(client.tenant.organizationId);
    }
    const data = (name: string) => got.find((g) => g.body.event === name)!.body.data;
    expect(data('customer.created')).to.deep.equal(customer);
    const strip = ({ customer: _c, ...rest }: Record<string, unknown>) => rest;
    expect(strip(data('invoice.created'))).to.deep.equal(strip(draft));
    expect(data('invoice.finalized')).to.deep.include({ status: 'finalized', invoice_number: finalized.body.data.invoice_number });
    expect(strip(data('invoice.paid'))).to.deep.equal(strip(paid.body.data));
  });
});

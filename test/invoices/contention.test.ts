/**
 * Contention on one invoice through real HTTP: concurrent PATCHes of one
 * draft each either apply (200) or, when the command runner's retries run
 * out, answer 409 VERSION_CONFLICT with current_version; never a 500.
 */
import { expect } from 'chai';
import { withInvoicesApi, type InvoicesClient } from './support.ts';

describe('invoices API: contention', () => {
  let api: InvoicesClient;
  let customer: any;
  withInvoicesApi((f) => ({ api, customer } = f));

  it('30 concurrent PATCHes of one draft: every answer 200 or 409 VERSION_CONFLICT, each 200 appended one event', async () => {
    const draft = await api.draft(customer.id);
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => api.patch(draft.id, { notes: `note ${i}` })));
    const statuses = replies.map((r) => r.status);
    for (const r of replies) {
      if (r.status === 200) continue;
      expect(r.status, JSON.stringify(r.body)).to.equal(409);
      expect(r.body.error.code).to.equal('VERSION_CONFLICT');
      expect(r.body.error.details.current_version).to.be.a('number');
    }
    const ok = replies.filter((r) => r.status === 200);
    expect(ok.length, statuses.join(',')).to.be.greaterThan(0);
    // Each 200 appended exactly one event (every note differs), each 409 none.
    const final = (await api.get(draft.id)).body.data;
    expect(final.version).to.equal(ok.length);
    const history = (await api.events(draft.id)).body.data;
    expect(history.filter((e: any) => e.type === 'invoice.updated')).to.have.length(ok.length);
    expect(ok.map((r) => r.body.data.notes)).to.include(final.notes);
  });
});

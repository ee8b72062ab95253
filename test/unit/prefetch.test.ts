/**
 * The prefetch's pure parts (src/api/pipeline/prefetch.ts): the hint read from a request before it is
 * validated, and the facts that answer from what was fetched only for the very row asked for. The
 * statement itself runs in every HTTP suite that creates or edits an invoice or creates a schedule;
 * test/invoices/round-trips.test.ts counts the round trip it saves on each such route, and the last test of
 * test/invoices/lifecycle.test.ts checks that a request that waited for its Idempotency-Key reads afresh.
 */
import { expect } from 'chai';
import type { Request } from 'express';
import type { InvoiceCustomer } from '../../src/commands/invoice/commands.ts';
import type { InvoiceFacts } from '../../src/commands/invoice/facts.ts';
import { prefetchHint, prefetchedOf, withPrefetched, type PrefetchHint } from '../../src/api/pipeline/prefetch.ts';
import { authenticate } from '../../src/api/pipeline/authenticate.ts';
import type { Runtime } from '../../src/runtime.ts';

const A = '0190a1b2-0000-7000-8000-00000000000a';
const B = '0190a1b2-0000-7000-8000-00000000000b';
const ORG = '0190a1b2-0000-7000-8000-0000000000f1';
const OTHER_ORG = '0190a1b2-0000-7000-8000-0000000000f2';

const withBody = (text: string) => ({ body: Buffer.from(text) }) as unknown as Request;

const snapshot = (id: string): InvoiceCustomer => ({
  id, name: 'Atlas SARL', type: 'b2b', ice: '001234567000089', email: null, phone: null,
  address: { street: null, city: 'Rabat', postal_code: null, country: 'MA' }, status: 'active',
});

/** Facts that record what they were asked: the reads the prefetch did not spare. */
function recording(): InvoiceFacts & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async customer(organizationId, customerId) {
      asked.push(`customer ${String(customerId)}`);
      return organizationId === ORG ? snapshot(String(customerId)) : null;
    },
    async organization(organizationId) {
      asked.push(`organization ${organizationId}`);
      return { legal_name: 'read', ice: null };
    },
  };
}

describe('prefetch: the hint', () => {
  it("takes the body's customer_id, lower-cased, wherever it stands and however it is spaced", () => {
    expect(prefetchHint('customer-of-body', withBody(`{"issue_date":"2026-03-14","customer_id" :  "${A.toUpperCase()}","items":[]}`))).to.deep.equal({ kind: 'customer', id: A });
    expect(prefetchHint('customer-of-body', withBody(`{\n  "customer_id":\n"${A}"\n}`))).to.deep.equal({ kind: 'customer', id: A });
  });

  it('gives none for what it cannot read without parsing: no body, not a UUID, an escaped name, a name inside a string', () => {
    expect(prefetchHint('customer-of-body', withBody(''))).to.equal(null);
    expect(prefetchHint('customer-of-body', withBody('{"customer_id":"0190a1b2-0000-7000-8000-00000000000"}'))).to.equal(null);
    expect(prefetchHint('customer-of-body', withBody('{"customer_id":12}'))).to.equal(null);
    expect(prefetchHint('customer-of-body', withBody(`{"customer\\u005fid":"${A}"}`))).to.equal(null);
    expect(prefetchHint('customer-of-body', withBody(`{"notes":"\\"customer_id\\":\\"${A}\\""}`))).to.equal(null);
  });

  it("takes an invoice's id from the path, lower-cased as validation gives it to the handler, and none that is not a UUID", () => {
    const withPath = (id: string) => ({ params: { id } }) as unknown as Request;
    expect(prefetchHint('invoice-of-path', withPath(A.toUpperCase()))).to.deep.equal({ kind: 'invoice', id: A });
    expect(prefetchHint('invoice-of-path', withPath('42'))).to.equal(null);
    // An edit: the invoice, and the customer its body names when it names one.
    const edit = (body: string) => ({ params: { id: A.toUpperCase() }, body: Buffer.from(body) }) as unknown as Request;
    expect(prefetchHint('invoice-of-path+customer-of-body', edit(`{"customer_id":"${B.toUpperCase()}"}`))).to.deep.equal({ kind: 'invoice', id: A, customerId: B });
    expect(prefetchHint('invoice-of-path+customer-of-body', edit('{"notes":"x"}'))).to.deep.equal({ kind: 'invoice', id: A });
  });

  it('gives none for a route without a prefetch', () => {
    expect(prefetchHint(undefined, withBody(`{"customer_id":"${A}"}`))).to.equal(null);
  });
});

describe('prefetch: the facts it answers', () => {
  const row = (customer: string | null, organization = ORG) => ({
    kind: 'organization', organization_id: ORG, org_legal_name: 'Atlas Holding SA', org_ice: '001234567000089',
    ...(customer === null ? {} : {
      c_id: customer, c_name: 'Atlas SARL', c_type: 'b2b', c_ice: '001234567000089', c_email: null, c_phone: null,
      c_address_street: null, c_address_city: 'Rabat', c_address_postal_code: null, c_address_country: 'MA', c_status: 'active', c_organization_id: organization,
    }),
  });

  it('answers the customer fetched and the key\'s organization without reading; any other id is read', async () => {
    const facts = recording();
    const prefetched = withPrefetched(facts, prefetchedOf({ kind: 'customer', id: A }, [row(A)]));
    expect(await prefetched.customer(ORG, A.toUpperCase())).to.deep.equal(snapshot(A));
    expect(await prefetched.organization(ORG)).to.deep.equal({ legal_name: 'Atlas Holding SA', ice: '001234567000089' });
    expect(facts.asked).to.deep.equal([]);
    expect(await prefetched.customer(ORG, B)).to.deep.equal(snapshot(B));
    expect(await prefetched.organization(OTHER_ORG)).to.deep.equal({ legal_name: 'read', ice: null });
    expect(facts.asked).to.deep.equal([`customer ${B}`, `organization ${OTHER_ORG}`]);
  });

  it("never shows another organization's customer: fetched by id alone, it is none for this organization", async () => {
    const facts = recording();
    const prefetched = withPrefetched(facts, prefetchedOf({ kind: 'customer', id: A }, [row(A, OTHER_ORG)]));
    expect(await prefetched.customer(ORG, A)).to.equal(null);
    expect(facts.asked).to.deep.equal([]);
  });

  it('a customer id the statement found no row for is none, without a second read', async () => {
    const facts = recording();
    const prefetched = withPrefetched(facts, prefetchedOf({ kind: 'customer', id: A }, [row(null)]));
    expect(await prefetched.customer(ORG, A)).to.equal(null);
    expect(facts.asked).to.deep.equal([]);
  });

  it("an invoice's statement: the stream from every row, the customer its row names; none fetched says nothing of another id", async () => {
    const event = (revision: number) => ({
      e_global_position: String(10 + revision), e_transaction_id: '700', e_stream_id: `invoice-${B}`, e_revision: String(revision), e_event_id: `${A.slice(0, -1)}${revision}`,
      e_type: 'InvoiceCreated', e_data: {}, e_metadata: { organization_id: ORG }, e_hash: 'h', e_created_at: new Date(0), e_inline_projectors: 1,
    });
    const fetched = prefetchedOf({ kind: 'invoice', id: B }, [{ ...row(A), ...event(1) }, { ...row(A), ...event(0) }]);
    expect(fetched.stream!.name).to.equal(`invoice-${B}`);
    expect(fetched.stream!.events.map((e) => [e.revision, e.id, e.stream])).to.deep.equal([[0, `${A.slice(0, -1)}0`, `invoice-${B}`], [1, `${A.slice(0, -1)}1`, `invoice-${B}`]]);
    const facts = recording();
    expect(await withPrefetched(facts, fetched).customer(ORG, A)).to.deep.equal(snapshot(A));
    expect(facts.asked).to.deep.equal([]);
    // No stream (no event row): no customer either, even one the invoice's row named (it would be older than
    // the stream the handler then reads); the customer the handler names is read.
    const none = prefetchedOf({ kind: 'invoice', id: B }, [{ ...row(A), e_event_id: null }]);
    expect(none.stream!.events).to.deep.equal([]);
    expect(none.customer).to.equal(undefined);
    expect(await withPrefetched(facts, none).customer(ORG, A)).to.deep.equal(snapshot(A));
    expect(facts.asked).to.deep.equal([`customer ${A}`]);
  });

  it("an edit's statement: the customer its body names, even without events; no row is no such customer, without a read", async () => {
    const facts = recording();
    const found = prefetchedOf({ kind: 'invoice', id: B, customerId: A }, [{ ...row(A), e_event_id: null }]);
    expect(await withPrefetched(facts, found).customer(ORG, A)).to.deep.equal(snapshot(A));
    const missing = prefetchedOf({ kind: 'invoice', id: B, customerId: A }, [{ ...row(null), e_event_id: null }]);
    expect(await withPrefetched(facts, missing).customer(ORG, A)).to.equal(null);
    expect(facts.asked).to.deep.equal([]);
  });

  it('an account key brings no seller facts: the organization is read', async () => {
    const facts = recording();
    const prefetched = withPrefetched(facts, prefetchedOf(null, [{ kind: 'account', organization_id: null }]));
    expect(await prefetched.organization(ORG)).to.deep.equal({ legal_name: 'read', ice: null });
    expect(facts.asked).to.deep.equal([`organization ${ORG}`]);
  });
});

describe("prefetch: an invoice's stream only where the events are tables of the same database", () => {
  /** The statement authenticate() sends for an invoice hint, with an event store of `kind` (the key found nowhere: a 401 after it). */
  async function statementFor(kind: 'postgres' | 'eventstoredb', hint: PrefetchHint = { kind: 'invoice', id: A }): Promise<string> {
    const sent: string[] = [];
    const rt = {
      config: { serviceMode: 'test' },
      store: { kind },
      database: { pool: { query: async (q: { name: string }) => (sent.push(q.name), { rows: [] }) } },
    } as unknown as Runtime;
    const secret = `svc_test_${'a'.repeat(32)}`;
    const req = { headers: { authorization: `Bearer ${secret}` }, rawHeaders: ['Authorization', `Bearer ${secret}`] } as unknown as Request;
    await authenticate(rt, req, hint).then(() => expect.fail('no key, no principal'), () => {});
    return sent.join(', ');
  }

  it('PostgreSQL: the key with the invoice; EventStoreDB: the key alone (the handler reads the stream from the store)', async () => {
    expect(await statementFor('postgres')).to.equal('pipeline-authenticate+invoice');
    expect(await statementFor('eventstoredb')).to.equal('pipeline-authenticate');
    // An edit naming a customer: that customer still rides with the key, as a create's.
    const edit: PrefetchHint = { kind: 'invoice', id: A, customerId: B };
    expect(await statementFor('postgres', edit)).to.equal('pipeline-authenticate+invoice');
    expect(await statementFor('eventstoredb', edit)).to.equal('pipeline-authenticate+customer');
  });
});


/**
 * Customer command handlers on the real PostgreSQL event store: the ICE
 * reservations they leave behind when the customer append fails, tenant
 * checks on the stream, and the holder check recovery relies on.
 */
import { expect } from 'chai';
import { v7 as uuidv7 } from 'uuid';
import { archiveCustomer, createCustomer, loadCustomer, updateCustomer, type CustomerWrite } from '../../src/commands/customer/handler.ts';
import { customerHolderChecks } from '../../src/commands/customer/holders.ts';
import { customerIceScope, readReservation } from '../../src/commands/reservation/index.ts';
import { createPostgresEventStore } from '../../src/eventstore/postgres.ts';
import type { EventStore } from '../../src/eventstore/types.ts';
import { freshDatabase, type TestDatabase } from '../support/database.ts';
import { storeWith } from '../support/event-store.ts';

/** The store, except that appends to customer streams fail (a lost connection, a full disk). */
function failingCustomerAppends(store: EventStore): EventStore {
  return storeWith(store, {
    appendToStream: (stream: string, ...rest: any[]) =>
      stream.startsWith('customer-') ? Promise.reject(new Error('connection lost')) : (store.appendToStream as any)(stream, ...rest),
  });
}

describe('customer handlers: reservations and tenancy', () => {
  let t: TestDatabase;
  let store: EventStore;
  const org = uuidv7();
  let ice = 100_000_000_000_000;
  const nextIce = () => String(++ice);
  const w = (s: EventStore = store, organizationId = org, ifMatch?: number): CustomerWrite => ({
    store: s,
    organizationId,
    ifMatch,
    metadata: { organization_id: organizationId, actor: 'key-1', request_id: 'r', correlation_id: 'r', causation_id: null, occurred_at: new Date().toISOString() },
  });
  const owner = async (value: string, organizationId = org) => (await readReservation(store, customerIceScope(organizationId), value)).owner;

  before(async () => {
    t = await freshDatabase();
    store = await createPostgresEventStore(t.pool, t.url);
  });
  after(async () => {
    await store?.close();
    await t?.drop();
  });

  it('claims the ICE for the new customer', async () => {
    const id = uuidv7();
    const value = nextIce();
    const result = await createCustomer(w(), id, { name: 'Atlas', type: 'b2b', ice: value });
    expect(result.position).to.be.a('string');
    expect(result.state.customer).to.deep.include({ id, ice: value, version: 0 });
    expect(await owner(value)).to.equal(id);
  });

  it('releases the claim of a create whose append fails', async () => {
    const value = nextIce();
    let error: Error | null = null;
    await createCustomer(w(failingCustomerAppends(store)), uuidv7(), { name: 'Lost', type: 'b2b', ice: value }).catch((e) => (error = e));
    expect(error).to.have.property('message', 'connection lost');
    expect(await owner(value)).to.equal(null);
    const id = uuidv7();
    await createCustomer(w(), id, { name: 'Retry', type: 'b2b', ice: value });
    expect(await owner(value)).to.equal(id);
  });

  it('keeps the old ICE and frees the new one when an ICE change cannot be written', async () => {
    const [before, after] = [nextIce(), nextIce()];
    const id = uuidv7();
    await createCustomer(w(), id, { name: 'Mover', type: 'b2b', ice: before });
    let error: Error | null = null;
    await updateCustomer(w(failingCustomerAppends(store)), id, { ice: after }).catch((e) => (error = e));
    expect(error).to.have.property('message', 'connection lost');
    expect(await owner(before)).to.equal(id);
    expect(await owner(after)).to.equal(null);
    expect((await loadCustomer(store, org, id)).state.customer?.ice).to.equal(before);

    await updateCustomer(w(), id, { ice: after });
    expect(await owner(before)).to.equal(null);
    expect(await owner(after)).to.equal(id);
  });

  it('touches no reservation for a refused update or a stale If-Match', async () => {
    const [mine, wanted] = [nextIce(), nextIce()];
    const id = uuidv7();
    await createCustomer(w(), id, { name: 'Careful', type: 'b2b', ice: mine });
    let code: string | undefined;
    await updateCustomer(w(), id, { ice: wanted, email: 'broken' }).catch((e) => (code = e.code));
    expect(code).to.equal('VALIDATION_ERROR');
    await updateCustomer(w(store, org, 7), id, { ice: wanted }).catch((e) => (code = e.code));
    expect(code).to.equal('VERSION_CONFLICT');
    expect(await owner(wanted)).to.equal(null);
    expect(await store.readStream(`${customerIceScope(org).prefix}-${mine}`)).to.have.length(1); // no intended release either
  });

  it('treats another organization’s customer as not found', async () => {
    const id = uuidv7();
    await createCustomer(w(), id, { name: 'Private', type: 'b2c' });
    const other = uuidv7();
    for (const attempt of [
      () => updateCustomer(w(store, other), id, { name: 'Mine now' }),
      () => archiveCustomer(w(store, other), id),
      () => loadCustomer(store, other, id),
    ]) {
      let code: string | undefined;
      await attempt().catch((e) => (code = e.code));
      expect(code).to.equal('NOT_FOUND');
    }
    expect(await store.readStream(`customer-${id}`)).to.have.length(1);
  });

  it('tells recovery whether the customer holds the ICE (archived customers still do)', async () => {
    const check = customerHolderChecks.customerice;
    expect(check).to.be.a('function');
    const value = nextIce();
    const id = uuidv7();
    const scope = customerIceScope(org).prefix;
    expect(await check(store, id, value, scope)).to.equal(false); // claimed, never created
    await createCustomer(w(), id, { name: 'Holder', type: 'b2b', ice: value });
    expect(await check(store, id, value, scope)).to.equal(true);
    expect(await check(store, id, value, customerIceScope(uuidv7()).prefix)).to.equal(false);
    await archiveCustomer(w(), id);
    expect(await check(store, id, value, scope)).to.equal(true);
    await updateCustomer(w(), id, { ice: null });
    expect(await check(store, id, value, scope)).to.equal(false);
  });
});

/**
 * What reservation recovery asks before freeing a customer ICE
 * `customerice-<org>-<ice>`: does the owning customer exist in that
 * organization and still carry that ICE? An archived customer still holds its
 * ICE (it can be unarchived). Passed to the recovery worker by src/main.ts.
 */
import { customerIceScope, type HolderChecks } from '../reservation/index.ts';
import { customerDecider, initialCustomerState } from './decider.ts';
import { customerStream, type CustomerEvent } from './events.ts';

export const customerHolderChecks: HolderChecks = {
  async customerice(store, owner, ice, scope) {
    const recorded = await store.readStream(customerStream(owner));
    if (recorded.length === 0) return false; // the claim's owner never came to exist
    const organizationId = recorded[0].metadata.organization_id;
    if (!organizationId || customerIceScope(organizationId).prefix !== scope) return false;
    const state = recorded.reduce((s, r) => customerDecider.evolve(s, { type: r.type, data: r.data } as CustomerEvent), initialCustomerState);
    return state.customer?.ice === ice;
  },
};

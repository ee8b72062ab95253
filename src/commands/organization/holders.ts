/**
 * What recovery asks before freeing an organization's reservation: does the
 * organization exist and hold that ICE (one it names now or named before: an
 * ICE is never given back), or that entity slot?
 * Passed to the recovery worker by src/main.ts.
 */
import type { EventStore } from '../../eventstore/types.ts';
import type { HolderChecks } from '../reservation/index.ts';
import { loadStream } from '../shared/handler.ts';
import { organizationDecider, type OrganizationState } from './decider.ts';
import { organizationStream } from './events.ts';

/** The organization's state as its stream says (recovery's checks and the operator's release read it). */
export async function organizationState(store: EventStore, organizationId: string): Promise<OrganizationState> {
  return (await loadStream(store, organizationStream(organizationId), organizationDecider)).state;
}

export const organizationHolderChecks: HolderChecks = {
  async orgice(store, owner, ice) {
    const { organization, ices } = await organizationState(store, owner);
    return organization !== null && ices.includes(ice);
  },
  async orgslot(store, owner, slot, scope) {
    const { organization, entitySlot } = await organizationState(store, owner);
    return organization !== null && scope === `orgslot-${organization.account_id}` && String(entitySlot) === slot;
  },
};

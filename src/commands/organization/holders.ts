/**
 * What recovery asks before freeing an organization's reservation: does the
 * organization exist and still hold that ICE, or that entity slot?
 * Registered once on import (src/wiring.ts imports this module).
 */
import type { EventStore } from '../../eventstore/types.ts';
import { registerHolderCheck } from '../reservation/index.ts';
import { loadStream } from '../shared/handler.ts';
import { organizationDecider, type OrganizationState } from './decider.ts';
import { organizationStream } from './events.ts';

async function organizationState(store: EventStore, organizationId: string): Promise<OrganizationState> {
  return (await loadStream(store, organizationStream(organizationId), organizationDecider)).state;
}

registerHolderCheck('orgice', async (store, owner, ice) => {
  const { organization } = await organizationState(store, owner);
  return organization !== null && organization.ice === ice;
});

registerHolderCheck('orgslot', async (store, owner, slot, scope) => {
  const { organization, entitySlot } = await organizationState(store, owner);
  return organization !== null && scope === `orgslot-${organization.account_id}` && String(entitySlot) === slot;
});

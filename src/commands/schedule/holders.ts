/**
 * What reservation recovery asks before freeing a quota slot
 * `scheduleslot-<org>-<n>`: does the owning schedule exist in that
 * organization, still active or paused, on that slot? A create that died
 * before its schedule existed, or a completion that died before giving its
 * slot back, leaves a claim this check lets recovery free.
 * Passed to the recovery worker by src/main.ts.
 */
import type { HolderChecks } from '../reservation/index.ts';
import { loadStream } from '../shared/handler.ts';
import { scheduleDecider } from './decider.ts';
import { scheduleStream } from './events.ts';
import { scheduleSlotScope } from './handler.ts';

export const scheduleHolderChecks: HolderChecks = {
  async scheduleslot(store, owner, slot, scope) {
    const { recorded, state } = await loadStream(store, scheduleStream(owner), scheduleDecider);
    const schedule = state.schedule;
    const organizationId = recorded[0]?.metadata.organization_id;
    if (!schedule || !organizationId || scheduleSlotScope(organizationId).prefix !== scope) return false;
    return (schedule.status === 'active' || schedule.status === 'paused') && String(schedule.quota_slot) === slot;
  },
};

/**
 * What every command handler takes from a request: the event store, the
 * events' metadata, If-Match, and under an Idempotency-Key the command id
 * (the same on every attempt of the request, so the runner recognises its
 * own earlier work: src/commands/shared/handler.ts).
 */
import type { EventMetadata, EventStore } from '../eventstore/types.ts';
import type { RequestContext } from './route.ts';

export interface CommandInput {
  store: EventStore;
  metadata: EventMetadata;
  ifMatch?: number;
  commandId?: string;
}

export function commandInput(ctx: RequestContext): CommandInput {
  return { store: ctx.store, metadata: ctx.metadata(), ifMatch: ctx.ifMatch, commandId: ctx.idempotencySeed ? ctx.newId('command') : undefined };
}

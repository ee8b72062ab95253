/**
 * The envelope every command of every aggregate carries. Deciders cannot read
 * a clock or a session, so the handler puts the time, the actor and the
 * tenant here; events are stamped from it (created_at, updated_at, ...).
 */
import type { EventMetadata } from '../eventstore/types.ts';

export interface CommandMetadata {
  /** ISO 8601 UTC with milliseconds, read once by the handler. */
  now: string;
  /** API key id, or 'system' for workers and recovery. */
  actor: string;
  organization_id: string;
}

export interface Command<T extends string, D> {
  type: T;
  data: D;
  metadata: CommandMetadata;
}

/** The command envelope of a write whose events carry `metadata`. */
export function commandMetadataOf(metadata: EventMetadata): CommandMetadata {
  return { now: metadata.occurred_at, actor: metadata.actor, organization_id: String(metadata.organization_id) };
}

/** A write in `organizationId`: its events' metadata (stamped with that organization) and its command envelope. */
export function envelope(request: EventMetadata, organizationId: string): { metadata: EventMetadata; commandMetadata: CommandMetadata } {
  const metadata: EventMetadata = { ...request, organization_id: organizationId };
  return { metadata, commandMetadata: commandMetadataOf(metadata) };
}

/** Metadata of a write no request asked for (recovery, the admin CLI, start-up hooks): actor 'system', now. */
export function systemMetadata(extra: Partial<EventMetadata> = {}): EventMetadata {
  return { organization_id: null, actor: 'system', request_id: null, correlation_id: null, causation_id: null, occurred_at: new Date().toISOString(), ...extra };
}

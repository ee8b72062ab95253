/**
 * The envelope every command of every aggregate carries. Deciders cannot read
 * a clock or a session, so the handler puts the time, the actor and the
 * tenant here; events are stamped from it (created_at, updated_at, ...).
 */

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

/**
 * Webhook configuration and delivery tables (migration 0007; not
 * event-sourced): written by src/workers/webhooks/ (subscriber, outbox,
 * sender) and the admin CLI.
 */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { GeneratedTimestamp, Timestamp } from './columns.ts';

export interface WebhookEndpointsTable {
  id: string;
  organization_id: string;
  url: string;
  events: Generated<string[]>;
  convention: Generated<'A' | 'B'>;
  secret: string;
  secret_hint: string;
  enabled: Generated<boolean>;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface WebhookDeliveriesTable {
  id: string;
  endpoint_id: string;
  organization_id: string;
  event_id: string;
  event_type: string;
  body: string;
  test: Generated<boolean>;
  status: Generated<'pending' | 'succeeded' | 'failed'>;
  attempt_count: Generated<number>;
  next_attempt_at: Timestamp | null;
  last_attempt_at: Timestamp | null;
  claim_token: string | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface WebhookAttemptsTable {
  /** bigint identity: arrives as a string */
  id: ColumnType<string, never, never>;
  delivery_id: string;
  attempt_number: number;
  attempted_at: Timestamp;
  signature_timestamp: ColumnType<string, string | number, string | number>;
  status_code: number | null;
  duration_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

export interface WebhooksTables {
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>;

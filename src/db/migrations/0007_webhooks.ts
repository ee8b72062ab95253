import { sql, type Kysely } from 'kysely';

/**
 * Webhooks (docs/api-decisions.md "Webhooks", docs/webhooks.md). Configuration and an
 * outbox, not event-sourced: deliveries are bookkeeping of sends.
 * - webhook_endpoints: `secret` holds the signing secret as sealed by
 *   src/workers/webhooks/secrets.ts (AES-256-GCM when WEBHOOK_SECRET_KEY is
 *   set, else the secret itself: HMAC needs the secret, a hash would not do).
 *   `secret_hint` (last 4 characters) is what listings show.
 * - webhook_deliveries: one row per (event, endpoint), written by the
 *   subscriber in its checkpoint's transaction. `body` is the exact byte
 *   string signed and sent on every attempt (text, not jsonb: jsonb would
 *   reorder keys). `claim_token` + `next_attempt_at` form a sender's lease.
 * - webhook_attempts: every attempt, with what was sent and what came back.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table webhook_endpoints (
      id uuid primary key,
      organization_id uuid not null,
      url text not null,
      events text[] not null default array[
        'invoice.created', 'invoice.updated', 'invoice.finalized', 'invoice.sent', 'invoice.paid',
        'invoice.voided', 'customer.created', 'customer.updated', 'customer.deleted'],
      convention text not null default 'A' check (convention in ('A', 'B')),
      secret text not null,
      secret_hint text not null,
      enabled boolean not null default true,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index webhook_endpoints_organization on webhook_endpoints (organization_id, created_at);

    create table webhook_deliveries (
      id uuid primary key,
      endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
      organization_id uuid not null,
      event_id uuid not null,
      event_type text not null,
      body text not null,
      test boolean not null default false,
      status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
      -- Attempts in the current series (a replay starts a new one); every attempt stays in webhook_attempts.
      attempt_count integer not null default 0,
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      claim_token uuid,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint webhook_deliveries_event_endpoint unique (event_id, endpoint_id)
    );
    -- Senders: the due pending deliveries, oldest first.
    create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
    -- CLI: an organization's deliveries, newest first.
    create index webhook_deliveries_organization on webhook_deliveries (organization_id, created_at desc);

    create table webhook_attempts (
      id bigint generated always as identity primary key,
      delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
      attempt_number integer not null,
      attempted_at timestamptz not null,
      -- The X-Webhook-Timestamp (seconds) or X-Service-Timestamp (milliseconds) sent.
      signature_timestamp bigint not null,
      status_code integer,
      duration_ms integer not null,
      response_excerpt text check (length(response_excerpt) <= 1024),
      error text
    );
    create index webhook_attempts_delivery on webhook_attempts (delivery_id, attempted_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table webhook_attempts, webhook_deliveries, webhook_endpoints`.execute(db);
}

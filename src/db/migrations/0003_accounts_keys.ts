import { sql, type Kysely } from 'kysely';

/**
 * Configuration tables of the request pipeline (not event-sourced: they are
 * settings and bookkeeping, not business history; docs/architecture.md "Read side: typed tables").
 * - accounts: the customer of the platform, its plan and subscription.
 * - api_keys: only the SHA-256 of each secret, plus a display prefix/last4.
 * - rate_limits: per-key fixed-window counters (src/api/pipeline/ratelimit.ts;
 *   first written for rate-limiter-flexible's layout), shared by every API process.
 * - idempotency_keys: first response of each (key, Idempotency-Key), 24 h.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table accounts (
      id uuid primary key,
      name text not null,
      plan text not null check (plan in ('starter', 'professional', 'fiduciaire')),
      subscription_status text not null default 'active' check (subscription_status in ('active', 'expired')),
      current_period_end date,
      -- Operator override of the plan's requests per minute (benchmarks, big customers).
      requests_per_minute integer check (requests_per_minute > 0),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table api_keys (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      organization_id uuid,
      kind text not null check (kind in ('organization', 'account')),
      mode text not null check (mode in ('test', 'live', 'account')),
      prefix text not null,
      last4 text not null,
      secret_hash text not null,
      scopes text[] not null,
      name text,
      created_at timestamptz not null default now(),
      revoked_at timestamptz,
      constraint api_keys_secret_hash_key unique (secret_hash),
      constraint api_keys_kind_org check ((kind = 'organization') = (organization_id is not null)),
      constraint api_keys_kind_mode check ((kind = 'account') = (mode = 'account'))
    );
    create index api_keys_organization on api_keys (organization_id, created_at) where organization_id is not null;
    create index api_keys_account on api_keys (account_id, created_at);

    create table rate_limits (
      key varchar(255) primary key,
      points integer not null default 0,
      expire bigint
    );

    create table idempotency_keys (
      api_key_id uuid not null,
      idempotency_key text not null,
      fingerprint text not null,
      completed boolean not null default false,
      -- While in progress: the owner's claim and lease; a crashed owner's row is taken over after it.
      claim uuid,
      locked_until timestamptz,
      response_status integer,
      response_body jsonb,
      response_headers jsonb,
      created_at timestamptz not null default now(),
      primary key (api_key_id, idempotency_key)
    );
    create index idempotency_keys_created_at on idempotency_keys (created_at);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table idempotency_keys, rate_limits, api_keys, accounts`.execute(db);
}

/**
 * Configuration tables of accounts and keys (migration 0003; not
 * event-sourced): accounts, api_keys, rate_limits, idempotency_keys.
 * Read and written by src/accounts/ and src/api/pipeline/.
 */
import type { ColumnType, Generated, Selectable } from 'kysely';
import type { GeneratedTimestamp, Timestamp } from './columns.ts';

export interface AccountsTable {
  id: string;
  name: string;
  plan: 'starter' | 'professional' | 'fiduciaire';
  subscription_status: Generated<'active' | 'expired'>;
  /** YYYY-MM-DD */
  current_period_end: string | null;
  requests_per_minute: number | null;
  created_at: GeneratedTimestamp;
  updated_at: GeneratedTimestamp;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  organization_id: string | null;
  kind: 'organization' | 'account';
  mode: 'test' | 'live' | 'account';
  prefix: string;
  last4: string;
  secret_hash: string;
  scopes: string[];
  name: string | null;
  created_at: GeneratedTimestamp;
  revoked_at: Timestamp | null;
}

export interface RateLimitsTable {
  key: string;
  points: Generated<number>;
  /** bigint: arrives as a string */
  expire: ColumnType<string | null, string | number | null, string | number | null>;
}

export interface IdempotencyKeysTable {
  api_key_id: string;
  idempotency_key: string;
  fingerprint: string;
  completed: Generated<boolean>;
  claim: string | null;
  locked_until: Timestamp | null;
  response_status: number | null;
  /** jsonb, written as JSON text */
  response_body: ColumnType<unknown, string | null, string | null>;
  response_headers: ColumnType<Record<string, string> | null, string | null, string | null>;
  /** The answer's exact bytes (migration 0020): a replay returns them, since jsonb reorders keys. */
  response_bytes: string | null;
  created_at: GeneratedTimestamp;
}

export interface AccountsTables {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  rate_limits: RateLimitsTable;
  idempotency_keys: IdempotencyKeysTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;

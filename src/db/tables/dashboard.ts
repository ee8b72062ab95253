/**
 * The dashboard's tables (migration 0050; not event-sourced): its users,
 * sessions (connect-pg-simple's layout), sign-in limits
 * (rate-limiter-flexible's layout), generated settings and the audit of
 * configuration changes made in it. Read and written by src/dashboard/.
 */
import type { ColumnType, Selectable } from 'kysely';
import type { GeneratedTimestamp, Timestamp } from './columns.ts';

export interface DashboardUsersTable {
  id: string;
  account_id: string;
  email: string;
  role: 'owner' | 'admin' | 'viewer';
  /** argon2id PHC string */
  password_hash: string;
  disabled_at: Timestamp | null;
  last_sign_in_at: Timestamp | null;
  created_at: GeneratedTimestamp;
}

export interface DashboardSessionsTable {
  sid: string;
  sess: unknown;
  expire: Timestamp;
}

export interface DashboardSigninLimitsTable {
  key: string;
  points: ColumnType<number, number | undefined, number>;
  /** bigint: arrives as a string */
  expire: ColumnType<string | null, string | number | null, string | number | null>;
}

export interface DashboardSettingsTable {
  name: string;
  value: string;
}

export interface DashboardAuditTable {
  /** bigint identity: arrives as a string */
  id: ColumnType<string, never, never>;
  account_id: string;
  organization_id: string | null;
  user_id: string;
  action: string;
  target_id: string | null;
  at: GeneratedTimestamp;
}

export interface DashboardTables {
  dashboard_users: DashboardUsersTable;
  dashboard_sessions: DashboardSessionsTable;
  dashboard_signin_limits: DashboardSigninLimitsTable;
  dashboard_settings: DashboardSettingsTable;
  dashboard_audit: DashboardAuditTable;
}

export type DashboardUserRow = Selectable<DashboardUsersTable>;
export type DashboardAuditRow = Selectable<DashboardAuditTable>;

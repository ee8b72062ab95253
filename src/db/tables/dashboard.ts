/**
 * Dashboard tables (migration 0050; not event-sourced): users, their
 * server-side sessions (connect-pg-simple's layout), failed sign-in counters
 * (rate-limiter-flexible's layout), generated settings and the audit of
 * configuration changes made in the dashboard (docs/dashboard.md).
 */
import type { Generated, Selectable } from 'kysely';
import type { GeneratedTimestamp, Timestamp } from './columns.ts';

export interface DashboardUsersTable {
  id: string;
  account_id: string;
  email: string;
  role: 'owner' | 'admin' | 'viewer';
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
  points: Generated<number>;
  expire: string | null;
}

export interface DashboardSettingsTable {
  name: string;
  value: string;
}

export interface DashboardAuditTable {
  id: Generated<string>;
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

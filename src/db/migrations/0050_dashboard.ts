import { sql, type Kysely } from 'kysely';

/**
 * The dashboard (docs/dashboard.md):
 * - dashboard_users: people who sign in to an account's dashboard. Email is
 *   unique on the platform (sign-in asks only for email and password);
 *   `password_hash` is an argon2id PHC string, never the password.
 * - dashboard_sessions: express-session's server-side store
 *   (connect-pg-simple's layout: sid, sess, expire).
 * - dashboard_signin_limits: rate-limiter-flexible's counters of failed
 *   sign-ins per email and per address (its RateLimiterPostgres layout).
 * - dashboard_settings: the dashboard's generated settings (the secret that
 *   signs session cookies, shared by every process).
 * - dashboard_audit: configuration changes made in the dashboard (keys,
 *   webhooks, users), with the user who made them. Organization changes are
 *   events and carry the user as their actor instead.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create table dashboard_users (
      id uuid primary key,
      account_id uuid not null references accounts (id),
      email text not null,
      role text not null check (role in ('owner', 'admin', 'viewer')),
      password_hash text not null,
      disabled_at timestamptz,
      last_sign_in_at timestamptz,
      created_at timestamptz not null default now()
    );
    create unique index dashboard_users_email on dashboard_users (lower(email));
    create index dashboard_users_account on dashboard_users (account_id, created_at);

    create table dashboard_sessions (
      sid varchar primary key,
      sess json not null,
      expire timestamp(6) not null
    );
    create index dashboard_sessions_expire on dashboard_sessions (expire);

    create table dashboard_signin_limits (
      key varchar(255) primary key,
      points integer not null default 0,
      expire bigint
    );

    create table dashboard_settings (
      name text primary key,
      value text not null
    );

    create table dashboard_audit (
      id bigint generated always as identity primary key,
      account_id uuid not null,
      organization_id uuid,
      user_id uuid not null,
      action text not null,
      target_id text,
      at timestamptz not null default now()
    );
    create index dashboard_audit_account on dashboard_audit (account_id, at desc);
  `.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table dashboard_audit, dashboard_settings, dashboard_signin_limits, dashboard_sessions, dashboard_users`.execute(db);
}

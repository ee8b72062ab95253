/**
 * Every migration, in order. Add a file `NNNN_name.ts` and one line here;
 * the key is the migration's permanent name in kysely_migration.
 *
 * Each file is imported only when its migration runs: on a database already
 * up to date (every start but the first, every admin command) none is
 * loaded. Loaded all at once they made about 20 MiB of every process, which
 * an `audit export` of a large log cannot spare (docs/performance.md
 * "The admin CLI's memory").
 */
import type { Kysely, Migration } from 'kysely';

/** Every migration file exports both: a file without its down does not compile here. */
type MigrationModule = { up(db: Kysely<any>): Promise<void>; down(db: Kysely<any>): Promise<void> };

/** A migration whose file is imported when Kysely runs it (up or down). */
function onDemand(load: () => Promise<MigrationModule>): Migration {
  return { up: async (db) => (await load()).up(db), down: async (db) => (await load()).down(db) };
}

export const migrations: Record<string, Migration> = {
  '0001_eventstore': onDemand(() => import('./0001_eventstore.ts')),
  '0002_projections': onDemand(() => import('./0002_projections.ts')),
  '0003_accounts_keys': onDemand(() => import('./0003_accounts_keys.ts')),
  '0004_organizations': onDemand(() => import('./0004_organizations.ts')),
  '0005_customers': onDemand(() => import('./0005_customers.ts')),
  '0006_invoices': onDemand(() => import('./0006_invoices.ts')),
  '0007_webhooks': onDemand(() => import('./0007_webhooks.ts')),
  '0008_rate_limits_unlogged': onDemand(() => import('./0008_rate_limits_unlogged.ts')),
  '0009_es_append_notify_after_commit': onDemand(() => import('./0009_es_append_notify_after_commit.ts')),
  '0010_invoice_status_counts': onDemand(() => import('./0010_invoice_status_counts.ts')),
  '0011_es_append_one_json': onDemand(() => import('./0011_es_append_one_json.ts')),
  '0012_idempotency_seed': onDemand(() => import('./0012_idempotency_seed.ts')),
  '0013_invoice_items_on_row': onDemand(() => import('./0013_invoice_items_on_row.ts')),
  '0020_idempotency_response_bytes': onDemand(() => import('./0020_idempotency_response_bytes.ts')),
  '0030_recurring_schedules': onDemand(() => import('./0030_recurring_schedules.ts')),
  '0031_schedule_reactions': onDemand(() => import('./0031_schedule_reactions.ts')),
  '0050_dashboard': onDemand(() => import('./0050_dashboard.ts')),
  '0060_es_hash_chain': onDemand(() => import('./0060_es_hash_chain.ts')),
  '0061_reporting_views': onDemand(() => import('./0061_reporting_views.ts')),
  '0062_analyst_access': onDemand(() => import('./0062_analyst_access.ts')),
  '0070_invoice_status_count_slots': onDemand(() => import('./0070_invoice_status_count_slots.ts')),
  '0071_invoice_status_count_256_slots': onDemand(() => import('./0071_invoice_status_count_256_slots.ts')),
  '0090_uuid_v7': onDemand(() => import('./0090_uuid_v7.ts')),
  '0100_es_events_applied_inline': onDemand(() => import('./0100_es_events_applied_inline.ts')),
  '0101_invoices_issue_date_covering': onDemand(() => import('./0101_invoices_issue_date_covering.ts')),
  '0102_invoice_issue_month_counts': onDemand(() => import('./0102_invoice_issue_month_counts.ts')),
  '0103_es_events_json_text': onDemand(() => import('./0103_es_events_json_text.ts')),
  '0104_es_append_arrays': onDemand(() => import('./0104_es_append_arrays.ts')),
  '0105_schedule_guards': onDemand(() => import('./0105_schedule_guards.ts')),
  '0106_es_events_inline_projectors': onDemand(() => import('./0106_es_events_inline_projectors.ts')),
  '0107_schedule_customers': onDemand(() => import('./0107_schedule_customers.ts')),
  '0108_business_dates': onDemand(() => import('./0108_business_dates.ts')),
  '0109_es_require': onDemand(() => import('./0109_es_require.ts')),
};

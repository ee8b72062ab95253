/**
 * Every migration, in order. Add a file `NNNN_name.ts` and one line here;
 * the key is the migration's permanent name in kysely_migration.
 */
import type { Migration } from 'kysely';
import * as m0001 from './0001_eventstore.ts';
import * as m0002 from './0002_projections.ts';
import * as m0003 from './0003_accounts_keys.ts';
import * as m0004 from './0004_organizations.ts';
import * as m0005 from './0005_customers.ts';
import * as m0006 from './0006_invoices.ts';
import * as m0007 from './0007_webhooks.ts';
import * as m0008 from './0008_rate_limits_unlogged.ts';
import * as m0009 from './0009_es_append_notify_after_commit.ts';
import * as m0010 from './0010_invoice_status_counts.ts';
import * as m0011 from './0011_es_append_one_json.ts';
import * as m0012 from './0012_idempotency_seed.ts';
import * as m0013 from './0013_invoice_items_on_row.ts';
import * as m0020 from './0020_idempotency_response_bytes.ts';
import * as m0030 from './0030_recurring_schedules.ts';
import * as m0031 from './0031_schedule_reactions.ts';
import * as m0050 from './0050_dashboard.ts';
import * as m0060 from './0060_es_hash_chain.ts';
import * as m0061 from './0061_reporting_views.ts';
import * as m0062 from './0062_analyst_access.ts';
import * as m0070 from './0070_invoice_status_count_slots.ts';
import * as m0071 from './0071_invoice_status_count_256_slots.ts';
import * as m0090 from './0090_uuid_v7.ts';
import * as m0100 from './0100_es_events_applied_inline.ts';
import * as m0101 from './0101_invoices_issue_date_covering.ts';
import * as m0102 from './0102_invoice_issue_month_counts.ts';
import * as m0103 from './0103_es_events_json_text.ts';
import * as m0104 from './0104_es_append_arrays.ts';

export const migrations: Record<string, Migration> = {
  '0001_eventstore': m0001,
  '0002_projections': m0002,
  '0003_accounts_keys': m0003,
  '0004_organizations': m0004,
  '0005_customers': m0005,
  '0006_invoices': m0006,
  '0007_webhooks': m0007,
  '0008_rate_limits_unlogged': m0008,
  '0009_es_append_notify_after_commit': m0009,
  '0010_invoice_status_counts': m0010,
  '0011_es_append_one_json': m0011,
  '0012_idempotency_seed': m0012,
  '0013_invoice_items_on_row': m0013,
  '0020_idempotency_response_bytes': m0020,
  '0030_recurring_schedules': m0030,
  '0031_schedule_reactions': m0031,
  '0050_dashboard': m0050,
  '0060_es_hash_chain': m0060,
  '0061_reporting_views': m0061,
  '0062_analyst_access': m0062,
  '0070_invoice_status_count_slots': m0070,
  '0071_invoice_status_count_256_slots': m0071,
  '0090_uuid_v7': m0090,
  '0100_es_events_applied_inline': m0100,
  '0101_invoices_issue_date_covering': m0101,
  '0102_invoice_issue_month_counts': m0102,
  '0103_es_events_json_text': m0103,
  '0104_es_append_arrays': m0104,
};

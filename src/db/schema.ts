/**
 * The Kysely schema of every table outside the event store: one file per
 * read model or configuration area in src/db/tables/, composed here. Queries
 * and projectors use Kysely<Database>; migrations keep Kysely<Database> (frozen
 * history). To add a table: a migration, its interface in
 * src/db/tables/<model>.ts, and its tables interface in the list below
 * (docs/architecture.md, "Read side: typed tables").
 */
import type { AccountsTables } from './tables/accounts.ts';
import type { CustomersTables } from './tables/customers.ts';
import type { DashboardTables } from './tables/dashboard.ts';
import type { InvoicesTables } from './tables/invoices.ts';
import type { OrganizationsTables } from './tables/organizations.ts';
import type { ProjectionsTables } from './tables/projections.ts';
import type { WebhooksTables } from './tables/webhooks.ts';

export interface Database extends AccountsTables, CustomersTables, DashboardTables, InvoicesTables, OrganizationsTables, ProjectionsTables, WebhooksTables {}

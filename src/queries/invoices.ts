/**
 * Reads of the invoices read model (GET /invoices, GET /invoices/{id}, and
 * the responses of writes once projected). Every query is scoped by
 * organization: another organization's invoice is simply not found.
 *
 * One round trip per read, one row per invoice: lines and tax breakdown are
 * JSON on the row (decimal strings, so no amount ever passes through a JS
 * number); src/queries/invoice-rows.ts formats amounts with the currency's
 * minor units. A list runs its page and its count in parallel; the count
 * of a status-only list comes from invoice_status_counts, of a list by issue
 * date from invoice_issue_month_counts, which then picks its plan
 * (`listByIssueDate`).
 *
 * Plain SQL on the pg pool, as named statements: these run on every write's
 * answer and every list, and PostgreSQL then plans each once per connection
 * instead of once per request (docs/performance.md). The SQL text depends
 * only on which filters are present, never on their values.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Invoice, InvoiceStatus } from '../commands/invoice/events.ts';
import { toInvoice, toInvoiceView, type InvoiceView } from './invoice-rows.ts';

// Lines and breakdown are on the row (migration 0013) as JSON with canonical decimal strings.
const COLUMNS = 'i.*';

export const GET_SQL = `select ${COLUMNS},
    c.name as c_name, c.type as c_type, c.ice as c_ice, c.email as c_email, c.phone as c_phone,
    c.address_street as c_address_street, c.address_city as c_address_city,
    c.address_postal_code as c_address_postal_code, c.address_country as c_address_country
  from (select * from invoices where id = $2 offset 0) i
  left join lateral (select * from customers where id = i.customer_id offset 0) c on c.organization_id = i.organization_id
  where i.organization_id = $1`;

/**
 * A single invoice with its `customer` (docs/api-decisions.md "Representations"), or null. Both
 * rows are found by primary key alone (`offset 0` keeps the planner from
 * merging the organization condition into the lookup): given
 * `organization_id = $1 and id = $2`, it chose an (organization_id, ...)
 * index and walked every invoice of the organization, a cost growing with
 * the organization's invoices (figures in docs/performance.md, "Invoices").
 */
export async function getInvoice(pool: pg.Pool, organizationId: string, invoiceId: string): Promise<InvoiceView | null> {
  const { rows } = await pool.query({ name: 'invoices.get', text: GET_SQL, values: [organizationId, invoiceId.toLowerCase()] });
  return rows[0] ? toInvoiceView(rows[0]) : null;
}

export interface InvoiceListQuery {
  page: number;
  per_page: number;
  order: 'asc' | 'desc';
  status?: InvoiceStatus;
  customer_id?: string;
  /** Inclusive bounds on issue_date (YYYY-MM-DD). */
  date_from?: string;
  date_to?: string;
}

export interface InvoicePage {
  data: Invoice[];
  total: number;
}

/** The API's maximum per_page (src/api/schemas/invoices.ts). */
const MAX_PER_PAGE = 100;

const FILTERS = [
  ['status', 'i.status = $'],
  ['customer_id', 'i.customer_id = $'],
  ['date_from', 'i.issue_date >= $'],
  ['date_to', 'i.issue_date <= $'],
] as const;

/** The WHERE conditions of `q` with their values ($1 the organization), and which filters are present (`key`). */
function filtersOf(organizationId: string, q: Pick<InvoiceListQuery, (typeof FILTERS)[number][0]>) {
  const values: unknown[] = [organizationId];
  const where = ['i.organization_id = $1'];
  let key = '';
  for (const [name, condition] of FILTERS) {
    const value = q[name];
    key += value ? '1' : '0';
    if (!value) continue;
    values.push(name === 'customer_id' ? value.toLowerCase() : value);
    where.push(`${condition}${values.length}`);
  }
  return { values, where, key };
}

export async function listInvoices(pool: pg.Pool, organizationId: string, q: InvoiceListQuery): Promise<InvoicePage> {
  const { values, where, key } = filtersOf(organizationId, q);
  const direction = q.order === 'asc' ? 'asc' : 'desc';
  const order = `order by i.created_at ${direction}, i.id ${direction}`;
  const limit = `limit $${values.length + 1} offset $${values.length + 2}`;
  if (q.per_page > MAX_PER_PAGE) throw new RangeError(`per_page ${q.per_page} > ${MAX_PER_PAGE}`);
  if ((q.date_from || q.date_to) && !q.customer_id) return listByIssueDate(pool, organizationId, q, { values, where, key, direction, order, limit });
  const page = walkPage(pool, q, { values, where, key, direction, order, limit });
  // Past the line above, a list without a customer has no dates either: its total is the status counts'.
  const count = !q.customer_id
    ? statusCount(pool, organizationId, q.status)
    : pool.query({ name: `invoices.count.${key}`, text: `select count(*) as n from invoices i where ${where.join(' and ')}`, values });
  const [rows, counted] = await Promise.all([page, count]);
  return { data: rows.rows.map(toInvoice), total: Number(counted.rows[0].n) };
}

/** The page in list order, walking the organization's index in that order and filtering. */
function walkPage(pool: pg.Pool, q: InvoiceListQuery, l: ListSql): Promise<pg.QueryResult> {
  const { values, where, key, direction, order, limit } = l;
  // Past page 1 the page is cut in a subquery (it kept the line and tax aggregates, since moved onto the
  // row, from running for every row the offset skips; 100,000 invoices: page 100 of 100 350 ms -> 5 ms).
  // The constant outer LIMIT (an outer ORDER BY would stop it) keeps a generic plan walking the index.
  // Page 1 keeps the plain form: on tables not yet analyzed the subquery sorted the organization (22 ms).
  const first = q.page === 1;
  return pool.query({
    name: `invoices.list.${key}.${direction}${first ? '' : '.offset'}`,
    text: first
      ? `select ${COLUMNS} from invoices i where ${where.join(' and ')} ${order} ${limit}`
      : `select ${COLUMNS} from (select * from invoices i where ${where.join(' and ')} ${order} ${limit}) i limit ${MAX_PER_PAGE}`,
    values: [...values, q.per_page, (q.page - 1) * q.per_page],
  });
}

interface ListSql {
  values: unknown[];
  where: string[];
  key: string;
  direction: 'asc' | 'desc';
  order: string;
  limit: string;
}

/**
 * A list filtered by issue date (docs/performance.md "Lists by issue
 * date"). The page is in (created_at, id) order, which no index on
 * issue_date gives, and the planner cannot know that issue dates follow
 * creation: walking `(organization_id, created_at)` and filtering found the
 * first rows of a recent range at once but read most of the organization
 * for an old one (40 ms for one month two years back, at 100,000
 * invoices). So the count comes first, and with it the cheaper of two
 * plans is chosen:
 *
 * - walk: the usual query, which skips every row newer (in the list's
 *   order) than the range before it reaches the range's first row;
 * - range first: the range's (id, created_at) from the index on
 *   (organization_id, issue_date, created_at, id) (migration 0101, an
 *   index-only scan), sorted, the page's rows fetched by id; its cost
 *   grows with the range's size.
 *
 * A second count, of the rows the walk would skip (those past the range's
 * far bound in the list's order), decides: the walk when fewer, range first
 * otherwise. Both counts come from the month counts (`countByIssueDate`),
 * each bounded by two months of invoices; three statements in sequence.
 */
async function listByIssueDate(pool: pg.Pool, organizationId: string, q: InvoiceListQuery, l: ListSql): Promise<InvoicePage> {
  const { values, where, key, direction, limit } = l;
  const inclusive = (date: string | undefined) => (date === undefined ? null : { date, inclusive: true });
  const total = await countByIssueDate(pool, organizationId, q.status, inclusive(q.date_from), inclusive(q.date_to));
  const offset = (q.page - 1) * q.per_page;
  if (total === 0 || offset >= total) return { data: [], total };
  // The bound the walk starts beyond: newest-first lists start past date_to, oldest-first before date_from.
  const bound = direction === 'desc' ? q.date_to : q.date_from;
  let walk = !bound;
  if (bound) {
    // The rows beyond the bound: those the walk would pass before the range's first row.
    const beyond = direction === 'desc'
      ? await countByIssueDate(pool, organizationId, q.status, { date: bound, inclusive: false }, null)
      : await countByIssueDate(pool, organizationId, q.status, null, { date: bound, inclusive: false });
    walk = beyond < total;
  }
  const rows = walk
    ? await walkPage(pool, q, l)
    : await pool.query({
        name: `invoices.list.${key}.${direction}.range`,
        // `offset 0` keeps the range's scan from being merged into the outer query (which would walk the
        // creation index instead), without storing the range first as a materialized CTE did: the index-only
        // scan feeds the bounded top-N sort directly.
        text: `with page as (select r.id, r.created_at from (select i.id, i.created_at from invoices i where ${where.join(' and ')} offset 0) r
                   order by r.created_at ${direction}, r.id ${direction} ${limit})
               select ${COLUMNS} from page p join invoices i on i.id = p.id order by p.created_at ${direction}, p.id ${direction}`,
        values: [...values, q.per_page, offset],
      });
  return { data: rows.rows.map(toInvoice), total };
}

/** A bound on issue dates: the date (YYYY-MM-DD) and whether it belongs to the range. */
interface DateBound {
  date: string;
  inclusive: boolean;
}

/** Months as integers (year * 12 + month - 1), so that no date arithmetic runs past 9999-12-31. */
function monthIndex(date: string): number {
  return Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7)) - 1;
}

/** The first day of month `index`, as PostgreSQL reads a date (years past 9999 included). */
function monthStart(index: number): string {
  return `${Math.floor(index / 12)}-${String((index % 12) + 1).padStart(2, '0')}-01`;
}

function isLastDayOfMonth(date: string): boolean {
  const [y, m, d] = [Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10))];
  return d === new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/**
 * The statement name of a count's text. The text depends on which bounds,
 * edges and filters there are, never on their values: a few dozen texts at
 * most, each named once by its digest and then looked up.
 */
const countNames = new Map<string, string>();
function countName(text: string): string {
  let name = countNames.get(text);
  if (!name) countNames.set(text, (name = `invoices.count.months.${createHash('sha1').update(text).digest('hex').slice(0, 12)}`));
  return name;
}

/**
 * How many of the organization's invoices (of `status`, when given) have an
 * issue date within the bounds (either may be open): whole months summed
 * from invoice_issue_month_counts (migration 0102), the partial months at
 * the edges counted from the index on (organization_id, issue_date, ...).
 * The cost is bounded by two months of invoices, however wide the range
 * (docs/performance.md "Lists by issue date"). One statement.
 */
async function countByIssueDate(pool: pg.Pool, organizationId: string, status: InvoiceStatus | undefined, lower: DateBound | null, upper: DateBound | null): Promise<number> {
  // Whole months: indexes [first, end), null where the range is open.
  const first = lower === null ? null : lower.inclusive && lower.date.endsWith('-01') ? monthIndex(lower.date) : monthIndex(lower.date) + 1;
  const end = upper === null ? null : upper.inclusive && isLastDayOfMonth(upper.date) ? monthIndex(upper.date) + 1 : monthIndex(upper.date);
  const values: unknown[] = [organizationId];
  const param = (v: unknown) => `$${values.push(v)}`;
  const byStatus = status ? ` and status = ${param(status)}` : '';
  const above = (b: DateBound) => ` and issue_date ${b.inclusive ? '>=' : '>'} ${param(b.date)}::date`;
  const below = (b: DateBound) => ` and issue_date ${b.inclusive ? '<=' : '<'} ${param(b.date)}::date`;
  const direct = (lo: DateBound | null, hi: DateBound | null) =>
    `(select count(*) from invoices where organization_id = $1${byStatus}${lo ? above(lo) : ''}${hi ? below(hi) : ''})`;
  let text: string;
  if (first !== null && end !== null && first >= end) {
    text = direct(lower, upper); // within a month, two partial ones, or empty
  } else {
    const parts = [
      `(select coalesce(sum(invoices), 0) from invoice_issue_month_counts where organization_id = $1${byStatus}` +
        `${first === null ? '' : ` and month >= ${param(monthStart(first))}::date`}${end === null ? '' : ` and month < ${param(monthStart(end))}::date`})`,
    ];
    // The edges: from the lower bound to the first whole month, from the end of the whole months to the upper bound.
    if (lower !== null && first !== null && monthStart(first) !== lower.date) parts.push(direct(lower, { date: monthStart(first), inclusive: false }));
    if (upper !== null && end !== null && !(upper.inclusive && isLastDayOfMonth(upper.date))) parts.push(direct({ date: monthStart(end), inclusive: true }, upper));
    text = parts.join(' + ');
  }
  const { rows } = await pool.query({ name: countName(text), text: `select ${text} as n`, values });
  return Number(rows[0].n);
}

/**
 * The total of a list filtered by status only (or not at all), from the
 * counts the projector keeps: exact, and O(statuses) instead of a scan of
 * the organization's invoices. Other filters count the matching rows.
 */
function statusCount(pool: pg.Pool, organizationId: string, status: InvoiceStatus | undefined) {
  return status
    ? pool.query({
        name: 'invoices.count.status',
        text: 'select coalesce(sum(invoices), 0) as n from invoice_status_counts where organization_id = $1 and status = $2',
        values: [organizationId, status],
      })
    : pool.query({
        name: 'invoices.count.all',
        text: 'select coalesce(sum(invoices), 0) as n from invoice_status_counts where organization_id = $1',
        values: [organizationId],
      });
}

/**
 * /invoices (reference: Invoices endpoints; docs/api-decisions.md "Official numbers", "Invoice lifecycle", "Representations", "Status codes", "Lists", "Beyond the reference").
 * Reads come from the invoices read model; writes run a command handler and
 * answer through answerAfterWrite (src/api/answer.ts), like a GET. The history
 * (/events) is read from the event store itself. PDF and XML: not yet.
 */
import { finalizeInvoice } from '../commands/invoice/handler-finalize.ts';
import { createInvoice, loadInvoice, payInvoice, sendInvoice, updateInvoice, voidInvoice, type InvoiceResult, type InvoiceWrite } from '../commands/invoice/handlers.ts';
import { readModelFacts } from '../queries/invoice-facts.ts';
import { invoiceHistory } from '../queries/invoice-history.ts';
import { viewOfSnapshot } from '../queries/invoice-rows.ts';
import { getInvoice, listInvoices, type InvoiceListQuery } from '../queries/invoices.ts';
import { notFound } from '../shared/errors.ts';
import { answerAfterWrite, type WrittenResource } from './answer.ts';
import { commandInput } from './command-input.ts';
import { requestFacts } from './pipeline/prefetch.ts';
import { readInvoicePatch, readNewInvoice, readPayment, readVoidReason } from '../commands/invoice/validate.ts';
import { isUuid } from '../shared/ids.ts';
import { asRecord, fieldErrorsOf, type BodyCheckContext } from './body-check.ts';
import type { RequestContext, RouteSpec } from './route.ts';
import * as schemas from './schemas/invoices.ts';

const organizationOf = (ctx: RequestContext) => ctx.organizationId!; // organization routes always have one

function write(ctx: RequestContext): InvoiceWrite {
  return { ...commandInput(ctx), organizationId: organizationOf(ctx), facts: requestFacts(ctx) };
}

/**
 * How an invoice write answers (src/api/answer.ts). Only the invoices
 * projector is waited for: every invoice read comes from its tables
 * (invoice_numbers is an audit table no endpoint reads), and unrelated
 * projectors must not add their lag to the answer.
 */
export const writtenInvoice: WrittenResource<InvoiceResult> = {
  name: 'invoice',
  projectors: ['invoices'],
  position: (result) => result.position,
  version: (result) => result.invoice.version,
  async read(ctx, result) {
    const stored = await getInvoice(ctx.rt.database.pool, organizationOf(ctx), result.invoice.id);
    return stored && { data: stored, version: stored.version };
  },
  async decided(ctx, result) {
    // An issued invoice shows the buyer frozen at finalize, as its row does; a draft the customer as it is now
    // (as the command read it, when it read one a moment ago).
    const customer =
      result.state.buyer ?? (result.customer !== undefined ? result.customer : await readModelFacts(ctx.rt.database.pool).customer(organizationOf(ctx), result.invoice.customer_id));
    return { data: viewOfSnapshot(result.invoice, customer), version: result.invoice.version };
  },
  // The row is the snapshot the event carries (src/projections/invoices.ts), read back by the same mapping
  // (src/queries/invoice-rows.ts); a write that appended nothing answers from the row.
  decidedIsRead: (result) => result.appended,
};

const answer = (ctx: RequestContext, result: InvoiceResult, status = 200) => answerAfterWrite(ctx, writtenInvoice, result, status);

/** The decider's rules of a create or update body, with the customer it names (RouteSpec.check). */
async function invoiceBodyErrors(ctx: BodyCheckContext, body: unknown, kind: 'create' | 'update') {
  const data = asRecord(body);
  const id = data.customer_id;
  const customer = typeof id === 'string' && isUuid(id) ? await readModelFacts(ctx.rt.database.pool).customer(ctx.organizationId!, id.toLowerCase()) : null;
  const named = { ...data, customer_id: typeof id === 'string' ? id.toLowerCase() : id };
  if (kind === 'create') return fieldErrorsOf(() => readNewInvoice({ ...named, customer } as never));
  return fieldErrorsOf(() => readInvoicePatch(named as never, customer));
}

const base = { tag: 'Invoices', audience: 'organization' as const, response: schemas.invoiceWithCustomerSchema };
/** A command on one invoice: its stream (and the customer it names) come with the key's statement (src/api/pipeline/prefetch.ts). */
const action = (operationId: string, path: string, summary: string, scope: RouteSpec['scope'], errors: RouteSpec['errors']) =>
  ({ ...base, operationId, method: 'post' as const, path, summary, scope, errors: [...(errors ?? []), 'VERSION_CONFLICT' as const], prefetch: 'invoice-of-path' as const });

export const invoiceRoutes: RouteSpec[] = [
  {
    ...base,
    operationId: 'listInvoices',
    method: 'get',
    path: '/invoices',
    summary: 'List invoices (newest first; filters on status, customer and issue date)',
    scope: 'invoices:read',
    query: schemas.listInvoicesQuery,
    response: { type: 'array', items: schemas.invoiceSchema },
    async handler(ctx, { query }: { query: InvoiceListQuery }) {
      const { data, total } = await listInvoices(ctx.rt.database.pool, organizationOf(ctx), query);
      return { data, pagination: { total, page: query.page, perPage: query.per_page, totalPages: Math.ceil(total / query.per_page) } };
    },
  },
  {
    ...base,
    operationId: 'getInvoice',
    method: 'get',
    path: '/invoices/:id',
    summary: 'Read an invoice with its customer, lines and totals',
    scope: 'invoices:read',
    async handler(ctx, { params }) {
      const invoice = await getInvoice(ctx.rt.database.pool, organizationOf(ctx), params.id);
      if (!invoice) throw notFound('Invoice');
      return { data: invoice, version: invoice.version };
    },
  },
  {
    ...base,
    operationId: 'createInvoice',
    method: 'post',
    path: '/invoices',
    summary: 'Create a draft invoice',
    scope: 'invoices:write',
    body: schemas.createInvoiceBody,
    check: (ctx, body) => invoiceBodyErrors(ctx, body, 'create'),
    prefetch: 'customer-of-body',
    rememberedKey: true,
    successStatus: 201,
    location: '/invoices/:id',
    async handler(ctx, { body }) {
      return answer(ctx, await createInvoice(write(ctx), body, ctx.newId('invoice')), 201);
    },
  },
  {
    ...base,
    operationId: 'updateInvoice',
    method: 'patch',
    path: '/invoices/:id',
    summary: 'Update a draft (partial; items replaces every line)',
    scope: 'invoices:write',
    body: schemas.updateInvoiceBody,
    check: (ctx, body) => invoiceBodyErrors(ctx, body, 'update'),
    prefetch: 'invoice-of-path+customer-of-body',
    errors: ['INVOICE_NOT_EDITABLE', 'VERSION_CONFLICT'],
    async handler(ctx, { params, body }) {
      return answer(ctx, await updateInvoice(write(ctx), params.id, body));
    },
  },
  {
    ...action('finalizeInvoice', '/invoices/:id/finalize', 'Finalize a draft: assigns the official number and locks it', 'invoices:finalize', ['INVOICE_NOT_DRAFT']),
    async handler(ctx, { params }) {
      return answer(ctx, await finalizeInvoice(write(ctx), params.id));
    },
  },
  {
    ...action('sendInvoice', '/invoices/:id/send', 'Record a finalized invoice as sent', 'invoices:write', ['INVALID_STATUS_TRANSITION']),
    async handler(ctx, { params }) {
      return answer(ctx, await sendInvoice(write(ctx), params.id));
    },
  },
  {
    ...action('payInvoice', '/invoices/:id/pay', 'Record a finalized or sent invoice as paid', 'invoices:write', ['INVALID_STATUS_TRANSITION']),
    body: schemas.payInvoiceBody,
    check: (_ctx, body) => fieldErrorsOf(() => readPayment(asRecord(body), new Date().toISOString())),
    async handler(ctx, { params, body }) {
      return answer(ctx, await payInvoice(write(ctx), params.id, body ?? {}));
    },
  },
  {
    ...action('voidInvoice', '/invoices/:id/void', 'Void a finalized or sent invoice (reason required)', 'invoices:write', ['CANNOT_VOID_PAID', 'ALREADY_VOIDED', 'INVALID_STATUS_TRANSITION']),
    body: schemas.voidInvoiceBody,
    check: (_ctx, body) => fieldErrorsOf(() => readVoidReason(asRecord(body).reason)),
    async handler(ctx, { params, body }) {
      return answer(ctx, await voidInvoice(write(ctx), params.id, body.reason));
    },
  },
  {
    ...base,
    operationId: 'listInvoiceEvents',
    method: 'get',
    path: '/invoices/:id/events',
    summary: 'The invoice\'s event history, oldest first (internal steps included)',
    scope: 'invoices:read',
    response: { type: 'array', items: schemas.invoiceEventSchema },
    async handler(ctx, { params }) {
      const { recorded, revision } = await loadInvoice(ctx.rt.store, organizationOf(ctx), params.id);
      return { data: invoiceHistory(recorded), version: revision };
    },
  },
];

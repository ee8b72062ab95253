/**
 * Invoices of the selected organization, read only (for the finance team
 * and auditors): the API's list with its filters (status, customer, issue
 * dates, order; src/queries/invoices.ts), and one invoice with its lines,
 * totals, tax breakdown and event history (the same history as
 * GET /invoices/{id}/events), each event's actor named by its API key;
 * the PDF (fr, en, ar) and UBL XML of an issued invoice, from the document
 * service of GET /invoices/{id}/pdf and /xml.
 */
import type { Request, Response, Router } from 'express';
import { isUuid } from '../../shared/ids.ts';
import { invoiceHistory } from '../../queries/invoice-history.ts';
import { loadInvoice } from '../../commands/invoice/handlers.ts';
import { documentsFor } from '../../documents/for-runtime.ts';
import { DOCUMENT_LOCALES, type DocumentLocale } from '../../documents/locale.ts';
import { getInvoice, listInvoices, type InvoiceListQuery } from '../../queries/invoices.ts';
import type { Runtime } from '../../runtime.ts';
import { formErrors, notFoundPage, orgOf, render, withOrg } from '../context.ts';

const PER_PAGE = 25;
const STATUSES = ['draft', 'finalized', 'sent', 'paid', 'void'] as const;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function q(req: Request, name: string): string {
  const v = req.query[name];
  return typeof v === 'string' ? v.trim() : '';
}

function validDate(value: string): boolean {
  const d = new Date(`${value}T00:00:00Z`);
  return DATE.test(value) && !Number.isNaN(d.getTime()) && d.toISOString().startsWith(value);
}

/** "Clé « Compta » (svc_test_…a1b2)" for an API key actor, the user's email for a dashboard user, else as recorded. */
async function actorNames(rt: Runtime, actors: string[]): Promise<Map<string, string>> {
  const keyIds = actors.filter((a) => isUuid(a));
  const userIds = actors.filter((a) => a.startsWith('user:') && isUuid(a.slice(5))).map((a) => a.slice(5));
  const names = new Map<string, string>();
  if (keyIds.length) {
    const keys = await rt.database.db.selectFrom('api_keys').select(['id', 'name', 'prefix', 'last4']).where('id', 'in', keyIds).execute();
    for (const k of keys) names.set(k.id, `${k.name ? `${k.name} ` : ''}(${k.prefix}…${k.last4})`);
  }
  if (userIds.length) {
    const users = await rt.database.db.selectFrom('dashboard_users').select(['id', 'email']).where('id', 'in', userIds).execute();
    for (const u of users) names.set(`user:${u.id}`, u.email);
  }
  return names;
}

export function invoicePages(router: Router, rt: Runtime): void {
  const org = withOrg(rt);

  router.get('/o/:org/invoices', org, async (req: Request, res: Response) => {
    const values = { status: q(req, 'status'), customer_id: q(req, 'customer_id'), date_from: q(req, 'date_from'), date_to: q(req, 'date_to'), order: q(req, 'order') || 'desc' };
    const errors: { field: string; message: string }[] = [];
    const query: InvoiceListQuery = { page: 1, per_page: PER_PAGE, order: 'desc' };
    const page = q(req, 'page') || '1';
    if (!/^\d{1,7}$/.test(page) || Number(page) < 1) errors.push({ field: 'page', message: 'must be an integer >= 1' });
    else query.page = Number(page);
    if (values.order === 'asc' || values.order === 'desc') query.order = values.order;
    else errors.push({ field: 'order', message: 'must be asc or desc' });
    if (values.status) {
      if ((STATUSES as readonly string[]).includes(values.status)) query.status = values.status as InvoiceListQuery['status'];
      else errors.push({ field: 'status', message: `must be one of ${STATUSES.join(', ')}` });
    }
    if (values.customer_id) {
      if (isUuid(values.customer_id)) query.customer_id = values.customer_id;
      else errors.push({ field: 'customer_id', message: 'must be a UUID' });
    }
    for (const name of ['date_from', 'date_to'] as const) {
      if (!values[name]) continue;
      if (validDate(values[name])) query[name] = values[name];
      else errors.push({ field: name, message: 'must be a date (YYYY-MM-DD)' });
    }
    const { data, total } = errors.length ? { data: [], total: 0 } : await listInvoices(rt.database.pool, orgOf(res).id, query);
    const pages = Math.max(1, Math.ceil(total / PER_PAGE));
    const link = (p: number) => `?${new URLSearchParams({ ...Object.fromEntries(Object.entries(values).filter(([, v]) => v !== '')), page: String(p) }).toString()}`;
    return render(rt, req, res, 'invoices', {
      invoices: data,
      total,
      statuses: STATUSES,
      values,
      errors: errors.length ? errors : null,
      pager: pages > 1 ? { page: query.page, pages, prev: query.page > 1 ? link(query.page - 1) : null, next: query.page < pages ? link(query.page + 1) : null } : null,
    }, errors.length ? 400 : 200);
  });

  router.get('/o/:org/invoices/:id', org, async (req, res) => {
    const id = String(req.params.id);
    const invoice = isUuid(id) ? await getInvoice(rt.database.pool, orgOf(res).id, id) : null;
    if (!invoice) return notFoundPage(rt)(req, res, () => {});
    const { recorded } = await loadInvoice(rt.store, orgOf(res).id, invoice.id);
    const history = invoiceHistory(recorded);
    const names = await actorNames(rt, [...new Set(history.map((h) => String(h.actor)))]);
    return render(rt, req, res, 'invoices-detail', {
      invoice,
      history: history.map((h) => ({ ...h, actor_name: names.get(String(h.actor)) ?? h.actor })),
      documents: invoice.status !== 'draft' ? documentLinks(orgOf(res).id, invoice.id) : null,
    });
  });

  // Downloads: the API's documents, as attachments (any role may read them, like the invoice itself).
  router.get('/o/:org/invoices/:id/:kind', org, async (req, res, next) => {
    const id = String(req.params.id);
    const kind = String(req.params.kind);
    const locale = typeof req.query.locale === 'string' ? req.query.locale : 'fr';
    if ((kind !== 'pdf' && kind !== 'xml') || !isUuid(id) || !(DOCUMENT_LOCALES as readonly string[]).includes(locale)) return notFoundPage(rt)(req, res, next);
    let file: { filename: string; body: Buffer | string };
    try {
      const documents = documentsFor(rt);
      file = kind === 'pdf' ? await documents.pdf(orgOf(res).id, id.toLowerCase(), locale as DocumentLocale) : await documents.xml(orgOf(res).id, id.toLowerCase());
    } catch (err) {
      const errors = formErrors(err);
      if (!errors) {
        if ((err as { code?: string })?.code === 'NOT_FOUND') return notFoundPage(rt)(req, res, next);
        throw err;
      }
      return render(rt, req, res, 'error', { title: 'error.forbidden.title', text: 'error.document.text', params: { message: errors[0].message } }, 409);
    }
    res.attachment(file.filename);
    res.type(kind === 'pdf' ? 'application/pdf' : 'application/xml; charset=utf-8');
    res.send(typeof file.body === 'string' ? Buffer.from(file.body, 'utf8') : file.body);
  });
}

/** Download links of an issued invoice (drafts have no document: PDF_NOT_AVAILABLE). */
function documentLinks(organizationId: string, invoiceId: string) {
  const base = `/dashboard/o/${organizationId}/invoices/${invoiceId}`;
  return { pdf: DOCUMENT_LOCALES.map((locale) => ({ locale, url: `${base}/pdf?locale=${locale}` })), xml: `${base}/xml` };
}

/**
 * Deliveries of the selected organization: filters (endpoint, event type,
 * status, creation date), newest first, 50 a page (keyset: "older" pages
 * continue after the last row shown); a delivery's attempts, every series
 * included; replay (src/workers/webhooks/deliveries.ts, as `webhook replay`).
 */
import type { Request, Response, Router } from 'express';
import { PUBLIC_EVENT_NAME_LIST } from '../../commands/public-event-names.ts';
import type { Runtime } from '../../runtime.ts';
import { DELIVERY_STATUSES, getDelivery, isCursorInstant, listAttempts, replayDelivery, searchDeliveries, type DeliveryFilter } from '../../workers/webhooks/deliveries.ts';
import { listEndpoints } from '../../workers/webhooks/endpoints.ts';
import { isUuid } from '../../shared/ids.ts';
import { audit, flash, formErrors, notFoundPage, orgOf, ownedBy, render, requireRole, withOrg, seeOther } from '../context.ts';

const PER_PAGE = 50;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function q(req: Request, name: string): string {
  const v = req.query[name];
  return typeof v === 'string' ? v.trim() : '';
}

function validDate(value: string): boolean {
  return DATE.test(value) && !Number.isNaN(new Date(`${value}T00:00:00Z`).getTime()) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value);
}

export function deliveryPages(router: Router, rt: Runtime): void {
  const org = withOrg(rt);

  router.get('/o/:org/deliveries', org, async (req: Request, res: Response) => {
    const endpoints = await listEndpoints(rt.database.db, orgOf(res).id);
    const values = { endpoint: q(req, 'endpoint'), event: q(req, 'event'), status: q(req, 'status'), from: q(req, 'from'), to: q(req, 'to') };
    const errors: { field: string; message: string }[] = [];
    const filter: DeliveryFilter = { limit: PER_PAGE + 1 };
    if (values.endpoint) {
      if (endpoints.some((e) => e.id === values.endpoint.toLowerCase())) filter.endpointId = values.endpoint;
      else errors.push({ field: 'endpoint', message: 'unknown endpoint' });
    }
    if (values.event) {
      if ((PUBLIC_EVENT_NAME_LIST as readonly string[]).includes(values.event)) filter.eventType = values.event;
      else errors.push({ field: 'event', message: 'unknown event type' });
    }
    if (values.status) {
      if ((DELIVERY_STATUSES as readonly string[]).includes(values.status)) filter.status = values.status;
      else errors.push({ field: 'status', message: `must be one of ${DELIVERY_STATUSES.join(', ')}` });
    }
    if (values.from) {
      if (validDate(values.from)) filter.from = `${values.from}T00:00:00.000Z`;
      else errors.push({ field: 'from', message: 'must be a date (YYYY-MM-DD)' });
    }
    if (values.to) {
      if (validDate(values.to)) filter.to = `${values.to}T23:59:59.999999Z`; // created_at is to the microsecond
      else errors.push({ field: 'to', message: 'must be a date (YYYY-MM-DD)' });
    }
    const before = q(req, 'before');
    const beforeId = q(req, 'before_id');
    // A cursor is the last row's own (created_at, id): anything else (edited by hand) shows the first page.
    if (before && isUuid(beforeId) && isCursorInstant(before)) filter.before = { createdAt: before, id: beforeId };
    const rows = errors.length ? [] : await searchDeliveries(rt.database.db, orgOf(res).id, filter);
    const more = rows.length > PER_PAGE;
    const shown = rows.slice(0, PER_PAGE);
    const last = shown.at(-1);
    const urls = new Map(endpoints.map((e) => [e.id, e.url]));
    const params = new URLSearchParams(Object.entries(values).filter(([, v]) => v !== ''));
    if (more && last) {
      params.set('before', last.cursor.createdAt);
      params.set('before_id', last.cursor.id);
    }
    return render(rt, req, res, 'deliveries', {
      deliveries: shown.map((d) => ({ ...d, url: urls.get(d.endpoint_id) })),
      endpoints: endpoints.map((e) => ({ ...e, selected: e.id === values.endpoint.toLowerCase() })),
      events: PUBLIC_EVENT_NAME_LIST,
      statuses: DELIVERY_STATUSES,
      values,
      errors: errors.length ? errors : null,
      older: more ? `?${params.toString()}` : null,
    }, errors.length ? 400 : 200);
  });

  router.get('/o/:org/deliveries/:id', org, async (req, res) => {
    const id = String(req.params.id);
    if (!(await ownedBy(rt, 'webhook_deliveries', id, orgOf(res).id))) return notFoundPage(rt)(req, res, () => {});
    const delivery = await getDelivery(rt.database.db, id);
    const [attempts, endpoint, body] = await Promise.all([
      listAttempts(rt.database.db, id),
      rt.database.db.selectFrom('webhook_endpoints').select(['id', 'url', 'convention']).where('id', '=', delivery.endpoint_id).executeTakeFirst(),
      rt.database.db.selectFrom('webhook_deliveries').select('body').where('id', '=', delivery.id).executeTakeFirstOrThrow(),
    ]);
    let pretty = body.body as string;
    try {
      pretty = JSON.stringify(JSON.parse(pretty), null, 2);
    } catch {
      // shown as sent
    }
    return render(rt, req, res, 'deliveries-detail', { delivery, attempts, endpoint, body: pretty });
  });

  router.post('/o/:org/deliveries/:id/replay', org, requireRole(rt, 'admin'), async (req, res) => {
    const id = String(req.params.id);
    if (!(await ownedBy(rt, 'webhook_deliveries', id, orgOf(res).id))) return notFoundPage(rt)(req, res, () => {});
    try {
      await replayDelivery(rt.database.db, id);
      await audit(rt, res, 'webhook_delivery.replayed', id.toLowerCase());
      flash(req, 'ok', 'deliveries.replayed');
    } catch (err) {
      const errors = formErrors(err);
      if (!errors) throw err;
      flash(req, 'error', 'common.errors');
    }
    return seeOther(req, res, `/dashboard/o/${orgOf(res).id}/deliveries/${id.toLowerCase()}`);
  });
}

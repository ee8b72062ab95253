/**
 * Webhook endpoints of the selected organization: add (the signing secret
 * shown once, in the POST's answer), edit events and convention, enable or
 * disable, rotate the secret (shown once), delete, and send a test event of
 * any of the nine types. All of it is src/workers/webhooks (endpoints.ts,
 * deliveries.ts), the admin CLI's code: same URL rules and address guard.
 */
import type { Request, Response, Router } from 'express';
import { PUBLIC_EVENT_NAME_LIST } from '../../commands/public-event-names.ts';
import type { Runtime } from '../../runtime.ts';
import { guardedLookup } from '../../workers/webhooks/address-guard.ts';
import type { AttemptDeps } from '../../workers/webhooks/attempt.ts';
import { sendTestEvent } from '../../workers/webhooks/deliveries.ts';
import { addEndpoint, deleteEndpoint, listEndpoints, rotateSecret, updateEndpoint, type EndpointView } from '../../workers/webhooks/endpoints.ts';
import { webhookAllowInsecure } from '../../workers/webhooks/index.ts';
import { createAgents } from '../../workers/webhooks/post.ts';
import { SecretCache } from '../../workers/webhooks/secrets.ts';
import { audit, field, fieldList, flash, formErrors, notFoundPage, orgOf, ownedBy, render, requireRole, withOrg, seeOther } from '../context.ts';

const EVENTS = PUBLIC_EVENT_NAME_LIST as readonly string[];

function allowInsecure(rt: Runtime): boolean {
  return webhookAllowInsecure(rt.config, rt.database.embedded !== null);
}

async function endpointOf(rt: Runtime, res: Response, id: string): Promise<EndpointView | null> {
  if (!(await ownedBy(rt, 'webhook_endpoints', id, orgOf(res).id))) return null;
  return (await listEndpoints(rt.database.db, orgOf(res).id)).find((e) => e.id === id.toLowerCase()) ?? null;
}

async function listPage(rt: Runtime, req: Request, res: Response, extra: Record<string, unknown> = {}, status = 200) {
  const endpoints = await listEndpoints(rt.database.db, orgOf(res).id);
  return render(rt, req, res, 'webhooks', {
    endpoints: endpoints.map((e) => ({ ...e, allEvents: e.events.length === EVENTS.length })),
    events: EVENTS,
    values: { events: [...EVENTS], convention: 'A' },
    ...extra,
  }, status);
}

async function editPage(rt: Runtime, req: Request, res: Response, endpoint: EndpointView, extra: Record<string, unknown> = {}, status = 200) {
  return render(rt, req, res, 'webhooks-edit', { endpoint, events: EVENTS, values: { events: endpoint.events, convention: endpoint.convention }, ...extra }, status);
}

export function webhookPages(router: Router, rt: Runtime): void {
  const org = withOrg(rt);
  const admin = requireRole(rt, 'admin');
  // One set of agents and secret cache for the test sends of this process (like a sender's).
  let deps: AttemptDeps | null = null;
  const testDeps = (): AttemptDeps =>
    (deps ??= {
      retryDelaysMs: rt.config.webhookRetryDelaysMs,
      timeoutMs: rt.config.webhookTimeoutMs,
      allowInsecure: allowInsecure(rt),
      agents: createAgents(allowInsecure(rt) ? undefined : guardedLookup()),
      secrets: new SecretCache(),
    });

  router.get('/o/:org/webhooks', org, (req, res) => listPage(rt, req, res));

  router.post('/o/:org/webhooks', org, admin, async (req, res) => {
    const values = { url: field(req.body, 'url'), events: fieldList(req.body, 'events'), convention: field(req.body, 'convention') || 'A' };
    let created;
    try {
      created = await addEndpoint(rt.database.db, { organizationId: orgOf(res).id, ...values }, { allowInsecure: allowInsecure(rt) });
    } catch (err) {
      const errors = formErrors(err);
      if (!errors) throw err;
      return listPage(rt, req, res, { values, errors }, 400);
    }
    await audit(rt, res, 'webhook_endpoint.created', created.endpoint.id);
    return render(rt, req, res, 'webhooks-secret', { endpoint: created.endpoint, secret: created.secret, title: 'webhooks.secret_title' });
  });

  router.get('/o/:org/webhooks/:id', org, async (req, res) => {
    const endpoint = await endpointOf(rt, res, String(req.params.id));
    if (!endpoint) return notFoundPage(rt)(req, res, () => {});
    return editPage(rt, req, res, endpoint);
  });

  router.post('/o/:org/webhooks/:id', org, admin, async (req, res) => {
    const endpoint = await endpointOf(rt, res, String(req.params.id));
    if (!endpoint) return notFoundPage(rt)(req, res, () => {});
    const action = field(req.body, 'action');
    const changes =
      action === 'enable' ? { enabled: true }
      : action === 'disable' ? { enabled: false }
      : { events: fieldList(req.body, 'events'), convention: field(req.body, 'convention') || endpoint.convention };
    try {
      await updateEndpoint(rt.database.db, endpoint.id, changes);
    } catch (err) {
      const errors = formErrors(err);
      if (!errors) throw err;
      return render(rt, req, res, 'webhooks-edit', { endpoint, events: EVENTS, values: changes, errors }, 400);
    }
    await audit(rt, res, `webhook_endpoint.${action === 'enable' || action === 'disable' ? `${action}d` : 'updated'}`, endpoint.id);
    flash(req, 'ok', 'webhooks.saved');
    return seeOther(req, res, `/dashboard/o/${orgOf(res).id}/webhooks/${endpoint.id}`);
  });

  router.post('/o/:org/webhooks/:id/rotate', org, admin, async (req, res) => {
    const endpoint = await endpointOf(rt, res, String(req.params.id));
    if (!endpoint) return notFoundPage(rt)(req, res, () => {});
    const rotated = await rotateSecret(rt.database.db, endpoint.id);
    await audit(rt, res, 'webhook_endpoint.secret_rotated', endpoint.id);
    return render(rt, req, res, 'webhooks-secret', { endpoint: rotated.endpoint, secret: rotated.secret, title: 'webhooks.secret_title' });
  });

  router.get('/o/:org/webhooks/:id/delete', org, admin, async (req, res) => {
    const endpoint = await endpointOf(rt, res, String(req.params.id));
    if (!endpoint) return notFoundPage(rt)(req, res, () => {});
    return render(rt, req, res, 'webhooks-delete', { endpoint });
  });
  router.post('/o/:org/webhooks/:id/delete', org, admin, async (req, res) => {
    const endpoint = await endpointOf(rt, res, String(req.params.id));
    if (!endpoint) return notFoundPage(rt)(req, res, () => {});
    await deleteEndpoint(rt.database.db, endpoint.id);
    await audit(rt, res, 'webhook_endpoint.deleted', endpoint.id);
    flash(req, 'ok', 'webhooks.deleted_done');
    return seeOther(req, res, `/dashboard/o/${orgOf(res).id}/webhooks`);
  });

  router.post('/o/:org/webhooks/:id/test', org, admin, async (req, res) => {
    const endpoint = await endpointOf(rt, res, String(req.params.id));
    if (!endpoint) return notFoundPage(rt)(req, res, () => {});
    const event = field(req.body, 'event');
    try {
      const { delivery, attempt } = await sendTestEvent(rt.database.db, endpoint.id, event, testDeps());
      await audit(rt, res, 'webhook_endpoint.test_sent', delivery.id);
      if (delivery.status === 'succeeded') flash(req, 'ok', 'webhooks.test_sent', { event });
      else flash(req, 'error', 'webhooks.test_failed', { event, error: attempt.error ?? `HTTP ${attempt.statusCode}` });
    } catch (err) {
      const errors = formErrors(err);
      if (!errors) throw err;
      return editPage(rt, req, res, endpoint, { errors }, 400);
    }
    return seeOther(req, res, `/dashboard/o/${orgOf(res).id}/deliveries?endpoint=${endpoint.id}`);
  });
}

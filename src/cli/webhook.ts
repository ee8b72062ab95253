/**
 * `webhook add|list|enable|disable|remove|rotate-secret|deliveries|replay|test`
 * (docs/operations.md "Admin CLI", docs/webhooks.md). Secrets are printed once, by add and rotate-secret.
 * `webhook test` sends from this process at once (no sender needed) and
 * exits non-zero when the receiver did not accept it.
 */
import type { Command } from 'commander';
import { PUBLIC_EVENT_NAME_LIST } from '../commands/public-event-names.ts';
import type { Runtime } from '../runtime.ts';
import type { AttemptDeps } from '../workers/webhooks/attempt.ts';
import { guardedLookup } from '../workers/webhooks/address-guard.ts';
import { DELIVERY_STATUSES, listDeliveries, replayDelivery, sendTestEvent, type DeliveryView } from '../workers/webhooks/deliveries.ts';
import { addEndpoint, deleteEndpoint, listEndpoints, rotateSecret, updateEndpoint, type EndpointView } from '../workers/webhooks/endpoints.ts';
import { webhookAllowInsecure } from '../workers/webhooks/index.ts';
import { createAgents } from '../workers/webhooks/post.ts';
import { SecretCache } from '../workers/webhooks/secrets.ts';
import { CommandFailed, fields, print, requireOrganization, table, UsageError, withJson, type Open, type OutputOptions } from './shared.ts';

const allowInsecure = (rt: Runtime) => webhookAllowInsecure(rt.config, rt.database.embedded !== null);

function endpointFields(e: EndpointView): string {
  return fields([['id', e.id], ['organization', e.organization_id], ['url', e.url], ['convention', e.convention], ['events', e.events.join(' ')], ['enabled', e.enabled], ['secret', e.secret_hint]]);
}

function deliveryRows(ds: DeliveryView[]): string {
  if (ds.length === 0) return 'No deliveries.';
  return table(
    ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST', 'NEXT ATTEMPT', 'CREATED', 'ENDPOINT'],
    ds.map((d) => [d.id, `${d.event_type}${d.test ? ' (test)' : ''}`, d.status, d.attempt_count, d.last_status_code ?? d.last_error?.slice(0, 40), d.next_attempt_at, d.created_at, d.endpoint_id]),
  );
}

function secretShown(secret: string, what: string, e: EndpointView): string {
  return [`${what} Copy the signing secret now: it is not shown again.`, '', `  ${secret}`, '', endpointFields(e)].join('\n');
}

export function register(program: Command, open: Open): void {
  const group = program.command('webhook').description('webhook endpoints and deliveries');

  withJson(group.command('add'))
    .description('add an endpoint (the signing secret is shown once)')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--url <url>', 'https:// URL of a public address')
    .option('--events <list>', `comma-separated, default all: ${PUBLIC_EVENT_NAME_LIST.join(',')}`)
    .option('--convention <A|B>', 'delivery convention (headers, body, signature)', 'A')
    .action(async (opts: OutputOptions & { org: string; url: string; events?: string; convention: string }) => {
      const rt = await open();
      const { endpoint, secret } = await addEndpoint(
        rt.database.db,
        { organizationId: opts.org, url: opts.url, events: opts.events?.split(','), convention: opts.convention },
        { allowInsecure: allowInsecure(rt) },
      );
      print(opts, { ...endpoint, secret }, () => secretShown(secret, 'Webhook endpoint added.', endpoint));
    });

  withJson(group.command('list'))
    .description("an organization's endpoints (secrets are never shown)")
    .requiredOption('--org <id>', 'organization id')
    .action(async (opts: OutputOptions & { org: string }) => {
      const rt = await open();
      const endpoints = await listEndpoints(rt.database.db, (await requireOrganization(rt, opts.org)).id);
      print(opts, endpoints, () =>
        endpoints.length === 0
          ? 'No webhook endpoints.'
          : table(['ID', 'URL', 'CONV', 'ENABLED', 'SECRET', 'EVENTS'], endpoints.map((e) => [e.id, e.url, e.convention, e.enabled, e.secret_hint, e.events.join(',')])),
      );
    });

  for (const [name, enabled] of [['disable', false], ['enable', true]] as const) {
    withJson(group.command(name).argument('<id>', 'endpoint id'))
      .description(enabled ? 'send to this endpoint again (events from now on)' : 'stop sending to this endpoint (its pending deliveries wait; nothing is created for it meanwhile)')
      .action(async (id: string, opts: OutputOptions) => {
        const rt = await open();
        const endpoint = await updateEndpoint(rt.database.db, id, { enabled });
        print(opts, endpoint, () => `Webhook endpoint ${enabled ? 'enabled' : 'disabled'}.\n${endpointFields(endpoint)}`);
      });
  }

  withJson(group.command('remove').argument('<id>', 'endpoint id'))
    .description('delete an endpoint and its delivery log')
    .action(async (id: string, opts: OutputOptions) => {
      const rt = await open();
      await deleteEndpoint(rt.database.db, id);
      print(opts, { id, removed: true }, () => `Webhook endpoint ${id} removed.`);
    });

  withJson(group.command('rotate-secret').argument('<id>', 'endpoint id'))
    .description('replace the signing secret (shown once; the old one stops at once)')
    .action(async (id: string, opts: OutputOptions) => {
      const rt = await open();
      const { endpoint, secret } = await rotateSecret(rt.database.db, id);
      print(opts, { ...endpoint, secret }, () => secretShown(secret, 'Signing secret rotated.', endpoint));
    });

  withJson(group.command('deliveries'))
    .description("an organization's deliveries, newest first")
    .requiredOption('--org <id>', 'organization id')
    .option('--status <status>', DELIVERY_STATUSES.join('|'))
    .option('--limit <n>', 'at most this many (default 100)', '100')
    .action(async (opts: OutputOptions & { org: string; status?: string; limit: string }) => {
      const limit = Number(opts.limit);
      if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError(`--limit "${opts.limit}" is not a number from 1 to 10000`);
      const rt = await open();
      const ds = await listDeliveries(rt.database.db, (await requireOrganization(rt, opts.org)).id, opts.status, limit);
      print(opts, ds, () => deliveryRows(ds));
    });

  withJson(group.command('replay').argument('<delivery-id>', 'delivery id'))
    .description('send a delivery again: same id and body, fresh timestamp and signature, new attempt series')
    .action(async (id: string, opts: OutputOptions) => {
      const rt = await open();
      const d = await replayDelivery(rt.database.db, id);
      print(opts, d, () => `Delivery ${d.id} (${d.event_type}) is pending again; a sender picks it up now.`);
    });

  withJson(group.command('test').argument('<endpoint-id>', 'endpoint id'))
    .description('send a signed sample event to an endpoint now (recorded as a test delivery)')
    .requiredOption('--event <name>', PUBLIC_EVENT_NAME_LIST.join('|'))
    .action(async (id: string, opts: OutputOptions & { event: string }) => {
      const rt = await open();
      const insecure = allowInsecure(rt);
      const agents = createAgents(insecure ? undefined : guardedLookup());
      const deps: AttemptDeps = { retryDelaysMs: rt.config.webhookRetryDelaysMs, timeoutMs: rt.config.webhookTimeoutMs, allowInsecure: insecure, agents, secrets: new SecretCache() };
      try {
        const { delivery, attempt } = await sendTestEvent(rt.database.db, id, opts.event, deps);
        const result = { ...delivery, status_code: attempt.statusCode, duration_ms: attempt.durationMs, error: attempt.error };
        print(opts, result, () =>
          fields([['delivery', delivery.id], ['event', delivery.event_type], ['status', delivery.status], ['http status', attempt.statusCode], ['duration', `${attempt.durationMs} ms`], ['error', attempt.error]]),
        );
        if (delivery.status !== 'succeeded') throw new CommandFailed(`the endpoint did not accept the test event: ${attempt.error}`, 'TEST_EVENT_REFUSED');
      } finally {
        agents.http.destroy();
        agents.https.destroy();
      }
    });
}

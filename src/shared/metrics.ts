/**
 * The process's Prometheus metrics (prom-client), in one registry, served by
 * GET /metrics (src/api/metrics.ts; docs/operations.md "Metrics"). Code that
 * measures something calls one of these with one line; nothing here knows
 * about HTTP or the database.
 *
 * Labels carry route templates, projector names and outcomes, never ids of
 * tenants, keys or resources, nor secrets: every label has a small, fixed set
 * of values.
 *
 * What is cheaper to read when scraped than to count as it happens (projector
 * lag, webhook queue depth, pool use) is set by src/api/metrics.ts at each
 * scrape, from the database and the pool.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const registers = [registry];
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers,
});

export const httpDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from the request to the end of its answer, by method, route template and status',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

export const eventStoreAppendDuration = new Histogram({
  name: 'eventstore_append_duration_seconds',
  help: 'Time of one append to one stream (including a conflict answer), by store and result',
  labelNames: ['store', 'result'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers,
});

export const webhookAttempts = new Counter({
  name: 'webhook_attempts_total',
  help: 'Webhook delivery attempts by outcome: succeeded, retrying (a later attempt is scheduled), failed (the last attempt failed)',
  labelNames: ['outcome'] as const,
  registers,
});

export const webhookQueue = new Gauge({
  name: 'webhook_deliveries_pending',
  help: 'Webhook deliveries waiting: due now (state=due) or for a later retry (state=scheduled)',
  labelNames: ['state'] as const,
  registers,
});

export const projectorLagEvents = new Gauge({
  name: 'projector_lag_events',
  help: 'Events in the log after the projector checkpoint (-1 where the store cannot count them)',
  labelNames: ['projector'] as const,
  registers,
});

export const projectorLagSeconds = new Gauge({
  name: 'projector_lag_seconds',
  help: 'Age of the oldest event the projector has not applied yet (0 when caught up)',
  labelNames: ['projector'] as const,
  registers,
});

export const projectorFailing = new Gauge({
  name: 'projector_failing',
  help: '1 when the projector is stopped on a failing event (see `projections status`), else 0',
  labelNames: ['projector'] as const,
  registers,
});

export const dbPoolConnections = new Gauge({
  name: 'db_pool_connections',
  help: 'Connections of the main PostgreSQL pool: total open, idle, and queries waiting for one (state=waiting)',
  labelNames: ['state'] as const,
  registers,
});

export const dbPoolMax = new Gauge({
  name: 'db_pool_max_connections',
  help: 'Size limit of the main PostgreSQL pool',
  registers,
});

export const databaseUp = new Gauge({
  name: 'database_up',
  help: '1 when the last scrape could query PostgreSQL, else 0',
  registers,
});

/** Starts timing an append; call the result with the outcome when it ends. */
export function timeAppend(store: string): (result: 'ok' | 'error') => void {
  const end = eventStoreAppendDuration.startTimer({ store });
  return (result) => void end({ result });
}

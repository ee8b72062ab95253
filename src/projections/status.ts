/** Each projector's checkpoint and lag, for the CLI and /readyz. */
import { sql, type Kysely } from 'kysely';
import type { EventStore } from '../eventstore/types.ts';
import { comparePositions } from '../eventstore/types.ts';
import { readCheckpoints } from './checkpoints.ts';
import type { Database } from '../db/schema.ts';

export interface ProjectionStatus {
  name: string;
  position: string | null;
  head: string | null;
  /** Events in the log after the checkpoint (capped at 100,000 for speed). */
  lag_events: number;
  /** Age in ms of the oldest event the projector has not applied yet (0 when caught up). */
  lag_ms: number;
  failed_event_id: string | null;
  error: string | null;
  updated_at: string;
}

/**
 * Each projector's status, then every other log consumer with a checkpoint
 * (the webhook subscriber), which writes do not wait for but an operator
 * must see.
 */
export async function projectionStatus(db: Kysely<Database>, store: EventStore, projectorNames: readonly string[]): Promise<ProjectionStatus[]> {
  const head = await store.headPosition();
  const checkpoints = await readCheckpoints(db);
  const rows = new Map(checkpoints.map((r) => [r.name, r]));
  const names = [...projectorNames, ...checkpoints.map((r) => r.name).filter((n) => !projectorNames.includes(n))];
  const out: ProjectionStatus[] = [];
  for (const name of names) {
    const row = rows.get(name);
    const position = row?.position ?? null;
    let lagEvents = 0;
    let lagMs = 0;
    if (comparePositions(position, head) < 0) {
      const next = await store.readAll(position, 1);
      if (next[0]) lagMs = Math.max(0, Date.now() - new Date(next[0].created_at).getTime());
      lagEvents = store.kind === 'postgres' ? await countAfter(db, position) : -1;
    }
    out.push({
      name,
      position,
      head,
      lag_events: lagEvents,
      lag_ms: lagMs,
      failed_event_id: row?.failed_event_id ?? null,
      error: row?.error ?? null,
      updated_at: (row?.updated_at ?? new Date(0)).toISOString(),
    });
  }
  return out;
}

async function countAfter(db: Kysely<Database>, position: string | null): Promise<number> {
  const [tx, pos] = position ? position.split('-').map((s) => BigInt(s).toString()) : ['0', '0'];
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from (select 1 from es_events
      where (transaction_id, global_position) > (${tx}::xid8, ${pos}::bigint)
        and transaction_id < pg_snapshot_xmin(pg_current_snapshot()) limit 100000) s`.execute(db);
  return Number(rows[0].n);
}

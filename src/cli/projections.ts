/** `projections status` and `projections rebuild [NAME]` over the registered projectors. */
import type { Command } from 'commander';
import { rebuildProjection, type RebuildResult } from '../projections/rebuild.ts';
import { projectionStatus } from '../projections/status.ts';
import { print, table, UsageError, withJson, type Open, type OutputOptions } from './shared.ts';

export function register(program: Command, open: Open): void {
  const group = program.command('projections').description('read models');

  withJson(group.command('status'))
    .description("each projector's (and the webhook subscriber's) checkpoint, lag and last error")
    .action(async (opts: OutputOptions) => {
      const rt = await open();
      const status = await projectionStatus(rt.database.db, rt.store, rt.projectors.map((p) => p.name));
      print(opts, status, () =>
        status.length === 0
          ? 'No projectors registered.'
          : table(
              ['NAME', 'POSITION', 'LAG EVENTS', 'LAG MS', 'ERROR'],
              status.map((s) => [s.name, s.position, s.lag_events, s.lag_ms, s.error ? `${s.error} (event ${s.failed_event_id})` : null]),
            ),
      );
    });

  withJson(group.command('rebuild').argument('[name]', 'one projector (default: all)'))
    .description('replay the log into fresh tables and swap them in (safe while the server runs)')
    .action(async (name: string | undefined, opts: OutputOptions) => {
      const rt = await open();
      const { projectors } = rt;
      const chosen = name === undefined ? projectors : [projectors.find((p) => p.name === name)];
      if (chosen.some((p) => p === undefined)) {
        throw new UsageError(`no projector named "${name}" (known: ${projectors.map((p) => p.name).join(', ') || 'none'})`);
      }
      const results: RebuildResult[] = [];
      for (const p of chosen) results.push(await rebuildProjection(rt.database.db, rt.store, p!));
      print(opts, results, () =>
        results.length === 0
          ? 'No projectors registered.'
          : results.map((r) => `${r.projector}: rebuilt at ${r.position ?? 'start'} (${Object.entries(r.rows).map(([t, n]) => `${t} ${n} rows`).join(', ')})`).join('\n'),
      );
    });
}

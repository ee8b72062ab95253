/** `projections status`, `projections rebuild [NAME]` and `projections verify [NAME]` over the registered projectors. */
import type { Command } from 'commander';
import { rebuildProjection, type RebuildResult } from '../projections/rebuild.ts';
import { projectionStatus } from '../projections/status.ts';
import { verifyProjection, type VerifyProjectionResult } from '../projections/verify.ts';
import { VerificationFailed } from './audit.ts';
import { BadInputError, badInputExitsWith2, print, table, UsageError, withJson, type Open, type OutputOptions } from './shared.ts';

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

  withJson(badInputExitsWith2(group.command('verify').argument('[name]', 'one projector (default: all)')))
    .description('rebuild into scratch tables and compare with the live ones (safe while the server runs); exit code 0 only with 0 differences')
    .action(async (name: string | undefined, opts: OutputOptions) => {
      const rt = await open();
      const { projectors } = rt;
      const chosen = name === undefined ? projectors : [projectors.find((p) => p.name === name)];
      if (chosen.some((p) => p === undefined)) {
        throw new BadInputError(`no projector named "${name}" (known: ${projectors.map((p) => p.name).join(', ') || 'none'})`);
      }
      const results: VerifyProjectionResult[] = [];
      for (const p of chosen) results.push(await verifyProjection(rt.database.db, rt.store, p!));
      const total = results.reduce((n, r) => n + r.differences_count, 0);
      print(opts, results, () =>
        results
          .map((r) => {
            const head = `${r.projector}: ${r.differences_count} differences at ${r.position ?? 'start'} (${Object.entries(r.rows).map(([t, n]) => `${t} ${n} rows`).join(', ')})`;
            if (r.differences.length === 0) return head;
            return `${head}\n${table(['TABLE', 'KEY', 'COLUMN', 'LIVE', 'REBUILT'], r.differences.map((d) => [d.table, JSON.stringify(d.key), d.column, JSON.stringify(d.live), JSON.stringify(d.rebuilt)]))}`;
          })
          .join('\n'),
      );
      if (total > 0) throw new VerificationFailed(`${total} differences between the live read models and a rebuild from the log`);
    });
}

/**
 * The one way a write answers (read your writes, docs/api-decisions.md,
 * "Beyond the reference"): wait until the projectors the resource's reads
 * come from have passed the write's position, then answer from the read
 * model exactly like a GET. If they do not catch up within the wait (a
 * stalled or overloaded projector), or the row is older than the write, the
 * write has still happened: answer the state the command decided, which is
 * the snapshot the projector will store, rather than an error that would
 * invite a duplicate retry.
 *
 * When the write's append wrote its rows inline (the PostgreSQL event store;
 * src/projections/inline.ts) they committed with it: no wait, the read finds
 * them. Otherwise (INLINE_PROJECTIONS=false, EventStoreDB) the projectors
 * run async and the wait stays.
 * Once the rows are in, a resource whose decided state is exactly what a
 * read shows (`decidedIsRead`) answers that state without the read.
 *
 * Each router declares its resource once (`WrittenResource`) and answers
 * every write with `answerAfterWrite(ctx, resource, result)`.
 */
import type { JsonReply, RequestContext } from './route.ts';

/** A resource as the API shows it, with its version (the stream revision, also the ETag). */
export interface Shown<T = unknown> {
  data: T;
  version: number;
}

export interface WrittenResource<R> {
  /** Names the resource in the log. */
  name: string;
  /** The projectors its reads come from: only they are waited for (others must not add their lag). */
  projectors: readonly string[];
  /** The log position the write produced (null: nothing to wait for). */
  position(result: R): string | null;
  /** The version the write left the resource at: an older row is not the answer. */
  version(result: R): number;
  /** Reads it from the read model (null: not there yet). */
  read(ctx: RequestContext, result: R): Promise<Shown | null>;
  /** The state the command decided, shown as a read would show it (only when the read model cannot answer). */
  decided(ctx: RequestContext, result: R): Shown | Promise<Shown>;
  /**
   * Whether decided() shows exactly what read() would once this write's rows
   * are in, member for member (tested for each resource that says so): once
   * they are (inline, or the projectors waited for), the write answers it
   * without reading its row back. Absent: the answer is always read.
   */
  decidedIsRead?(result: R): boolean;
}

export async function answerAfterWrite<R>(ctx: RequestContext, resource: WrittenResource<R>, result: R, status = 200): Promise<JsonReply> {
  const position = resource.position(result);
  // An append whose rows were written inline (docs/architecture.md "Inline projections") has nothing to wait for.
  const inline = position !== null && ctx.rt.inline?.answered(position, resource.projectors) === true;
  const caughtUp = position === null || inline || (await ctx.rt.progress.waitFor(position, undefined, resource.projectors));
  if (caughtUp) {
    // The write's rows are in (a later write's may be too): where its decided state is what a read of them
    // shows, that state is the answer, at the write's own version, with no read.
    if (resource.decidedIsRead?.(result)) {
      const decided = await resource.decided(ctx, result);
      return { status, data: decided.data, version: decided.version };
    }
    const stored = await resource.read(ctx, result);
    if (stored && stored.version >= resource.version(result)) return { status, data: stored.data, version: stored.version };
  }
  const decided = await resource.decided(ctx, result);
  ctx.rt.logger.warn({ request_id: ctx.requestId, position, resource: resource.name }, 'projectors behind, answering the decided state');
  return { status, data: decided.data, version: decided.version };
}

/**
 * `audit invoice ID`: the invoice's state after each event of its stream, and
 * whether each event's hash checks against its predecessor (docs/audit.md).
 * Invoice events carry the whole invoice as it is after them (data.invoice),
 * folded by the invoice decider's own evolve, so this shows exactly the state
 * the write side decided from.
 */
import { evolveInvoice, initialInvoiceState, type InvoiceState } from '../commands/invoice/decider.ts';
import { invoiceStream, type InvoiceEvent } from '../commands/invoice/events.ts';
import { bodyDigest, chainStep, GENESIS_HASH } from '../eventstore/chain.ts';
import type { EventStore } from '../eventstore/types.ts';

export interface InvoiceStep {
  revision: number;
  type: string;
  occurred_at: string;
  actor: string;
  hash: string;
  hash_ok: boolean;
  state: InvoiceState['invoice'];
}

/** [] when the invoice does not exist. */
export async function invoiceHistory(store: EventStore, invoiceId: string): Promise<InvoiceStep[]> {
  const events = await store.readStream(invoiceStream(invoiceId));
  let state = initialInvoiceState;
  let prev = GENESIS_HASH;
  return events.map((e) => {
    state = evolveInvoice(state, e as unknown as InvoiceEvent);
    const hashOk = chainStep(prev, e.stream, e.revision, bodyDigest(e)) === e.hash;
    prev = e.hash;
    return {
      revision: e.revision,
      type: e.type,
      occurred_at: e.metadata.occurred_at,
      actor: e.metadata.actor,
      hash: e.hash,
      hash_ok: hashOk,
      state: state.invoice,
    };
  });
}

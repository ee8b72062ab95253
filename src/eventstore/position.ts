/**
 * PostgreSQL log positions: (transaction_id, global_position) as one string,
 * both zero-padded to 20 digits so string order is log order.
 */
export function encodePosition(transactionId: string, globalPosition: string): string {
  return `${transactionId.padStart(20, '0')}-${globalPosition.padStart(20, '0')}`;
}

export function decodePosition(position: string | null): { tx: string; pos: string } {
  if (position === null) return { tx: '0', pos: '0' };
  const m = /^(\d{20})-(\d{20})$/.exec(position);
  if (!m) throw new Error(`not a PostgreSQL log position: ${position}`);
  return { tx: BigInt(m[1]).toString(), pos: BigInt(m[2]).toString() };
}

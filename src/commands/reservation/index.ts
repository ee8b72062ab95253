/**
 * The reservation protocol's public entry (docs/architecture.md "Invariants across streams"). Typical use by
 * a command handler:
 *
 *   await writeWithReservations(store, {
 *     owner: customerId, metadata,
 *     claims: [{ scope: customerIceScope(orgId), value: newIce, taken: iceAlreadyUsed }],
 *     releases: oldIce ? [{ scope: customerIceScope(orgId), value: oldIce }] : [],
 *   }, () => execute(store, customerStream(customerId), customerDecider, command, options));
 *
 * and one holder check per kind (HolderChecks, handed to the recovery worker
 * in src/main.ts) so recovery can free claims whose owner never came to
 * exist or moved to another value.
 */
export * from './events.ts';
export * from './holders.ts';
export * from './reservation.ts';
export * from './write.ts';

/**
 * `npm run bench -- <name> [<name>...]`: runs the named benchmarks (all when
 * none is named). Each prints its figures beside a baseline measured in the
 * same run on the same PostgreSQL, and the ratio. `statements` is a
 * diagnostic (where a write's database work goes), `scaling` compares
 * process layouts (docs/scaling.md) and `ab` this checkout's server with
 * another's (AB_OTHER): run only when named.
 */
const benches: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  eventstore: () => import('./eventstore.ts'),
  invoices: () => import('./invoices.ts'),
  api: () => import('./api.ts'),
  webhooks: () => import('./webhooks.ts'),
  documents: () => import('./documents.ts'),
  recurring: () => import('./recurring.ts'),
  audit: () => import('./audit.ts'),
  'audit-export': () => import('./audit-export.ts'),
  dashboard: () => import('./dashboard.ts'),
  'list-dates': () => import('./list-dates.ts'),
};
const diagnostics: Record<string, () => Promise<{ run(): Promise<void> }>> = {
  statements: () => import('./statements.ts'),
  scaling: () => import('./scaling.ts'),
  ab: () => import('./ab.ts'),
};

const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const chosen = names.length ? names : Object.keys(benches);
for (const name of chosen) {
  const load = benches[name] ?? diagnostics[name];
  if (!load) {
    console.error(`error: unknown benchmark "${name}" (known: ${[...Object.keys(benches), ...Object.keys(diagnostics)].join(', ')})`);
    process.exit(2);
  }
  console.log(`\n== ${name} ==`);
  await (await load()).run();
}
process.exit(0);

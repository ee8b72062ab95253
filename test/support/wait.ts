/** Waiting in tests: a plain sleep, and polling until a condition holds (for background work). */

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `every` ms until it holds; throws naming `what` once `ms` have passed. */
export async function until(check: () => boolean | Promise<boolean>, ms = 20_000, what = 'condition', every = 20): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what} not reached within ${ms} ms`);
    await sleep(every);
  }
}

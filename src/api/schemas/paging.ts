/** Query parameters every list endpoint takes (docs/api-decisions.md "Status codes"), and their bounds. */
import type { JsonSchema } from '../route.ts';

/** Largest page number: keeps OFFSET far inside PostgreSQL's range (100 per page * 1e6). */
const MAX_PAGE = 1_000_000;

export const pagingQuery: Record<'page' | 'per_page', JsonSchema> = {
  page: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 1 },
  per_page: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
};

/**
 * Case- and accent-insensitive substring search (docs/api-decisions.md "Lists") without
 * PostgreSQL's unaccent extension: projectors store a folded copy of the
 * searchable fields (`search_text`) and queries fold the term the same way,
 * then match with LIKE '%term%'. One folding function for both sides, so
 * they can never disagree ('École' and 'ecole' fold to the same text).
 */

/** Latin letters that carry no combining mark to strip, spelled as users type them ('cœur' ~ 'coeur'). */
const BASE_LETTERS: Record<string, string> = { œ: 'oe', æ: 'ae', ß: 'ss', ı: 'i', ø: 'o', ł: 'l', đ: 'd' };
const BASE_LETTER = new RegExp(`[${Object.keys(BASE_LETTERS).join('')}]`, 'gu');

/**
 * Lowercase, compatibility-decompose (NFKD: 'é' -> 'e' + accent, 'ﬁ' -> 'fi',
 * full-width digits -> digits), drop the combining marks, collapse every run
 * of whitespace to one space, spell the few undecomposable letters
 * (œ, æ, ß, ı, ø, ł, đ) in plain Latin. Lowercasing first: 'İ'.toLowerCase() adds a
 * combining dot that the mark removal then drops.
 */
export function foldForSearch(text: string): string {
  return text
    .toLowerCase()
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(BASE_LETTER, (c) => BASE_LETTERS[c])
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The stored search text of a row: each present value folded, one per line.
 * A folded term never contains a newline (whitespace collapses to a space),
 * so a match can never straddle two fields.
 */
export function searchText(values: readonly (string | null | undefined)[]): string {
  return values
    .filter((v): v is string => typeof v === 'string' && v !== '')
    .map(foldForSearch)
    .join('\n');
}

/**
 * The LIKE pattern for a client's term, or null when the term folds to
 * nothing (a blank search filters nothing). %, _ and \ in the term are
 * matched literally (backslash is PostgreSQL's default LIKE escape).
 */
export function containsPattern(term: string | undefined): string | null {
  if (term === undefined) return null;
  const folded = foldForSearch(term);
  if (folded === '') return null;
  return `%${folded.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

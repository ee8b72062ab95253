/**
 * Helpers of RouteSpec.check (src/api/route.ts): running a decider's field
 * rules on a body the JSON schema already refused, to report the domain's
 * problems in the same answer (docs/api-decisions.md "Errors": every field
 * at once).
 */
import { takenClaimFields, type NewReservation } from '../commands/reservation/index.ts';
import { DomainError, type FieldError } from '../shared/errors.ts';
import type { BodyCheck } from './route.ts';

export type BodyCheckContext = Parameters<BodyCheck>[0];

/** The body as an object of fields (anything else reads as no fields). */
export function asRecord(body: unknown): any {
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, any>) : {};
}

/**
 * The field errors `rules` throws as a VALIDATION_ERROR; none when it
 * passes. The rules read a body the schema refused, so any other failure (a
 * shape they do not expect) counts as nothing to add: the schema's errors
 * already say what is wrong with that shape.
 */
export function fieldErrorsOf(rules: () => unknown): FieldError[] {
  try {
    rules();
    return [];
  } catch (err) {
    if (err instanceof DomainError && err.code === 'VALIDATION_ERROR') {
      const fields = (err.details as { fields?: FieldError[] } | undefined)?.fields;
      return Array.isArray(fields) ? fields : [];
    }
    return [];
  }
}

/**
 * `fields` (the body's other problems) plus those its claims would add: `ice: already used` when the
 * well-formed ICE it names is held by someone other than `owner` (null for a body that creates), so a
 * duplicate ICE is listed beside the schema's errors (takenClaimFields; it only reads).
 */
export async function withTakenClaims(ctx: BodyCheckContext, fields: FieldError[], claims: NewReservation[], owner: string | null): Promise<FieldError[]> {
  return [...fields, ...(await takenClaimFields(ctx.rt.store, owner, claims, fields))];
}

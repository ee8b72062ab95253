/**
 * given(events).when(command).then(events | error) for deciders (DESIGN
 * section 8). `history` builds the given events by running commands through
 * the decider itself, so fixtures never drift from what decide produces.
 */
import { expect } from 'chai';
import type { Decider, DomainEvent } from '../../src/commands/shared/decider.ts';
import { fold } from '../../src/commands/shared/decider.ts';
import { DomainError, type ErrorCode } from '../../src/shared/errors.ts';

export interface Outcome<E extends DomainEvent> {
  /** Asserts the exact events decided. */
  then(expected: E[]): void;
  /** Asserts the event types decided, returns the events (narrowed) for finer checks. */
  thenTypes<T extends E['type']>(...types: T[]): Extract<E, { type: T }>[];
  /** Asserts a DomainError with this code (and, for validation errors, exactly these fields). */
  thenError(code: ErrorCode, fields?: string[]): DomainError;
}

export function given<C, E extends DomainEvent, S>(decider: Decider<C, E, S>, events: E[] = []) {
  return {
    when(command: C): Outcome<E> {
      const run = () => decider.decide(command, fold(decider, events));
      return {
        then(expected) {
          expect(run()).to.deep.equal(expected);
        },
        thenTypes(...types) {
          const decided = run();
          expect(decided.map((e) => e.type)).to.deep.equal(types);
          return decided as Extract<E, { type: (typeof types)[number] }>[];
        },
        thenError(code, fields) {
          let caught: unknown;
          try {
            run();
          } catch (err) {
            caught = err;
          }
          expect(caught, `expected ${code}`).to.be.instanceOf(DomainError);
          const error = caught as DomainError;
          expect(error.code, error.message).to.equal(code);
          if (fields) {
            const named = (error.details?.fields as { field: string }[] | undefined)?.map((f) => f.field) ?? [];
            expect(named).to.have.members(fields);
          }
          return error;
        },
      };
    },
  };
}

/** Events produced by deciding each command on the state left by the previous ones. */
export function history<C, E extends DomainEvent, S>(decider: Decider<C, E, S>, ...commands: C[]): E[] {
  const events: E[] = [];
  for (const command of commands) events.push(...decider.decide(command, fold(decider, events)));
  return events;
}

/** The message a validation error gives for one field. */
export function messageFor(error: DomainError, field: string): string | undefined {
  const fields = error.details?.fields as { field: string; message: string }[] | undefined;
  return fields?.find((f) => f.field === field)?.message;
}

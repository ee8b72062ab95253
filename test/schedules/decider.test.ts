import { expect } from 'chai';
import type { CommandMetadata } from '../../src/commands/command.ts';
import type { InvoiceCustomer } from '../../src/commands/invoice/commands.ts';
import type { CreateScheduleInput, ScheduleCommand, SchedulePatch } from '../../src/commands/schedule/commands.ts';
import {
  occurrenceInvoiceId,
  planOccurrence,
  releasesQuotaSlot,
  scheduleDecider,
} from '../../src/commands/schedule/decider.ts';
import type { Schedule, ScheduleEvent } from '../../src/commands/schedule/events.ts';
import { fold } from '../../src/commands/shared/decider.ts';
import { DomainError } from '../../src/shared/errors.ts';
import { given, history, messageFor } from '../unit/given.ts';

const ID = '0190a1b2-0000-7000-8000-0000000000aa';
const CUSTOMER = '0190a1b2-0000-7000-8000-0000000000cc';
const at = (minute: number) => `2026-03-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
const meta = (minute = 0): CommandMetadata => ({ now: at(minute), actor: 'key_1', organization_id: 'org_1' });

const customer = (status: InvoiceCustomer['status'] = 'active'): InvoiceCustomer => ({
  id: CUSTOMER, name: 'Atlas SARL', type: 'b2b', ice: '001234567000089', email: null, phone: null,
  address: { street: null, city: null, postal_code: null, country: 'MA' }, status,
});
const items = [{ description: 'Maintenance', quantity: 1, unit_price: 1000 }];

const create = (input: Partial<CreateScheduleInput> = {}, who: InvoiceCustomer | null = customer()): ScheduleCommand => ({
  type: 'CreateSchedule',
  data: { schedule_id: ID, quota_slot: 1, customer: who, customer_id: CUSTOMER, frequency: 'monthly', start_date: '2026-03-10', items, ...input },
  metadata: meta(),
});
const cmd = <T extends ScheduleCommand['type']>(type: T, data: object, minute = 1) =>
  ({ type, data: { schedule_id: ID, ...data }, metadata: meta(minute) }) as ScheduleCommand;
const update = (patch: SchedulePatch) => cmd('UpdateSchedule', { patch });
const pause = () => cmd('PauseSchedule', {});
const resume = (today: string, next_run_date?: string) => cmd('ResumeSchedule', { today, next_run_date });
const record = (seq: number) => cmd('RecordOccurrence', { seq, invoice_id: occurrenceInvoiceId(ID, seq), invoice_number: null });
const fail = (seq: number, today: string, code = 'CUSTOMER_INACTIVE') => cmd('RecordFailure', { seq, today, error: { code, message: 'inactive' } });
const cancel = () => cmd('CancelSchedule', { reason: 'customer_archived' });

const stateOf = (events: ScheduleEvent[]) => fold(scheduleDecider, events);
const last = (events: ScheduleEvent[]): Schedule => stateOf(events).schedule!;
const existing = (input: Partial<CreateScheduleInput> = {}, ...more: ScheduleCommand[]) => history(scheduleDecider, create(input), ...more);

describe('schedule decider', () => {
  describe('CreateSchedule', () => {
    it('creates an active schedule with the defaults and its first next_run_date', () => {
      const [event] = given(scheduleDecider).when(create()).thenTypes('ScheduleCreated');
      const s = event.data.schedule;
      expect(s).to.include({
        status: 'active', interval_count: 1, day_of_month: 10, day_of_week: null, next_run_date: '2026-03-10', occurrences: 0,
        auto_finalize: false, auto_send: false, days_until_due: 30, currency: 'MAD', version: 0, name: null,
      });
      expect(s.items).to.deep.equal([{ description: 'Maintenance', quantity: '1', unit_price: '1000', tax_rate: '20' }]);
    });

    it('accepts every bound at its edge', () => {
      given(scheduleDecider)
        .when(create({ interval_count: 12, day_of_month: 28, days_until_due: 365 }))
        .thenTypes('ScheduleCreated');
      given(scheduleDecider).when(create({ interval_count: 1, day_of_month: 1, days_until_due: 0 })).thenTypes('ScheduleCreated');
      given(scheduleDecider).when(create({ frequency: 'weekly', day_of_week: 0 })).thenTypes('ScheduleCreated');
      given(scheduleDecider).when(create({ frequency: 'weekly', day_of_week: 6 })).thenTypes('ScheduleCreated');
    });

    it('refuses every bound one past its edge, all fields at once', () => {
      given(scheduleDecider)
        .when(create({ interval_count: 13, day_of_month: 29, days_until_due: 366 }))
        .thenError('VALIDATION_ERROR', ['interval_count', 'day_of_month', 'days_until_due']);
      given(scheduleDecider)
        .when(create({ interval_count: 0, day_of_month: 0, days_until_due: -1, max_occurrences: 0 }))
        .thenError('VALIDATION_ERROR', ['interval_count', 'day_of_month', 'days_until_due', 'max_occurrences']);
      given(scheduleDecider).when(create({ frequency: 'weekly', day_of_week: 7 })).thenError('VALIDATION_ERROR', ['day_of_week']);
      given(scheduleDecider).when(create({ frequency: 'weekly', day_of_week: -1 })).thenError('VALIDATION_ERROR', ['day_of_week']);
    });

    it('auto_send needs auto_finalize', () => {
      const error = given(scheduleDecider).when(create({ auto_send: true })).thenError('VALIDATION_ERROR', ['auto_send']);
      expect(messageFor(error, 'auto_send')).to.match(/auto_finalize/);
      given(scheduleDecider).when(create({ auto_send: true, auto_finalize: true })).thenTypes('ScheduleCreated');
    });

    it('end_date before the first run date is refused; on it, accepted', () => {
      // start 2026-03-11 on day 10: the first run is 2026-04-10
      given(scheduleDecider).when(create({ start_date: '2026-03-11', day_of_month: 10, end_date: '2026-04-09' })).thenError('VALIDATION_ERROR', ['end_date']);
      given(scheduleDecider).when(create({ start_date: '2026-03-11', day_of_month: 10, end_date: '2026-04-10' })).thenTypes('ScheduleCreated');
    });

    it('refuses the day field of the other family of frequencies', () => {
      given(scheduleDecider).when(create({ frequency: 'weekly', day_of_month: 5 })).thenError('VALIDATION_ERROR', ['day_of_month']);
      given(scheduleDecider).when(create({ frequency: 'monthly', day_of_week: 1 })).thenError('VALIDATION_ERROR', ['day_of_week']);
    });

    it('refuses an unknown or archived customer, no items, a bad currency, a bad date', () => {
      given(scheduleDecider).when(create({}, null)).thenError('VALIDATION_ERROR', ['customer_id']);
      given(scheduleDecider).when(create({}, customer('archived'))).thenError('VALIDATION_ERROR', ['customer_id']);
      given(scheduleDecider)
        .when(create({ items: [], currency: 'ZZZ', start_date: '2026-02-30' }))
        .thenError('VALIDATION_ERROR', ['items', 'currency', 'start_date']);
    });

    it('the same id twice decides nothing (a retried request)', () => {
      given(scheduleDecider, existing()).when(create()).then([]);
    });
  });

  describe('UpdateSchedule', () => {
    it('changes the fields sent and nothing else; a no-op PUT appends nothing', () => {
      const [event] = given(scheduleDecider, existing()).when(update({ days_until_due: 15, name: 'Loyer' })).thenTypes('ScheduleUpdated');
      expect(event.data.changed_fields).to.have.members(['days_until_due', 'name']);
      given(scheduleDecider, existing()).when(update({ days_until_due: 30 })).then([]);
    });

    it('a frequency change re-anchors at the current next run date', () => {
      const [event] = given(scheduleDecider, existing({}, record(0))).when(update({ frequency: 'weekly' })).thenTypes('ScheduleUpdated');
      // next run was 2026-04-10 (a Friday): weekly on Fridays from there
      expect(event.data.schedule).to.include({ frequency: 'weekly', day_of_week: 5, day_of_month: null, next_run_date: '2026-04-10' });
    });

    it('a calendar change that moves the next run past the end date kept is refused on the field sent (it would complete the schedule silently)', () => {
      given(scheduleDecider, existing({ start_date: '2026-03-10', end_date: '2026-03-10' }))
        .when(update({ day_of_month: 20 }))
        .thenError('VALIDATION_ERROR');
      given(scheduleDecider, existing({ start_date: '2026-03-10', end_date: '2026-03-25' })).when(update({ day_of_month: 20 })).thenTypes('ScheduleUpdated');
    });

    it('end_date before the next run and max_occurrences not above the generated count are refused', () => {
      given(scheduleDecider, existing({}, record(0)))
        .when(update({ end_date: '2026-04-09', max_occurrences: 1 }))
        .thenError('VALIDATION_ERROR', ['end_date', 'max_occurrences']);
    });

    it('auto_send without auto_finalize is refused on update too', () => {
      given(scheduleDecider, existing()).when(update({ auto_send: true })).thenError('VALIDATION_ERROR', ['auto_send']);
    });

    it('paused schedules can be updated; completed and cancelled are read-only (INVALID_STATE)', () => {
      given(scheduleDecider, existing({}, pause())).when(update({ days_until_due: 10 })).thenTypes('ScheduleUpdated');
      given(scheduleDecider, existing({ max_occurrences: 1 }, record(0))).when(update({ days_until_due: 10 })).thenError('INVALID_STATE');
      given(scheduleDecider, existing({}, cancel())).when(update({ days_until_due: 10 })).thenError('INVALID_STATE');
    });
  });

  describe('pause and resume', () => {
    it('pause: active -> paused (next_run_date null); pause again: INVALID_STATE', () => {
      const [event] = given(scheduleDecider, existing()).when(pause()).thenTypes('SchedulePaused');
      expect(event.data.schedule).to.include({ status: 'paused', next_run_date: null });
      given(scheduleDecider, existing({}, pause())).when(pause()).thenError('INVALID_STATE');
    });

    it('resume on an active, completed or cancelled schedule: INVALID_STATE', () => {
      given(scheduleDecider, existing()).when(resume('2026-03-01')).thenError('INVALID_STATE');
      given(scheduleDecider, existing({}, cancel())).when(resume('2026-03-01')).thenError('INVALID_STATE');
      given(scheduleDecider, existing({ max_occurrences: 1 }, record(0))).when(resume('2026-03-01')).thenError('INVALID_STATE');
    });

    it('resume without a date skips what passed while paused, keeping the lattice', () => {
      const [event] = given(scheduleDecider, existing({}, pause())).when(resume('2026-06-11')).thenTypes('ScheduleResumed');
      expect(event.data.skipped).to.equal(4); // 03-10, 04-10, 05-10, 06-10
      expect(event.data.schedule).to.include({ status: 'active', next_run_date: '2026-07-10', occurrences: 0 });
    });

    it('resume with next_run_date re-anchors there; past dates and day 29 are refused', () => {
      const [event] = given(scheduleDecider, existing({}, pause())).when(resume('2026-06-11', '2026-06-20')).thenTypes('ScheduleResumed');
      expect(event.data.schedule).to.include({ next_run_date: '2026-06-20', day_of_month: 20 });
      given(scheduleDecider, existing({}, pause())).when(resume('2026-06-11', '2026-06-10')).thenError('VALIDATION_ERROR', ['next_run_date']);
      given(scheduleDecider, existing({}, pause())).when(resume('2026-06-11', '2026-06-29')).thenError('VALIDATION_ERROR', ['next_run_date']);
      given(scheduleDecider, existing({}, pause())).when(resume('2026-06-11', '2026-06-11')).thenTypes('ScheduleResumed');
    });

    it('resume past end_date completes the schedule', () => {
      given(scheduleDecider, existing({ end_date: '2026-04-10' }, pause())).when(resume('2026-05-01')).thenTypes('ScheduleResumed', 'ScheduleCompleted');
    });
  });

  describe('occurrences', () => {
    it('a generated occurrence moves next_run_date and counts', () => {
      const [event] = given(scheduleDecider, existing()).when(record(0)).thenTypes('ScheduleOccurrenceGenerated');
      expect(event.data.schedule).to.include({ occurrences: 1, seq: 1, next_run_date: '2026-04-10' });
      expect(event.data.run).to.include({ seq: 0, run_date: '2026-03-10', status: 'success', invoice_id: occurrenceInvoiceId(ID, 0) });
    });

    it('an occurrence whose invoice exists is recorded on a schedule paused meanwhile, which stays paused', () => {
      const [event] = given(scheduleDecider, existing({}, pause())).when(record(0)).thenTypes('ScheduleOccurrenceGenerated');
      expect(event.data.schedule).to.include({ status: 'paused', occurrences: 1, seq: 1, next_run_date: null });
    });

    it('an occurrence is recorded with the run date it was planned for, even if a PUT re-anchored the calendar meanwhile', () => {
      const [event] = given(scheduleDecider, existing({}, update({ day_of_month: 20 })))
        .when(cmd('RecordOccurrence', { seq: 0, invoice_id: occurrenceInvoiceId(ID, 0), invoice_number: null, run_date: '2026-03-10' }))
        .thenTypes('ScheduleOccurrenceGenerated');
      expect(event.data.run).to.include({ run_date: '2026-03-10' });
    });

    it('recording an occurrence twice decides nothing (second scheduler, retried request)', () => {
      given(scheduleDecider, existing({}, record(0))).when(record(0)).then([]);
    });

    it('the last allowed run completes the schedule (max_occurrences, end_date)', () => {
      given(scheduleDecider, existing({ max_occurrences: 2 }, record(0))).when(record(1)).thenTypes('ScheduleOccurrenceGenerated', 'ScheduleCompleted');
      given(scheduleDecider, existing({ end_date: '2026-04-10' }, record(0))).when(record(1)).thenTypes('ScheduleOccurrenceGenerated', 'ScheduleCompleted');
    });

    it('a failure on the run day is retried (not final, recorded once); after the day it is final', () => {
      const [failed] = given(scheduleDecider, existing()).when(fail(0, '2026-03-10')).thenTypes('ScheduleOccurrenceFailed');
      expect(failed.data).to.include({ final: false });
      expect(failed.data.schedule).to.include({ seq: 0, next_run_date: '2026-03-10' });
      given(scheduleDecider, existing({}, fail(0, '2026-03-10'))).when(fail(0, '2026-03-10')).then([]);
      const [closed] = given(scheduleDecider, existing({}, fail(0, '2026-03-10')))
        .when(cmd('CloseFailedOccurrence', { seq: 0, today: '2026-03-11' }))
        .thenTypes('ScheduleOccurrenceFailed');
      expect(closed.data).to.include({ final: true });
      expect(closed.data.schedule).to.include({ seq: 1, occurrences: 0, next_run_date: '2026-04-10' });
      // a retry that succeeds the same day records the run as a success
      given(scheduleDecider, existing({}, fail(0, '2026-03-10'))).when(record(0)).thenTypes('ScheduleOccurrenceGenerated');
    });

    it('a failed catch-up run (its day already over) is final at once and does not count', () => {
      const [event] = given(scheduleDecider, existing({ max_occurrences: 1 })).when(fail(0, '2026-03-20')).thenTypes('ScheduleOccurrenceFailed');
      expect(event.data).to.include({ final: true });
      expect(event.data.schedule).to.include({ status: 'active', occurrences: 0, next_run_date: '2026-04-10' });
    });

    it('restoring the organization skips what fell due while it was archived', () => {
      const [event] = given(scheduleDecider, existing())
        .when(cmd('SkipFrozenOccurrences', { today: '2026-05-11' }))
        .thenTypes('ScheduleOccurrencesSkipped');
      expect(event.data.skipped).to.equal(3);
      expect(event.data.schedule.next_run_date).to.equal('2026-06-10');
      given(scheduleDecider, existing()).when(cmd('SkipFrozenOccurrences', { today: '2026-03-01' })).then([]);
    });
  });

  describe('cancel and delete', () => {
    it("the customer's archiving cancels an active or paused schedule, once", () => {
      given(scheduleDecider, existing()).when(cancel()).thenTypes('ScheduleCancelled');
      given(scheduleDecider, existing({}, pause())).when(cancel()).thenTypes('ScheduleCancelled');
      given(scheduleDecider, existing({}, cancel())).when(cancel()).then([]);
    });

    it('delete removes the schedule in any state; it is then not found', () => {
      given(scheduleDecider, existing({}, cancel())).when(cmd('DeleteSchedule', {})).thenTypes('ScheduleDeleted');
      given(scheduleDecider, existing({}, cmd('DeleteSchedule', {}))).when(pause()).thenError('NOT_FOUND');
    });

    it('completed, cancelled and deleted give the quota slot back', () => {
      expect(releasesQuotaSlot(existing({ max_occurrences: 1 }, record(0)).slice(1))).to.equal(true);
      expect(releasesQuotaSlot(existing({}, cancel()).slice(1))).to.equal(true);
      expect(releasesQuotaSlot(existing({}, pause()).slice(1))).to.equal(false);
    });
  });

  describe('planOccurrence (generate)', () => {
    it('plans the next occurrence: derived invoice id, issue and due dates, the items', () => {
      const plan = planOccurrence(stateOf(existing({ days_until_due: 15 })), customer());
      expect(plan).to.deep.include({ seq: 0, run_date: '2026-03-10', invoice_id: occurrenceInvoiceId(ID, 0) });
      expect(plan.invoice).to.include({ issue_date: '2026-03-10', due_date: '2026-03-25', currency: 'MAD' });
      expect(planOccurrence(stateOf(existing()), customer(), '2026-02-01').invoice).to.include({ issue_date: '2026-02-01', due_date: '2026-03-03' });
    });

    it('CUSTOMER_INACTIVE for an inactive or archived customer; INVALID_STATE unless active', () => {
      const refused = (fn: () => unknown) => {
        try {
          fn();
        } catch (err) {
          return (err as DomainError).code;
        }
        return 'none';
      };
      expect(refused(() => planOccurrence(stateOf(existing()), customer('inactive')))).to.equal('CUSTOMER_INACTIVE');
      expect(refused(() => planOccurrence(stateOf(existing()), customer('archived')))).to.equal('CUSTOMER_INACTIVE');
      expect(refused(() => planOccurrence(stateOf(existing({}, pause())), customer()))).to.equal('INVALID_STATE');
      expect(refused(() => planOccurrence(stateOf(existing({}, cancel())), customer()))).to.equal('INVALID_STATE');
      expect(last(existing()).status).to.equal('active');
    });
  });
});

/**
 * Table tests of the schedule calendar (docs/recurring.md, "Calendar rules"):
 * one row per calendar decision.
 */
import { expect } from 'chai';
import {
  businessToday,
  dayRuleFrom,
  firstOccurrenceOnOrAfter,
  newCalendar,
  nextRunDate,
  reanchor,
  upcomingRunDates,
  type CalendarInput,
  type ScheduleCalendar,
} from '../../src/commands/schedule/calendar.ts';

const schedule = (input: Partial<CalendarInput> & Pick<CalendarInput, 'frequency' | 'start_date'>) =>
  newCalendar({ interval_count: 1, day_of_month: null, day_of_week: null, end_date: null, max_occurrences: null, ...input });

/** The schedule after `n` generated occurrences. */
const after = (s: ScheduleCalendar, generated: number, failed = 0): ScheduleCalendar => ({
  ...s,
  seq: s.seq + generated + failed,
  occurrences: s.occurrences + generated,
});

interface Row {
  name: string;
  input: Partial<CalendarInput> & Pick<CalendarInput, 'frequency' | 'start_date'>;
  dates: string[];
}

const rows: Row[] = [
  // each frequency, interval_count 1, on day_of_week / day_of_month defaults
  { name: 'weekly, start on a Wednesday: every Wednesday', input: { frequency: 'weekly', start_date: '2026-01-07' }, dates: ['2026-01-07', '2026-01-14', '2026-01-21', '2026-01-28'] },
  { name: 'biweekly: every other week', input: { frequency: 'biweekly', start_date: '2026-01-07' }, dates: ['2026-01-07', '2026-01-21', '2026-02-04', '2026-02-18'] },
  { name: 'monthly on the start day', input: { frequency: 'monthly', start_date: '2026-01-10' }, dates: ['2026-01-10', '2026-02-10', '2026-03-10', '2026-04-10'] },
  { name: 'quarterly', input: { frequency: 'quarterly', start_date: '2026-01-10' }, dates: ['2026-01-10', '2026-04-10', '2026-07-10', '2026-10-10'] },
  { name: 'biannually', input: { frequency: 'biannually', start_date: '2026-01-10' }, dates: ['2026-01-10', '2026-07-10', '2027-01-10', '2027-07-10'] },
  { name: 'yearly', input: { frequency: 'yearly', start_date: '2026-01-10' }, dates: ['2026-01-10', '2027-01-10', '2028-01-10', '2029-01-10'] },
  // interval_count multiplies the period
  { name: 'monthly x 3 = every 3 months', input: { frequency: 'monthly', start_date: '2026-01-10', interval_count: 3 }, dates: ['2026-01-10', '2026-04-10', '2026-07-10', '2026-10-10'] },
  { name: 'weekly x 3 = every 3 weeks', input: { frequency: 'weekly', start_date: '2026-01-07', interval_count: 3 }, dates: ['2026-01-07', '2026-01-28', '2026-02-18', '2026-03-11'] },
  { name: 'monthly x 12 = yearly', input: { frequency: 'monthly', start_date: '2026-05-05', interval_count: 12 }, dates: ['2026-05-05', '2027-05-05', '2028-05-05'] },
  { name: 'quarterly x 12 = every 3 years', input: { frequency: 'quarterly', start_date: '2026-05-05', interval_count: 12 }, dates: ['2026-05-05', '2029-05-05', '2032-05-05'] },
  // first run: the first matching date on or after start_date, the lattice anchored there
  { name: 'start on the run day runs that day', input: { frequency: 'monthly', start_date: '2026-03-15', day_of_month: 15 }, dates: ['2026-03-15', '2026-04-15', '2026-05-15'] },
  { name: 'start after the run day runs next month', input: { frequency: 'monthly', start_date: '2026-03-16', day_of_month: 15 }, dates: ['2026-04-15', '2026-05-15', '2026-06-15'] },
  { name: 'quarterly from 2026-01-20 on day 15: anchored on 02-15 (CONTRACT example)', input: { frequency: 'quarterly', start_date: '2026-01-20', day_of_month: 15 }, dates: ['2026-02-15', '2026-05-15', '2026-08-15'] },
  { name: 'weekly start after the weekday: the next one', input: { frequency: 'weekly', start_date: '2026-01-08', day_of_week: 3 }, dates: ['2026-01-14', '2026-01-21'] },
  { name: 'day_of_week 0 is Sunday', input: { frequency: 'weekly', start_date: '2026-01-07', day_of_week: 0 }, dates: ['2026-01-11', '2026-01-18', '2026-01-25'] },
  { name: 'day_of_week 6 is Saturday', input: { frequency: 'weekly', start_date: '2026-01-07', day_of_week: 6 }, dates: ['2026-01-10', '2026-01-17', '2026-01-24'] },
  { name: 'day_of_week on a Sunday start: that Sunday', input: { frequency: 'weekly', start_date: '2026-01-11' }, dates: ['2026-01-11', '2026-01-18'] },
  // month ends: the day is capped at 28, also when it defaults from start_date
  { name: 'yearly from 03-31: the default day is capped at 28 (CONTRACT example)', input: { frequency: 'yearly', start_date: '2026-03-31' }, dates: ['2026-04-28', '2027-04-28', '2028-04-28'] },
  { name: 'yearly from Feb 28 across a leap year stays on Feb 28', input: { frequency: 'yearly', start_date: '2027-02-28' }, dates: ['2027-02-28', '2028-02-28', '2029-02-28'] },
  { name: 'yearly from Feb 29 of a leap year runs on the 28th from March', input: { frequency: 'yearly', start_date: '2028-02-29' }, dates: ['2028-03-28', '2029-03-28'] },
  { name: 'monthly on 28 through February', input: { frequency: 'monthly', start_date: '2026-01-28' }, dates: ['2026-01-28', '2026-02-28', '2026-03-28'] },
  // across a year end
  { name: 'biweekly across a year end', input: { frequency: 'biweekly', start_date: '2026-12-16' }, dates: ['2026-12-16', '2026-12-30', '2027-01-13', '2027-01-27'] },
  { name: 'monthly start after the day in December: January', input: { frequency: 'monthly', start_date: '2026-12-20', day_of_month: 5 }, dates: ['2027-01-05', '2027-02-05'] },
  // bounds
  { name: 'end_date on a run day includes that run', input: { frequency: 'monthly', start_date: '2026-01-10', end_date: '2026-03-10' }, dates: ['2026-01-10', '2026-02-10', '2026-03-10'] },
  { name: 'end_date the day before a run excludes it', input: { frequency: 'monthly', start_date: '2026-01-10', end_date: '2026-03-09' }, dates: ['2026-01-10', '2026-02-10'] },
  { name: 'max_occurrences 1: one run', input: { frequency: 'weekly', start_date: '2026-01-07', max_occurrences: 1 }, dates: ['2026-01-07'] },
  { name: 'max_occurrences 3', input: { frequency: 'yearly', start_date: '2026-01-07', max_occurrences: 3 }, dates: ['2026-01-07', '2027-01-07', '2028-01-07'] },
];

describe('schedule calendar', () => {
  describe('upcomingRunDates (every frequency, bounds, first run)', () => {
    for (const row of rows) {
      it(row.name, () => {
        expect(upcomingRunDates(schedule(row.input), 6).slice(0, row.dates.length)).to.deep.equal(row.dates);
        if (row.input.end_date || row.input.max_occurrences) expect(upcomingRunDates(schedule(row.input), 6)).to.deep.equal(row.dates);
      });
    }
  });

  describe('nextRunDate', () => {
    const quarterly = schedule({ frequency: 'quarterly', start_date: '2026-01-20', day_of_month: 15 });

    it('without `after`: the next occurrence', () => {
      expect(nextRunDate(quarterly)).to.equal('2026-02-15');
      expect(nextRunDate(after(quarterly, 2))).to.equal('2026-08-15');
    });

    it('with `after`: the first lattice date strictly after it', () => {
      expect(nextRunDate(quarterly, '2026-02-14')).to.equal('2026-02-15');
      expect(nextRunDate(quarterly, '2026-02-15')).to.equal('2026-05-15');
      expect(nextRunDate(quarterly, '2030-01-01')).to.equal('2030-02-15');
    });

    it('comes from anchor and occurrence count only: a run generated late moves nothing', () => {
      // The run of 02-15 was generated on 03-02 (scheduler down): the next is still 05-15.
      expect(nextRunDate(after(quarterly, 1))).to.equal('2026-05-15');
    });

    it('null once max_occurrences is reached or end_date passed', () => {
      const once = schedule({ frequency: 'monthly', start_date: '2026-01-10', max_occurrences: 1 });
      expect(nextRunDate(after(once, 1))).to.equal(null);
      const ending = schedule({ frequency: 'monthly', start_date: '2026-01-10', end_date: '2026-02-10' });
      expect(nextRunDate(after(ending, 2))).to.equal(null);
      expect(nextRunDate(ending, '2026-02-10')).to.equal(null);
    });

    it('failed occurrences do not count toward max_occurrences', () => {
      const twice = schedule({ frequency: 'monthly', start_date: '2026-01-10', max_occurrences: 2 });
      // 01-10 generated, 02-10 failed: 03-10 still runs, then it is over.
      const s = after(after(twice, 1), 0, 1);
      expect(nextRunDate(s)).to.equal('2026-03-10');
      expect(upcomingRunDates(s, 5)).to.deep.equal(['2026-03-10']);
    });
  });

  describe('pause, resume, re-anchoring', () => {
    const monthly = schedule({ frequency: 'monthly', start_date: '2026-01-10' });

    it('pause skips: resume continues from the next lattice date on or after today', () => {
      // Paused after 01-10; resumed on 2026-04-02: 02-10 and 03-10 are skipped.
      expect(firstOccurrenceOnOrAfter(after(monthly, 1), '2026-04-02')).to.deep.equal({ seq: 3, run_date: '2026-04-10' });
      expect(firstOccurrenceOnOrAfter(after(monthly, 1), '2026-04-10')).to.deep.equal({ seq: 3, run_date: '2026-04-10' });
    });

    it('the same skip over a long freeze (archived organization) lands exactly', () => {
      const weekly = schedule({ frequency: 'weekly', start_date: '2026-01-07' });
      expect(firstOccurrenceOnOrAfter(weekly, '2031-06-01')?.run_date).to.equal('2031-06-04');
      expect(firstOccurrenceOnOrAfter(monthly, '2039-12-11')?.run_date).to.equal('2040-01-10');
    });

    it('resume with next_run_date re-anchors: that date and its day become the rule', () => {
      const paused = after(monthly, 1);
      const resumed = reanchor(paused, dayRuleFrom('monthly', '2026-05-20'), 1, '2026-05-20');
      expect(upcomingRunDates(resumed, 3)).to.deep.equal(['2026-05-20', '2026-06-20', '2026-07-20']);
      expect(resumed.day_of_month).to.equal(20);
      const weekly = reanchor(schedule({ frequency: 'weekly', start_date: '2026-01-07' }), dayRuleFrom('weekly', '2026-02-07'), 1, '2026-02-07');
      expect(weekly.day_of_week).to.equal(6);
      expect(upcomingRunDates(weekly, 2)).to.deep.equal(['2026-02-07', '2026-02-14']);
    });

    it('a frequency change re-anchors at the current next run date', () => {
      const s = after(monthly, 2); // next 2026-03-10
      const weekly = reanchor(s, dayRuleFrom('weekly', '2026-03-10'), 1, '2026-03-10');
      expect(upcomingRunDates(weekly, 3)).to.deep.equal(['2026-03-10', '2026-03-17', '2026-03-24']);
      const quarterly = reanchor(s, dayRuleFrom('quarterly', '2026-03-10'), 2, '2026-03-10');
      expect(upcomingRunDates(quarterly, 2)).to.deep.equal(['2026-03-10', '2026-09-10']);
    });

    it('max_occurrences still counts the invoices before the re-anchoring', () => {
      const s = after(schedule({ frequency: 'monthly', start_date: '2026-01-10', max_occurrences: 3 }), 2);
      expect(upcomingRunDates(reanchor(s, dayRuleFrom('weekly', '2026-03-10'), 1, '2026-03-10'), 5)).to.deep.equal(['2026-03-10']);
    });
  });

  describe('"today" in Africa/Casablanca', () => {
    it('23:30 UTC outside Ramadan (UTC+1) is already the next day', () => {
      expect(businessToday(new Date('2026-06-01T23:30:00.000Z'))).to.equal('2026-06-02');
    });

    it('23:30 UTC during Ramadan (UTC+0) is still the same day', () => {
      expect(businessToday(new Date('2026-03-01T23:30:00.000Z'))).to.equal('2026-03-01');
    });

    it('a schedule created at 23:30 UTC on 2026-06-01 starting "today" runs on 06-02', () => {
      const today = businessToday(new Date('2026-06-01T23:30:00.000Z'));
      expect(nextRunDate(schedule({ frequency: 'monthly', start_date: today }))).to.equal('2026-06-02');
    });
  });
});

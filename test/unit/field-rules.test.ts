import { expect } from 'chai';
import { charCount, FieldErrors, isCalendarDate, normalizeDatetime, readText } from '../../src/commands/field-rules.ts';

describe('field rules', () => {
  const dates: [unknown, boolean][] = [
    ['2026-03-01', true], ['2024-02-29', true], ['2000-02-29', true], ['2026-12-31', true],
    ['2026-02-29', false], ['1900-02-29', false], ['2026-04-31', false], ['2026-13-01', false], ['2026-00-10', false],
    ['2026-1-01', false], ['2026-03-01T00:00:00Z', false], ['', false], [20260301, false], [null, false],
  ];
  for (const [value, ok] of dates) {
    it(`isCalendarDate(${JSON.stringify(value)}) is ${ok}`, () => expect(isCalendarDate(value)).to.equal(ok));
  }

  const datetimes: [unknown, string | null][] = [
    ['2026-03-02T09:30:00Z', '2026-03-02T09:30:00.000Z'],
    ['2026-03-02T09:30:00.5+01:00', '2026-03-02T08:30:00.500Z'],
    ['2026-03-02T09:30Z', '2026-03-02T09:30:00.000Z'],
    ['2026-03-02T09:30:00', null], // no offset: ambiguous
    ['2026-02-30T09:30:00Z', null],
    ['2026-03-02T25:00:00Z', null],
    ['2026-03-02', null],
    [1700000000000, null],
    ['0000-06-01T00:00:00Z', null], // PostgreSQL has no year 0: the projector could not store it
    ['0001-01-01T00:30:00+01:00', null], // year 0 in UTC
    ['0001-01-01T00:00:00Z', '0001-01-01T00:00:00.000Z'],
    ['9999-12-31T23:30:00-01:00', null], // year 10000 in UTC
  ];
  for (const [value, expected] of datetimes) {
    it(`normalizeDatetime(${JSON.stringify(value)}) -> ${expected}`, () => expect(normalizeDatetime(value)).to.equal(expected));
  }

  it('readText trims, turns blank optional text into null, counts characters not UTF-16 units', () => {
    const errors = new FieldErrors();
    expect(readText(errors, 'a', '  x  ', { max: 5 })).to.equal('x');
    expect(readText(errors, 'b', '   ', { max: 5 })).to.equal(null);
    expect(readText(errors, 'c', ' keep\n', { max: 10, keepWhitespace: true })).to.equal(' keep\n');
    expect(readText(errors, 'd', '😀😀', { max: 2 })).to.equal('😀😀');
    expect(charCount('😀😀')).to.equal(2);
    expect(errors.isEmpty).to.equal(true);
    readText(errors, 'e', undefined, { required: true, max: 5 });
    readText(errors, 'f', '  ', { required: true, max: 5 });
    readText(errors, 'g', 7, { max: 5 });
    readText(errors, 'h', 'toolong', { max: 5 });
    // Nothing a reader would see is empty too: a zero-width space, a direction mark, a BOM.
    readText(errors, 'i', '\u200b', { required: true, max: 5 });
    readText(errors, 'j', ' \u200f\ufeff ', { required: true, max: 5 });
    expect(errors.fields).to.deep.equal([
      { field: 'e', message: 'is required' },
      { field: 'f', message: 'must not be empty' },
      { field: 'g', message: 'must be a string' },
      { field: 'h', message: 'must be at most 5 characters' },
      { field: 'i', message: 'must not be empty' },
      { field: 'j', message: 'must not be empty' },
    ]);
    expect(readText(new FieldErrors(), 'k', '\u200fنص', { max: 5 })).to.equal('\u200fنص');
  });
});

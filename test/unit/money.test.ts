import { expect } from 'chai';
import {
  canonicalDecimal,
  Decimal,
  formatAmount,
  isSupportedCurrency,
  minorUnits,
  parseQuantity,
  parseTaxRate,
  parseUnitPrice,
  zeroAmount,
  type Parsed,
} from '../../src/shared/money.ts';

/** "ok:<canonical>" or "err:<message>", so tables read in one line. */
function show(parsed: Parsed): string {
  return parsed.ok ? `ok:${canonicalDecimal(parsed.value)}` : `err:${parsed.message}`;
}

describe('money', () => {
  describe('minorUnits', () => {
    const table: [string, number][] = [
      ['MAD', 2], ['EUR', 2], ['USD', 2], ['JPY', 0], ['KRW', 0], ['KWD', 3], ['BHD', 3], ['TND', 3],
    ];
    for (const [currency, units] of table) {
      it(`${currency} has ${units} minor units`, () => expect(minorUnits(currency)).to.equal(units));
    }

    for (const bad of ['mad', 'QQQ', 'EURO', '', 'M4D']) {
      it(`rejects ${JSON.stringify(bad)}`, () => {
        expect(isSupportedCurrency(bad)).to.equal(false);
        expect(() => minorUnits(bad)).to.throw(RangeError);
      });
    }

    it('rejects non-strings', () => {
      expect(isSupportedCurrency(42)).to.equal(false);
      expect(isSupportedCurrency(null)).to.equal(false);
    });
  });

  describe('formatAmount', () => {
    const table: [string, string, string][] = [
      ['1.005', 'MAD', '1.01'],
      ['0.125', 'MAD', '0.13'], // half up, not half even
      ['1200', 'MAD', '1200.00'],
      ['1200', 'JPY', '1200'],
      ['2.5', 'JPY', '3'],
      ['1.2345', 'KWD', '1.235'],
      ['1.234', 'BHD', '1.234'],
      ['-0.001', 'MAD', '0.00'], // no "-0.00"
      ['1000000000000000000', 'MAD', '1000000000000000000.00'],
    ];
    for (const [amount, currency, expected] of table) {
      it(`${amount} ${currency} -> ${expected}`, () => expect(formatAmount(amount, currency)).to.equal(expected));
    }

    it('zeroAmount follows the minor units', () => {
      expect([zeroAmount('MAD'), zeroAmount('JPY'), zeroAmount('TND')]).to.deep.equal(['0.00', '0', '0.000']);
    });
  });

  describe('canonicalDecimal', () => {
    const table: [string, string][] = [
      ['3', '3'], ['3.000', '3'], ['0.335', '0.335'], ['20.00', '20'], ['5.50', '5.5'], ['-0', '0'],
      ['1e21', '1000000000000000000000'], ['0.0001', '0.0001'],
    ];
    for (const [input, expected] of table) {
      it(`${input} -> ${expected}`, () => expect(canonicalDecimal(new Decimal(input))).to.equal(expected));
    }
  });

  describe('parseQuantity', () => {
    const table: [unknown, string][] = [
      [3, 'ok:3'],
      [0.335, 'ok:0.335'], // via String(n), never through float math
      ['0.335', 'ok:0.335'],
      ['  2.50 ', 'ok:2.5'],
      [1.2345, 'ok:1.2345'],
      [1e3, 'ok:1000'],
      [1000000000, 'ok:1000000000'],
      [1000000000.0001, 'err:must be at most 1000000000'],
      [0, 'err:must be greater than 0'],
      ['0.0000', 'err:must be greater than 0'],
      [-1, 'err:must be greater than 0'],
      [1.23456, 'err:must have at most 4 decimal places'],
      [0.1 + 0.2, 'err:must have at most 4 decimal places'],
      [1e-7, 'err:must have at most 4 decimal places'],
      ['abc', 'err:must be a number'],
      ['1e3', 'err:must be a number'],
      ['', 'err:must be a number'],
      ['1.', 'err:must be a number'],
      [null, 'err:must be a number'],
      [undefined, 'err:must be a number'],
      [true, 'err:must be a number'],
      [Number.NaN, 'err:must be a finite number'],
    ];
    for (const [input, expected] of table) {
      it(`${String(input)} (${typeof input}) -> ${expected}`, () => expect(show(parseQuantity(input))).to.equal(expected));
    }
  });

  describe('parseUnitPrice', () => {
    const table: [unknown, string][] = [
      [0, 'ok:0'],
      ['-0', 'ok:0'],
      [19.99, 'ok:19.99'],
      ['0.0005', 'ok:0.0005'],
      [-0.01, 'err:must be greater than or equal to 0'],
      ['12.34567', 'err:must have at most 4 decimal places'],
      [{}, 'err:must be a number'],
    ];
    for (const [input, expected] of table) {
      it(`${String(input)} -> ${expected}`, () => expect(show(parseUnitPrice(input))).to.equal(expected));
    }
  });

  describe('parseTaxRate', () => {
    const table: [unknown, string][] = [
      [undefined, 'ok:20'],
      [null, 'ok:20'],
      [0, 'ok:0'],
      [5.5, 'ok:5.5'],
      ['7', 'ok:7'],
      [100, 'ok:100'],
      [100.01, 'err:must be at most 100'],
      [-1, 'err:must be greater than or equal to 0'],
      [5.555, 'err:must have at most 2 decimal places'],
      ['twenty', 'err:must be a number'],
    ];
    for (const [input, expected] of table) {
      it(`${String(input)} -> ${expected}`, () => expect(show(parseTaxRate(input))).to.equal(expected));
    }
  });
});

import { expect } from 'chai';
import { formatDate, formatMoney, formatQuantity, formatRate } from '../../src/documents/locale.ts';

const NBSP = '\u00a0';

describe('documents: amounts as each locale writes them', () => {
  const rows: [string, string, string, string, string][] = [
    // amount, currency, fr, en, ar
    ['1200', 'MAD', `1${NBSP}200,00`, '1,200.00', `1${NBSP}200,00`],
    ['0', 'MAD', '0,00', '0.00', '0,00'],
    ['999.995', 'MAD', `1${NBSP}000,00`, '1,000.00', `1${NBSP}000,00`],
    ['1234567.8', 'MAD', `1${NBSP}234${NBSP}567,80`, '1,234,567.80', `1${NBSP}234${NBSP}567,80`],
    ['1200', 'JPY', `1${NBSP}200`, '1,200', `1${NBSP}200`],
    ['1.2345', 'KWD', '1,235', '1.235', '1,235'],
    ['100', 'MAD', '100,00', '100.00', '100,00'],
  ];
  for (const [amount, currency, fr, en, ar] of rows) {
    it(`${amount} ${currency}`, () => {
      expect(formatMoney(amount, currency, 'fr')).to.equal(fr);
      expect(formatMoney(amount, currency, 'en')).to.equal(en);
      expect(formatMoney(amount, currency, 'ar')).to.equal(ar);
    });
  }

  it('never emits Intl\'s invisible marks or Arabic-Indic digits', () => {
    for (const locale of ['fr', 'en', 'ar'] as const) {
      expect(formatMoney('-98765432.1', 'MAD', locale)).to.match(/^-[0-9,.\u00a0]+$/);
    }
  });

  it('quantities keep every decimal; rates and dates', () => {
    expect(formatQuantity('1234.5678', 'fr')).to.equal(`1${NBSP}234,5678`);
    expect(formatQuantity('2.5000', 'en')).to.equal('2.5');
    expect(formatRate('5.5', 'fr')).to.equal(`5,5${NBSP}%`);
    expect(formatRate('20', 'en')).to.equal('20%');
    expect(formatDate('2026-11-23', 'fr')).to.equal('23/11/2026');
    expect(formatDate('2026-01-05', 'en')).to.equal('5 Jan 2026');
  });
});

/**
 * Total in words: every form below was written by hand from the rules in
 * docs/documents.md (French traditional spelling; Arabic dual, plural,
 * accusative and construct agreement with dirham and centime), not copied
 * from the code's output.
 */
import { expect } from 'chai';
import { amountInWords, totalSentence } from '../../src/documents/words/index.ts';

type Row = [amount: string, fr: string, en: string, ar: string];

const MAD: Row[] = [
  ['0', 'zéro dirham', 'zero dirhams', 'صفر درهم'],
  ['1', 'un dirham', 'one dirham', 'درهم واحد'],
  ['2', 'deux dirhams', 'two dirhams', 'درهمان'],
  ['3', 'trois dirhams', 'three dirhams', 'ثلاثة دراهم'],
  ['10', 'dix dirhams', 'ten dirhams', 'عشرة دراهم'],
  ['11', 'onze dirhams', 'eleven dirhams', 'أحد عشر درهمًا'],
  ['12', 'douze dirhams', 'twelve dirhams', 'اثنا عشر درهمًا'],
  ['17', 'dix-sept dirhams', 'seventeen dirhams', 'سبعة عشر درهمًا'],
  ['21', 'vingt et un dirhams', 'twenty-one dirhams', 'واحد وعشرون درهمًا'],
  ['22', 'vingt-deux dirhams', 'twenty-two dirhams', 'اثنان وعشرون درهمًا'],
  ['71', 'soixante et onze dirhams', 'seventy-one dirhams', 'واحد وسبعون درهمًا'],
  ['77', 'soixante-dix-sept dirhams', 'seventy-seven dirhams', 'سبعة وسبعون درهمًا'],
  ['80', 'quatre-vingts dirhams', 'eighty dirhams', 'ثمانون درهمًا'],
  ['81', 'quatre-vingt-un dirhams', 'eighty-one dirhams', 'واحد وثمانون درهمًا'],
  ['91', 'quatre-vingt-onze dirhams', 'ninety-one dirhams', 'واحد وتسعون درهمًا'],
  ['100', 'cent dirhams', 'one hundred dirhams', 'مائة درهم'],
  ['101', 'cent un dirhams', 'one hundred one dirhams', 'مائة درهم ودرهم'],
  ['102', 'cent deux dirhams', 'one hundred two dirhams', 'مائة درهم ودرهمان'],
  ['103', 'cent trois dirhams', 'one hundred three dirhams', 'مائة وثلاثة دراهم'],
  ['111', 'cent onze dirhams', 'one hundred eleven dirhams', 'مائة وأحد عشر درهمًا'],
  ['200', 'deux cents dirhams', 'two hundred dirhams', 'مائتا درهم'],
  ['250', 'deux cent cinquante dirhams', 'two hundred fifty dirhams', 'مائتان وخمسون درهمًا'],
  ['1000', 'mille dirhams', 'one thousand dirhams', 'ألف درهم'],
  ['1001', 'mille un dirhams', 'one thousand one dirhams', 'ألف درهم ودرهم'],
  ['1200', 'mille deux cents dirhams', 'one thousand two hundred dirhams', 'ألف ومائتا درهم'],
  ['2000', 'deux mille dirhams', 'two thousand dirhams', 'ألفا درهم'],
  ['2500', 'deux mille cinq cents dirhams', 'two thousand five hundred dirhams', 'ألفان وخمسمائة درهم'],
  ['3000', 'trois mille dirhams', 'three thousand dirhams', 'ثلاثة آلاف درهم'],
  ['11000', 'onze mille dirhams', 'eleven thousand dirhams', 'أحد عشر ألف درهم'],
  ['11500', 'onze mille cinq cents dirhams', 'eleven thousand five hundred dirhams', 'أحد عشر ألفًا وخمسمائة درهم'],
  ['80000', 'quatre-vingt mille dirhams', 'eighty thousand dirhams', 'ثمانون ألف درهم'],
  ['101000', 'cent un mille dirhams', 'one hundred one thousand dirhams', 'مائة ألف وألف درهم'],
  ['200000', 'deux cent mille dirhams', 'two hundred thousand dirhams', 'مائتا ألف درهم'],
  ['1000000', 'un million de dirhams', 'one million dirhams', 'مليون درهم'],
  ['1200000', 'un million deux cent mille dirhams', 'one million two hundred thousand dirhams', 'مليون ومائتا ألف درهم'],
  ['2000000', 'deux millions de dirhams', 'two million dirhams', 'مليونا درهم'],
  ['3000000', 'trois millions de dirhams', 'three million dirhams', 'ثلاثة ملايين درهم'],
  ['80000000', 'quatre-vingts millions de dirhams', 'eighty million dirhams', 'ثمانون مليون درهم'],
  ['1000000000', 'un milliard de dirhams', 'one billion dirhams', 'مليار درهم'],
  ['0.01', 'un centime', 'one centime', 'سنتيم واحد'],
  ['0.02', 'deux centimes', 'two centimes', 'سنتيمان'],
  ['0.03', 'trois centimes', 'three centimes', 'ثلاثة سنتيمات'],
  ['0.11', 'onze centimes', 'eleven centimes', 'أحد عشر سنتيمًا'],
  ['1.01', 'un dirham et un centime', 'one dirham and one centime', 'درهم واحد وسنتيم واحد'],
  ['2.02', 'deux dirhams et deux centimes', 'two dirhams and two centimes', 'درهمان وسنتيمان'],
  ['3.03', 'trois dirhams et trois centimes', 'three dirhams and three centimes', 'ثلاثة دراهم وثلاثة سنتيمات'],
  ['11.11', 'onze dirhams et onze centimes', 'eleven dirhams and eleven centimes', 'أحد عشر درهمًا وأحد عشر سنتيمًا'],
  ['1200.50', 'mille deux cents dirhams et cinquante centimes', 'one thousand two hundred dirhams and fifty centimes', 'ألف ومائتا درهم وخمسون سنتيمًا'],
  ['1000000.21', 'un million de dirhams et vingt et un centimes', 'one million dirhams and twenty-one centimes', 'مليون درهم وواحد وعشرون سنتيمًا'],
];

describe('documents: total in words', () => {
  for (const [amount, fr, en, ar] of MAD) {
    it(`${amount} MAD`, () => {
      expect(amountInWords(amount, 'MAD', 'fr'), 'fr').to.equal(fr);
      expect(amountInWords(amount, 'MAD', 'en'), 'en').to.equal(en);
      expect(amountInWords(amount, 'MAD', 'ar'), 'ar').to.equal(ar);
    });
  }

  it('takes the totals code\'s string as is: "1200.5" is 1,200 dirhams and 50 centimes, never refloated', () => {
    expect(amountInWords('1200.5', 'MAD', 'fr')).to.equal('mille deux cents dirhams et cinquante centimes');
    expect(amountInWords('999999999999999999.99', 'MAD', 'en')).to.match(/^nine hundred ninety-nine quadrillion .* ninety-nine centimes$/);
  });

  it('other currencies: euro in three languages, elision "d\'euros", ISO code with a fraction for the rest', () => {
    expect(amountInWords('2000000', 'EUR', 'fr')).to.equal("deux millions d'euros");
    expect(amountInWords('21.01', 'EUR', 'en')).to.equal('twenty-one euros and one cent');
    expect(amountInWords('3', 'EUR', 'ar')).to.equal('ثلاثة يورو');
    expect(amountInWords('1200.235', 'KWD', 'fr')).to.equal('mille deux cents KWD et 235/1000');
    expect(amountInWords('1200', 'JPY', 'en')).to.equal('one thousand two hundred JPY');
  });

  it('closing sentences', () => {
    expect(totalSentence('1200.00', 'MAD', 'fr')).to.equal('Arrêtée la présente facture à la somme de mille deux cents dirhams toutes taxes comprises.');
    expect(totalSentence('1.00', 'MAD', 'en')).to.equal('This invoice is closed at the sum of one dirham, all taxes included.');
    expect(totalSentence('2.00', 'MAD', 'ar')).to.equal('أوقفت هذه الفاتورة على مبلغ قدره درهمان مع احتساب جميع الرسوم.');
  });
});

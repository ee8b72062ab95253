import { expect } from 'chai';
import pg from 'pg';
import { sqlLiteral } from '../../src/eventstore/sql-literal.ts';

describe('sqlLiteral', () => {
  it('writes every string exactly as pg.escapeLiteral does', () => {
    const samples = ['', 'plain', "l'invoice", "''", '\\', 'a\\b', "it's a \\ path", '{"a":"b\\"c"}', 'Arabic: فاتورة', 'emoji 🧾', '\n\t\r', "E'x'", ' '];
    // And random strings over the characters that matter.
    const alphabet = ["'", '\\', '"', 'a', 'é', ' ', '\n', '€', 'ف'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let i = 0; i < 500; i++) samples.push(Array.from({ length: next() % 40 }, () => alphabet[next() % alphabet.length]).join(''));
    for (const s of samples) expect(sqlLiteral(s), JSON.stringify(s)).to.equal(pg.escapeLiteral(s));
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { counted, grouped } from '../../src/cli/counts.js';

describe("the CLI's counts", () => {
  it('group thousands as toLocaleString("en") does, without loading its formatter', () => {
    const numbers = [
      0,
      7,
      999,
      1_000,
      1_200,
      65_536,
      999_999,
      1_000_000,
      1_234_567_890,
      10 ** 12,
      -1_200,
      -7,
      2.5,
    ];
    for (const n of numbers) assert.equal(grouped(n), n.toLocaleString('en'), String(n));
  });

  it('name the noun by the count', () => {
    assert.equal(counted(1, 'row', 'rows'), '1 row');
    assert.equal(counted(0, 'row', 'rows'), '0 rows');
    assert.equal(counted(1_200, 'row', 'rows'), '1,200 rows');
  });
});

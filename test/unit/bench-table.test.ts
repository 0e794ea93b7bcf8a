import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { markRow, replaceBenchRows } from '../../bench/table.js';

const PAGE = [
  '| Benchmark | openvat | Baseline | Ratio |',
  '|---|---|---|---|',
  '| a old | 1 | 2 | 0.5× <!-- bench:a --> |',
  '| b old 1 | 1 | 2 | 0.5× <!-- bench:b --> |',
  '| b old 2 | 1 | 2 | 0.5× <!-- bench:b --> |',
  '| c old | 1 | 2 | 0.5× <!-- bench:c --> |',
  '',
  'Text.',
].join('\n');

describe("the results table's benchmark rows", () => {
  it('a row is marked at the end of its last cell', () => {
    assert.equal(markRow('| x | y |  ', 'rates'), '| x | y <!-- bench:rates --> |');
    assert.throws(() => markRow('x | y', 'rates'), /not a table row/);
  });

  it("replaces one benchmark's rows in place, with any number of new rows, and leaves the others", () => {
    const page = replaceBenchRows(PAGE, 'b', '| b new | 3 | 4 | 0.75× |\n');
    assert.deepEqual(page.split('\n').slice(2, 5), [
      '| a old | 1 | 2 | 0.5× <!-- bench:a --> |',
      '| b new | 3 | 4 | 0.75× <!-- bench:b --> |',
      '| c old | 1 | 2 | 0.5× <!-- bench:c --> |',
    ]);
    const two = replaceBenchRows(PAGE, 'a', '| a 1 | 1 | 1 | 1 |\n| a 2 | 2 | 2 | 2 |');
    assert.equal(two.split('\n').length, PAGE.split('\n').length + 1);
    assert.match(two, /\| a 2 \| 2 \| 2 \| 2 <!-- bench:a --> \|\n\| b old 1/);
  });

  it('adds a benchmark without rows yet at the end of the table', () => {
    const page = replaceBenchRows(PAGE, 'd', '| d | 1 | 1 | 1 |');
    assert.deepEqual(page.split('\n').slice(5, 8), [
      '| c old | 1 | 2 | 0.5× <!-- bench:c --> |',
      '| d | 1 | 1 | 1 <!-- bench:d --> |',
      '',
    ]);
  });

  it('refuses rows of one benchmark that are not one run', () => {
    const split = PAGE.replace(
      '| c old | 1 | 2 | 0.5× <!-- bench:c --> |',
      '| a again | 1 | 2 | 0.5× <!-- bench:a --> |',
    );
    assert.throws(() => replaceBenchRows(split, 'a', '| a | 1 | 1 | 1 |'), /not one run/);
  });
});

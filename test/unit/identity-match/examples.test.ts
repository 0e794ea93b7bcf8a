import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type IdentityField,
  matchIdentity,
  parseAddress,
} from '../../../src/modules/identity-match/index.js';
import { documentedRows } from '../../fixtures/identity-match-examples.js';

/** The documented examples: the rows of docs/validation.md's tables, kept in the fixture. */
const table = documentedRows;

/** A table cell's text: `\n` written as in the page stands for a line break. */
const text = (cell: string) => cell.replace(/\\n/g, '\n');

describe('the documented identity-match examples', () => {
  const rows = table('identity-match examples');

  it('cover every field, with matches and mismatches', () => {
    assert.ok(rows.length >= 40, `${rows.length} examples`);
    for (const field of ['name', 'street', 'postcode', 'city']) {
      const results = rows.filter((row) => row[0] === field).map((row) => row[4]);
      assert.ok(results.includes('match') && results.includes('mismatch'), field);
    }
  });

  for (const [field, claimed, registered, score, result, why] of rows) {
    it(`${field}: ${claimed} against ${registered} (${why})`, () => {
      const key = field as IdentityField;
      const match = matchIdentity({ [key]: claimed }, { [key]: registered });
      assert.deepEqual(match?.[key], { result, score: Number(score), registry_result: null });
      assert.deepEqual(match?.overall, { result, score: Number(score), registry_result: null });
    });
  }
});

describe('the documented VIES addresses', () => {
  const rows = table('identity-match addresses');

  it('list the recorded layouts', () => {
    assert.ok(rows.length >= 8, `${rows.length} addresses`);
  });

  for (const [country = '', address = '', street, postcode, town, source] of rows) {
    it(`${country}: ${address} (${source})`, () => {
      const parts = parseAddress(text(address), country);
      assert.deepEqual(
        { street: parts.street, postcode: parts.postcode, city: parts.city },
        { street: street || null, postcode: postcode || null, city: town || null },
      );
    });
  }
});

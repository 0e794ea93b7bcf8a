import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createIdGenerator } from '../../src/lib/ids.js';
import { isUuidV7 } from '../helpers/app.js';

/** The 48-bit millisecond timestamp of a UUID v7. */
function msOf(id: string): number {
  return Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

describe('UUID v7 generator', () => {
  it('makes RFC 9562 version 7 ids carrying the clock time', () => {
    const at = Date.parse('2026-11-22T10:00:00.123Z');
    const ids = createIdGenerator(() => at);
    for (let i = 0; i < 1_000; i++) {
      const id = ids.uuid();
      assert.ok(isUuidV7(id), id);
      assert.equal(msOf(id), at);
    }
  });

  it('encodes timestamps across the whole 48-bit range', () => {
    for (const at of [0, 1, 0xff_ffff, 0x100_0000, 0x1234_5678_9abc, 2 ** 40 + 0xff_ffff, 2 ** 48 - 2]) {
      const id = createIdGenerator(() => at).uuid();
      assert.ok(isUuidV7(id), id);
      assert.equal(msOf(id), at, `${at.toString(16)} in ${id}`);
    }
  });

  it('keeps ids unique and in creation order within one millisecond', () => {
    const ids = createIdGenerator(() => 1_700_000_000_000);
    const made = Array.from({ length: 3_000 }, () => ids.uuid());
    assert.equal(new Set(made).size, made.length);
    for (let i = 1; i < made.length; i++) assert.ok(made[i - 1]! < made[i]!, `${made[i - 1]} < ${made[i]}`);
  });

  it('moves to the next millisecond when the counter of one millisecond runs out', () => {
    const ids = createIdGenerator(() => 1_700_000_000_000);
    const made = Array.from({ length: 5_000 }, () => ids.uuid());
    assert.ok(msOf(made.at(-1)!) > 1_700_000_000_000);
    assert.ok(msOf(made.at(-1)!) <= 1_700_000_000_003);
  });

  it('stays in order when the clock steps back', () => {
    let now = 1_700_000_000_500;
    const ids = createIdGenerator(() => now);
    const before = ids.uuid();
    now -= 400;
    const after = ids.uuid();
    assert.ok(before < after);
    assert.equal(msOf(after), 1_700_000_000_500);
  });

  it('uses fresh random bits in every id', () => {
    const ids = createIdGenerator(() => 1_700_000_000_000);
    const tails = new Set(Array.from({ length: 2_000 }, () => ids.uuid().slice(19)));
    assert.equal(tails.size, 2_000);
  });
});

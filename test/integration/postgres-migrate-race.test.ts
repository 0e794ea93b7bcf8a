import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import pg from 'pg';
import { createDatabase } from '../../src/db/database.js';
import { databaseTargets } from '../helpers/db.js';

const postgres = (await databaseTargets()).find((target) => target.name === 'postgres');

/**
 * The migrator finds its tables by introspecting every schema of the database; another schema
 * dropped meanwhile (another application's, a parallel run's) made that fail with "schema … does
 * not exist" and the service refuse to start.
 */
describe('migrating while other schemas are dropped', {
  skip: postgres?.skip ?? 'no PostgreSQL target',
}, () => {
  it('migrates every time', async () => {
    const url = process.env.TEST_DATABASE_URL as string;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const tag = randomBytes(3).toString('hex');
    let churning = true;
    // Many small schemas, created and dropped without pause, so drops land inside introspections.
    const churn = (async () => {
      for (let i = 0; churning; i++) {
        const names = Array.from({ length: 100 }, (_, j) => `churn_${tag}_${i}_${j}`);
        await admin.query(
          names
            .map(
              (n) =>
                `CREATE SCHEMA ${n}; CREATE TABLE ${n}.t (id serial primary key, a int, b int, c int, d int, e int, f int, g int)`,
            )
            .join(';'),
        );
        await admin.query(names.map((n) => `DROP SCHEMA ${n} CASCADE`).join(';'));
      }
    })();
    const failures: string[] = [];
    try {
      for (let round = 0; round < 10; round++) {
        const schema = `race_${tag}_${round}`;
        const db = createDatabase(url, { schema, poolSize: 2 });
        try {
          await db.migrate();
        } catch (error) {
          failures.push((error as Error).message);
        } finally {
          await db.close();
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        }
      }
    } finally {
      churning = false;
      await churn;
      await admin.end();
    }
    assert.deepEqual(failures, []);
  });
});

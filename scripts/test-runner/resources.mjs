// What a test run makes on the shared PostgreSQL and Redis servers, found and dropped by name.
//
// Every name carries the run's id (OPENVAT_TEST_RUN, set by scripts/run-tests.mjs) and the test
// process's pid, so that a run finds its own leftovers and never touches another run's:
//   Redis keys                 openvat-test:<run>:<pid>:…
//   PostgreSQL schemas (in the TEST_DATABASE_URL database) and databases
//                              t_<run>_<pid>_…
//   the run's template database t_<run>_template (made once, copied for every test database)
// test/helpers/resources.ts makes the names; a test process drops what is left of its own when it
// exits (cleanup.mjs), and the runner drops what is left of the run at its end, and fails the run if
// there was any: something was left that the process's own clean-up did not drop.
import pg from 'pg';

/** The name of the run's template database. */
export function templateName(run) {
  return `t_${run}_template`;
}

/** `t_<run>_` or `t_<run>_<pid>_` as a LIKE pattern (`_` escaped). */
function pgPattern(run, pid) {
  const prefix = pid === undefined ? `t_${run}_` : `t_${run}_${pid}_`;
  return `${prefix.replaceAll('_', '\\_')}%`;
}

function redisPattern(run, pid) {
  return pid === undefined ? `openvat-test:${run}:*` : `openvat-test:${run}:${pid}:*`;
}

async function dropRedisKeys(redisUrl, pattern) {
  const { Redis } = await import('ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    let dropped = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) dropped += await redis.unlink(...keys);
    } while (cursor !== '0');
    return dropped;
  } finally {
    redis.disconnect();
  }
}

async function dropPostgres(databaseUrl, pattern, keep) {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2_000 });
  await client.connect();
  try {
    await client.query(`SET lock_timeout = '10s'`);
    const schemas = (
      await client.query('SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE $1 ORDER BY 1', [
        pattern,
      ])
    ).rows.map((r) => r.name);
    for (const name of schemas) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
    const databases = (
      await client.query('SELECT datname AS name FROM pg_database WHERE datname LIKE $1 ORDER BY 1', [
        pattern,
      ])
    ).rows
      .map((r) => r.name)
      .filter((name) => name !== keep);
    // WITH (FORCE): a server process that a test killed may still hold a connection for a moment.
    for (const name of databases) {
      // A template database is dropped once it is an ordinary one again.
      await client.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE false`);
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
    return { schemas, databases };
  } finally {
    await client.end().catch(() => {});
  }
}

function usable(url) {
  return typeof url === 'string' && url !== '' && url !== 'off';
}

/**
 * Drops the run's (or, with `pid`, one test process's) schemas, databases and Redis keys; the
 * template database too with `template: true`. Resolves to what was dropped, the template left out.
 */
export async function dropLeftovers({ run, pid, databaseUrl, redisUrl, template = false }) {
  const found = { schemas: [], databases: [], keys: 0, errors: [] };
  if (usable(databaseUrl)) {
    try {
      const { schemas, databases } = await dropPostgres(databaseUrl, pgPattern(run, pid), templateName(run));
      found.schemas = schemas;
      found.databases = databases;
      if (template) await dropPostgres(databaseUrl, templateName(run).replaceAll('_', '\\_'), null);
    } catch (error) {
      found.errors.push(`PostgreSQL: ${error.message}`);
    }
  }
  if (usable(redisUrl)) {
    try {
      found.keys = await dropRedisKeys(redisUrl, redisPattern(run, pid));
    } catch (error) {
      found.errors.push(`Redis: ${error.message}`);
    }
  }
  return found;
}

/** One line per kind of leftover, none when nothing was left. */
export function describeLeftovers(found) {
  const lines = [];
  if (found.schemas.length > 0)
    lines.push(`${found.schemas.length} PostgreSQL schema(s): ${found.schemas.join(', ')}`);
  if (found.databases.length > 0)
    lines.push(`${found.databases.length} PostgreSQL database(s): ${found.databases.join(', ')}`);
  if (found.keys > 0) lines.push(`${found.keys} Redis key(s) openvat-test:…`);
  return lines;
}

import type { Container } from './types.js';

/** The keys a first start made, to be shown once: an admin key (unless one exists) and a test key. */
export interface FirstStartKeys {
  admin: string | null;
  test: string;
}

/** The account the first start's test key is in. */
export const FIRST_START_ACCOUNT = 'Default';

/**
 * On a database without API keys, creates the first start's keys and returns them; null when it has
 * keys. Instances starting together on one empty database ask in turn (`Db.exclusively`): the first
 * creates the keys, the others find them and create none.
 */
export async function createFirstStartKeys(
  container: Pick<Container, 'db' | 'keys' | 'admin'>,
): Promise<FirstStartKeys | null> {
  const { db, keys, admin } = container;
  return db.exclusively('first-start-keys', async (trx) => {
    if ((await keys.countKeys(trx)) > 0) return null;
    const adminKey =
      (await admin.countKeys(trx)) === 0 ? await admin.createKey('first-run', 'admin', undefined, trx) : null;
    const testKey = await keys.createKey(
      { plan: 'business', mode: 'test', accountName: FIRST_START_ACCOUNT },
      trx,
    );
    return { admin: adminKey?.key ?? null, test: testKey.key };
  });
}

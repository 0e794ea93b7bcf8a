import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** Sizes of the durable queues, for the metrics. */
export function createMetricsRepository(db: Kysely<Database>) {
  return {
    async pending(): Promise<{ batchItems: number; webhookDeliveries: number }> {
      const [batch, webhooks] = await Promise.all([
        db
          .selectFrom('batch_items')
          .select((eb) => eb.fn.countAll<string | number>().as('n'))
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('webhook_deliveries')
          .select((eb) => eb.fn.countAll<string | number>().as('n'))
          .where('status', '=', 'pending')
          .executeTakeFirstOrThrow(),
      ]);
      return { batchItems: Number(batch.n), webhookDeliveries: Number(webhooks.n) };
    },
  };
}

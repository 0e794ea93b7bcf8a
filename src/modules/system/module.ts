import type { Db } from '../../db/database.js';
import { defineModule } from '../../http/module.js';
import { type ConfirmationsService, evidenceSummary } from '../confirmations/index.js';
import { systemRoutes } from './routes.js';

/** What the health and readiness routes need from the container. */
export interface SystemSlice {
  readonly db: Pick<Db, 'ping'>;
  readonly config: { readonly evidenceKey: string | null };
  readonly status: { warnings(): string[] };
  readonly confirmations: Pick<ConfirmationsService, 'checkEvidence' | 'evidenceProblem'>;
}

export const systemModule = defineModule({
  name: 'system',
  surface: 'public',
  routes: (c: SystemSlice) =>
    systemRoutes({
      db: c.db,
      warnings: () => c.status.warnings(),
      ...(c.config.evidenceKey ? { evidence: () => evidenceCheck(c) } : {}),
    }),
});

/** Null when the evidence chain head verifies; otherwise why confirmations are stopped. */
async function evidenceCheck(c: SystemSlice): Promise<{ message: string } | null> {
  const problem = await c.confirmations.checkEvidence().catch(() => c.confirmations.evidenceProblem());
  return problem ? { message: evidenceSummary(problem) } : null;
}

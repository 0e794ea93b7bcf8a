import { hostname, userInfo } from 'node:os';
import type { Actor } from '../modules/admin/service.js';

/** The actor id of writes made by the CLI on the database (an admin key's id is a UUID too). */
export const CLI_ACTOR_ID = '00000000-0000-0000-0000-000000000000';

/** The operator behind the CLI on this machine, as the audit log names them: `cli (user@host)`. */
export function cliActor(): Actor {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no user name (a container's numeric user): the host alone
  }
  return {
    id: CLI_ACTOR_ID,
    name: `cli (${user}@${hostname()})`,
    role: 'admin',
    requestId: null,
    address: null,
  };
}

/** What other modules may use of `admin`; everything else in the folder is its own. */

export { adminRoleOf } from './auth.js';
export type { AdminPrincipal, AdminRole } from './service.js';

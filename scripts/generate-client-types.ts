// Writes clients/typescript/src/openapi.ts from the running service's description (see client-types.ts).
import { writeFileSync } from 'node:fs';
import { CLIENT_TYPES_PATH, clientTypes } from './client-types.js';

writeFileSync(CLIENT_TYPES_PATH, await clientTypes());
console.log(`wrote ${CLIENT_TYPES_PATH}`);

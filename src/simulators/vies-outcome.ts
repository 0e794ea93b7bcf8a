import type { SimTrader, SimTraderMatch } from './vies-approx.js';

/**
 * What the VIES simulator makes of one check, before it is written as REST JSON (vies.ts) or as a
 * SOAP envelope (vies-soap.ts): no answer at all, the service down, one of VIES's error codes, or an
 * answer with the member state's verdicts on the trader fields.
 */
export type CheckOutcome =
  | { kind: 'hang' }
  | { kind: 'service_down' }
  | { kind: 'error'; code: string }
  | {
      kind: 'answer';
      countryCode: string;
      vatNumber: string;
      valid: boolean;
      name: string;
      address: string;
      requestIdentifier: string;
      requestDate: Date;
      trader: SimTrader;
      /** The member state's verdicts on the trader fields (all `NOT_PROCESSED` when none was sent). */
      traderMatch: SimTraderMatch;
    };

/**
 * Swiss UID register (BFS) simulator: SOAP 1.1 on `POST /V5.0/PublicServices.svc` with the
 * operations `ValidateVatNumber` (→ `ValidateVatNumberResult` boolean) and `GetByUID`
 * (→ organisation, UID register status and VAT register status; element layout approximated from
 * client code, not from the official schema). The `SOAPAction` header must name the operation
 * (`http://www.uid.admin.ch/xmlns/uid-wse/IPublicServices/<Operation>`).
 *
 * Rules: a number that is not `CHE` + 9 digits (optionally formatted, with MWST/TVA/IVA suffix)
 * answers a `businessFault` `Data_validation_failed`; a wrong MOD 11 check digit answers `false`;
 * otherwise registered by the shared rule on `CH:<9 digits>`. Faults are WCF-style `s:Fault`
 * with `detail/<kind>Fault/{operation,error,errorDetail}`, HTTP 500 unless `errorStatus` says
 * otherwise; the concurrency limit and the rate window (`{rateLimit: {limit: 20}}` for the real
 * 20 per minute) answer `Request_limit_exceeded`; `down: ['CH']` or `serviceDown` answer an HTML 503.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  type ControlledSimulator,
  createControls,
  hangForever,
  type RegistrySimulatorOptions,
  SERVICE_UNAVAILABLE_HTML,
  send,
  simulatedCompany,
} from './controls.js';

export type BfsSimulatorOptions = RegistrySimulatorOptions;

export type BfsSimulator = ControlledSimulator;

const NS = 'http://www.uid.admin.ch/xmlns/uid-wse';
const SHARED_NS = 'http://www.uid.admin.ch/xmlns/uid-wse-shared/2';
const XML = 'text/xml; charset=utf-8';

const parser = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  trimValues: true,
});

/** Swiss UID MOD 11 check digit over the first 8 digits (weights 5 4 3 2 7 6 5 4); `null` when 10. */
export function swissCheckDigit(first8: string): number | null {
  const weights = [5, 4, 3, 2, 7, 6, 5, 4];
  let sum = 0;
  for (let i = 0; i < 8; i++) sum += Number(first8[i]) * (weights[i] ?? 0);
  const check = (11 - (sum % 11)) % 11;
  return check === 10 ? null : check;
}

/** What `ValidateVatNumber` answers for 9 UID digits (controls aside). */
export function bfsRegistered(digits: string): boolean {
  if (!/^\d{9}$/.test(digits)) return false;
  if (swissCheckDigit(digits.slice(0, 8)) !== Number(digits[8])) return false;
  return simulatedCompany('CH', digits).registered;
}

function parseUid(value: string): string | null {
  const match = /^\s*CHE[-\s]?(\d{3})\.?(\d{3})\.?(\d{3})(?:\s*(MWST|TVA|IVA))?\s*$/i.exec(value);
  return match ? `${match[1]}${match[2]}${match[3]}` : null;
}

export function bfsFaultXml(
  kind: string,
  operation: string,
  error: string,
  detail: string,
  faultcode = 's:Client',
) {
  return (
    '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault>' +
    `<faultcode>${faultcode}</faultcode><faultstring xml:lang="de-CH">${error}</faultstring>` +
    `<detail><${kind} xmlns="${SHARED_NS}" xmlns:i="http://www.w3.org/2001/XMLSchema-instance">` +
    `<operation>${operation}</operation><error>${error}</error><errorDetail>${detail}</errorDetail></${kind}>` +
    '</detail></s:Fault></s:Body></s:Envelope>'
  );
}

function envelope(inner: string): string {
  return `<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>${inner}</s:Body></s:Envelope>`;
}

export function createBfsSimulator(options: BfsSimulatorOptions = {}): BfsSimulator {
  const now = options.now ?? (() => new Date());
  const controls = createControls({
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    now: () => now().getTime(),
  });

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    body: Buffer,
  ): Promise<void> {
    const route = new URL(path, 'http://sim').pathname.replace(/\/+$/, '');
    if (route !== '/V5.0/PublicServices.svc')
      return send(res, 404, 'text/html', '<html><body>Not Found</body></html>');
    if (req.method !== 'POST') {
      return send(res, 200, 'text/html', '<html><body>PublicServices Service (simulated)</body></html>');
    }
    const faultStatus = () => controls.settings.errorStatus ?? 500;
    const action = String(req.headers.soapaction ?? '')
      .replace(/"/g, '')
      .trim();
    const operation = action.startsWith(`${NS}/IPublicServices/`)
      ? action.slice(`${NS}/IPublicServices/`.length)
      : '';
    if (operation !== 'ValidateVatNumber' && operation !== 'GetByUID') {
      return send(
        res,
        500,
        XML,
        envelope(
          '<s:Fault><faultcode xmlns:a="http://schemas.microsoft.com/ws/2005/05/addressing/none">a:ActionNotSupported</faultcode>' +
            `<faultstring xml:lang="en-US">The message with Action '${action}' cannot be processed at the receiver, due to a ContractFilter mismatch at the EndpointDispatcher.</faultstring></s:Fault>`,
        ),
      );
    }
    const text = body.toString('utf8');
    if (XMLValidator.validate(text) !== true) {
      return send(res, 400, 'text/html', '<html><body>Bad Request</body></html>');
    }
    const parsed = parser.parse(text) as Record<string, unknown>;
    const soapBody = ((parsed.Envelope as Record<string, unknown> | undefined)?.Body ?? {}) as Record<
      string,
      unknown
    >;
    const request = (soapBody[operation] ?? {}) as Record<string, unknown>;

    const admission = controls.admit('CH');
    if (admission.kind === 'hang') return hangForever(req, res);
    if (admission.kind === 'service_down') {
      controls.recordError('CH', 'HTTP_503');
      return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
    }
    const fault = (kind: string, error: string, detail: string) => {
      controls.recordError('CH', error);
      send(res, faultStatus(), XML, bfsFaultXml(kind, operation, error, detail));
    };
    if (admission.kind !== 'admitted') {
      return fault(
        'infrastructureFault',
        'Request_limit_exceeded',
        'Too many requests, please try again later.',
      );
    }
    try {
      await controls.delay('CH');
      if (controls.isDown('CH')) {
        controls.recordError('CH', 'HTTP_503');
        return send(res, 503, 'text/html', SERVICE_UNAVAILABLE_HTML);
      }
      const injected = controls.injectedError('CH');
      if (injected) return fault('infrastructureFault', injected, 'Injected by the simulator.');
      let digits: string | null;
      if (operation === 'ValidateVatNumber') {
        digits = typeof request.vatNumber === 'string' ? parseUid(request.vatNumber) : null;
      } else {
        const uid = (request.uid ?? {}) as Record<string, unknown>;
        const id = typeof uid.uidOrganisationId === 'string' ? uid.uidOrganisationId : '';
        digits = uid.uidOrganisationIdCategorie === 'CHE' && /^\d{9}$/.test(id) ? id : null;
      }
      if (digits === null) return fault('businessFault', 'Data_validation_failed', 'The UID is not valid.');
      if (operation === 'ValidateVatNumber') {
        return send(
          res,
          200,
          XML,
          envelope(
            `<ValidateVatNumberResponse xmlns="${NS}"><ValidateVatNumberResult>${bfsRegistered(digits)}</ValidateVatNumberResult></ValidateVatNumberResponse>`,
          ),
        );
      }
      const company = simulatedCompany('CH', digits);
      const registered = bfsRegistered(digits);
      const organisation =
        '<organisation><organisationIdentification>' +
        `<uid><uidOrganisationIdCategorie>CHE</uidOrganisationIdCategorie><uidOrganisationId>${digits}</uidOrganisationId></uid>` +
        `<organisationName>${company.name}</organisationName><legalForm>0106</legalForm></organisationIdentification>` +
        `<address><street>${company.street.replace(/ \d+$/, '')}</street><houseNumber>${company.street.replace(/^.* /, '')}</houseNumber>` +
        `<town>${company.town}</town><swissZipCode>${company.postcode}</swissZipCode><countryIdISO2>CH</countryIdISO2></address>` +
        '</organisation>' +
        `<uidregInformation><uidregStatusEnterpriseDetail>${registered ? 3 : 4}</uidregStatusEnterpriseDetail></uidregInformation>` +
        `<vatRegisterInformation><vatStatus>${registered ? 2 : 3}</vatStatus><vatEntryStatus>1</vatEntryStatus></vatRegisterInformation>`;
      send(
        res,
        200,
        XML,
        envelope(
          `<GetByUIDResponse xmlns="${NS}"><GetByUIDResult><organisationType>${organisation}</organisationType></GetByUIDResult></GetByUIDResponse>`,
        ),
      );
    } finally {
      admission.release();
    }
  }

  return {
    prefix: '/bfs',
    handle,
    control: (command) => ({ ...controls.apply(command) }),
    stats: () => ({ ...controls.stats() }),
    controls,
  };
}

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../http/api-error.js';
import { latencyMs, msSince } from '../../http/meta.js';
import { refusalError } from '../../http/refusals.js';
import { Envelope, errorResponses, Nullable } from '../../http/schemas.js';
import type { FastPath } from '../../http/server.js';
import { checkDate, dateProblem } from '../../lib/dates.js';
import type { IdGenerator } from '../../lib/ids.js';
import { rateLimitHeaders, type WindowLimiter } from '../../lib/window-limiter.js';
import { type Playground, playgroundBudgetHeaders, playgroundLimited } from '../keys/index.js';
import { vatRatesOfOneCountryDescription } from './schemas.js';
import type { RatesAnswer, RatesService } from './service.js';

export const CountryRate = Type.Object(
  {
    country_code: Type.String({ description: 'ISO 3166-1 alpha-2, lower case (`xi` for Northern Ireland).' }),
    country_name: Type.String(),
    country_name_local: Type.String({ description: 'Name in the official local language.' }),
    currency: Type.String({ description: 'ISO 4217 code used for invoicing.' }),
    is_eu_member: Type.Boolean({ description: 'True for the 27 member states and XI.' }),
    supports_live_validation: Type.Boolean(),
    standard_rate: Type.Number({ description: 'Percentage: 19 means 19%.' }),
    reduced_rates: Type.Array(Type.Number(), { description: 'Ascending; empty if none.' }),
    super_reduced_rate: Nullable(Type.Number()),
    parking_rate: Nullable(Type.Number()),
    vat_name: Type.String(),
    vat_abbr: Type.String(),
    vat_number_format: Type.String(),
    vat_number_regex: Type.String(),
    registration_threshold: Nullable(
      Type.Object({
        domestic: Nullable(
          Type.Number({
            description:
              'Turnover above which a seller based in the country must register, in `currency`; null when VAT is due from the first sale or no threshold is tracked.',
          }),
        ),
        distance_selling: Nullable(
          Type.Number({
            description: 'EU-wide OSS cross-border B2C threshold in EUR (10000); null outside the EU.',
          }),
        ),
        currency: Type.String({ description: 'ISO 4217 currency of `domestic`.' }),
        non_resident: Nullable(
          Type.Object({
            amount: Type.Number({
              description:
                'Threshold amount; 0 when a seller established abroad must register from the first sale.',
            }),
            currency: Type.String({
              description: 'ISO 4217 currency of `amount`, as the country publishes it.',
            }),
          }),
          {
            description:
              'Sales to consumers in the country above which a seller established abroad must register to charge its VAT/GST on digital services; null when not tracked.',
          },
        ),
      }),
    ),
    updated_at: Type.String({ format: 'date' }),
    regions: Type.Array(
      Type.Object({
        code: Type.String({ description: 'ISO 3166-2 subdivision code, lower case, e.g. `ca-on`.' }),
        name: Type.String(),
        vat_name: Type.String(),
        vat_abbr: Type.String(),
        standard_rate: Type.Number({
          description:
            'The rate charged there instead of the country-wide `standard_rate` (for a Canadian HST province, the harmonized rate, federal part included).',
        }),
        from: Type.String({ format: 'date', description: 'First day of this rate.' }),
      }),
      {
        description:
          'Regions with their own rate in force that day (Canada: the HST provinces); empty for most countries.',
      },
    ),
  },
  { $id: 'CountryRate', title: 'CountryRate' },
);

const RatesMeta = {
  data_version: Type.String({ format: 'date', description: 'Version (date) of the rates dataset.' }),
  cached: Type.Boolean({ description: 'Always true: rates are loaded in-process.' }),
};

const CountryParams = Type.Object({
  country: Type.String({ description: 'Two letters, e.g. `de` or `DE`.' }),
});

const DateQuery = Type.Object(
  {
    date: Type.Optional(
      Type.String({ description: 'Answer with the rates in force on this day (YYYY-MM-DD); default today.' }),
    ),
  },
  { additionalProperties: false },
);

function checkDateParam(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const check = checkDate(value);
  if (!check.ok) throw errors.invalidRequest(dateProblem('date', check));
  return value;
}

const CACHE_CONTROL = 'public, max-age=3600';
const JSON_TYPE = 'application/json; charset=utf-8';

/** The body of a rates answer: the pre-serialised data and the request's own meta. */
function bodyWriter() {
  const head = '{"data":';
  const middle = ',"meta":{"request_id":"';
  const tail = (version: string) => `","data_version":"${version}","cached":true,"latency_ms":`;
  const end = '}}';
  // The version is a date, YYYY-MM-DD: ten ASCII bytes.
  const fixedBytes = Buffer.byteLength(head + middle + tail('YYYY-MM-DD') + end);
  /** The list's `meta.count`, ASCII: `,"count":44`. */
  const count = (answer: RatesAnswer) => (answer.count === undefined ? '' : `,"count":${answer.count}`);
  return {
    text: (answer: RatesAnswer, requestId: string, latency: string) =>
      head + answer.json + middle + requestId + tail(answer.version) + latency + count(answer) + end,
    /** The text's length in bytes, from its parts: the request's own parts are ASCII. */
    bytes: (answer: RatesAnswer, requestId: string, latency: string) =>
      fixedBytes + answer.bytes + requestId.length + latency.length + count(answer).length,
  };
}

const FAST_URL = /^\/v1\/rates\/([A-Za-z]{2})$/;

/**
 * `GET /v1/rates/{country}` for today, answered before the framework routes the request. It is the
 * hottest answer of the service and the cheapest: the framework's request and reply objects and hook
 * chain cost more than the answer itself. The fast path takes only requests whose answer is a plain
 * 200 — exact path, no query, no `If-None-Match`, a known country, within the per-IP limit — and
 * leaves every other case (HEAD, 304, 400, 404, 429, shutdown, a request with a key) to the route below, which is the
 * contract and answers the same request with the same bytes. Its requests are not logged, so it is
 * only used when request logging is off.
 */
export function ratesFastPath(deps: {
  rates: RatesService;
  limiter: WindowLimiter;
  ids: IdGenerator;
  closing(): boolean;
  /** The request's client address, as `request.ip` has it (behind trusted proxies, the forwarded one). */
  clientAddress(request: IncomingMessage): string;
}): FastPath {
  const { rates, limiter, ids, closing, clientAddress } = deps;
  const body = bodyWriter();
  return (request: IncomingMessage, response: ServerResponse) => {
    const startedAt = performance.now();
    const url = request.url;
    const headers = request.headers;
    if (
      request.method !== 'GET' ||
      url?.length !== 12 ||
      headers['if-none-match'] !== undefined ||
      headers.authorization !== undefined
    ) {
      return false;
    }
    const match = FAST_URL.exec(url);
    if (match === null || closing()) return false;
    const found = rates.country(match[1] as string);
    // Counted only once the answer is known to be ours; over the limit, the route counts it and answers 429.
    if (found.kind !== 'ok' || limiter.take(clientAddress(request)) !== 0) return false;
    const id = ids.uuid();
    const latency = String(msSince(startedAt));
    response.writeHead(200, {
      'service-request-id': id,
      'x-request-id': id,
      etag: found.answer.etag,
      'cache-control': CACHE_CONTROL,
      'content-type': JSON_TYPE,
      'content-length': body.bytes(found.answer, id, latency),
    });
    response.end(body.text(found.answer, id, latency));
    return true;
  };
}

/**
 * The public rates endpoints. Their per-IP limit is a synchronous in-process window counter rather
 * than `@fastify/rate-limit`: these are the hottest, cheapest answers of the service, and the
 * plugin's asynchronous hook cost them about a third of their throughput. The limit is generous and
 * the data public, so the `x-ratelimit-*` headers are sent only once it is reached (a request made
 * with the playground's demo key gets them always, for that key's budget).
 */
export function ratesRoutes(deps: {
  rates: RatesService;
  limiter: WindowLimiter;
  playground?: Playground | null;
}) {
  const { rates, limiter } = deps;
  const playground = deps.playground ?? null;

  function refuse(reply: FastifyReply, max: number, wait: number): void {
    reply.headers(rateLimitHeaders(max, 0, wait));
  }

  /**
   * Answers within the request's budget: the public per-IP one, counted here, or, for a request
   * made with the playground's demo key, the demo key's hourly one, which may be counted in Redis
   * (and which every answer to the demo key describes in its `x-ratelimit-*` headers).
   */
  function limited(
    request: FastifyRequest,
    reply: FastifyReply,
    answer: () => FastifyReply,
  ): FastifyReply | Promise<FastifyReply> {
    const demo = playground?.isPlaygroundHeader(request.headers.authorization) ? playground : null;
    if (demo) {
      return demo.take(request.ip).then((budget) => {
        reply.headers(playgroundBudgetHeaders(budget));
        if (budget.wait === 0) return answer();
        throw playgroundLimited(budget);
      });
    }
    const wait = limiter.take(request.ip);
    if (wait === 0) return answer();
    refuse(reply, limiter.max, wait);
    throw errors.rateLimited(wait);
  }

  const body = bodyWriter();

  function send(request: FastifyRequest, reply: FastifyReply, answer: RatesAnswer) {
    reply.header('etag', answer.etag).header('cache-control', CACHE_CONTROL);
    const inm = request.headers['if-none-match'];
    if (inm && (inm === answer.etag || inm === '*' || inm.split(/\s*,\s*/).includes(answer.etag))) {
      return reply.code(304).send();
    }
    return reply.type(JSON_TYPE).send(body.text(answer, request.id, String(latencyMs(reply))));
  }

  function one(
    { country }: Static<typeof CountryParams>,
    { date }: Static<typeof DateQuery>,
    request: FastifyRequest,
    reply: FastifyReply,
  ): FastifyReply {
    if (!/^[A-Za-z]{2}$/.test(country)) {
      throw errors.invalidRequest('country must be a two-letter ISO 3166-1 alpha-2 code, e.g. "de".');
    }
    const day = checkDateParam(date);
    const found = rates.country(country, day);
    if (found.kind === 'refused') throw refusalError(found);
    return send(request, reply, found.answer);
  }

  return async function register(fastify: FastifyInstance) {
    // Handlers get their request parts typed from the route's TypeBox schemas.
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/v1/rates',
      {
        schema: {
          tags: ['Rates'],
          summary: 'VAT rates of every country',
          description:
            'Public: no key needed. Rates in force today, or on `date`. Conditional requests with `If-None-Match` get 304.',
          querystring: DateQuery,
          response: {
            200: Envelope(Type.Array(Type.Ref('CountryRate')), {
              ...RatesMeta,
              count: Type.Integer({ minimum: 0, description: 'Number of countries in `data`.' }),
            }),
            304: Type.Null({ description: 'Not modified.' }),
            ...errorResponses,
          },
        },
      },
      (request, reply) =>
        limited(request, reply, () => {
          const { date } = request.query;
          return send(request, reply, rates.list(checkDateParam(date)));
        }),
    );

    app.get(
      '/v1/rates/:country',
      {
        schema: {
          tags: ['Rates'],
          summary: 'VAT rates of one country',
          description: vatRatesOfOneCountryDescription,
          params: CountryParams,
          querystring: DateQuery,
          response: {
            200: Envelope(Type.Ref('CountryRate'), RatesMeta),
            304: Type.Null({ description: 'Not modified.' }),
            ...errorResponses,
          },
        },
      },
      (request, reply) => limited(request, reply, () => one(request.params, request.query, request, reply)),
    );
  };
}

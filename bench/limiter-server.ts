// A Fastify server with one small JSON route, limited per IP in one of three ways (LIMITER):
// `none`, `window` (the synchronous in-process counter of src/lib/window-limiter.ts, as the public
// rates route uses it) or `rate-limit` (@fastify/rate-limit with its memory store). The limit is
// never reached: the benchmark measures what counting costs. Started by bench/choices.ts.
import rateLimit from '@fastify/rate-limit';
import Fastify from 'fastify';
import { systemClock } from '../src/lib/clock.js';
import { createWindowLimiter } from '../src/lib/window-limiter.js';

const mode = process.env.LIMITER ?? 'none';
const max = 1_000_000_000;
const app = Fastify({ logger: false });
if (mode === 'rate-limit') await app.register(rateLimit, { max, timeWindow: 60_000 });
const limiter = createWindowLimiter({ max, windowMs: 60_000, clock: systemClock });
const body = { data: { country: 'DE', standard_rate: 19 }, meta: { request_id: 'x' } };

app.get('/health', async () => ({ ok: true }));
app.get('/x', (request, reply) => {
  if (mode === 'window' && limiter.take(request.ip) > 0) return reply.code(429).send({});
  return reply.send(body);
});
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });

// A webhook receiver on Fastify. Run from the repository root (after npm ci): OPENVAT_WEBHOOK_SECRET=whsec_… npx tsx clients/typescript/examples/fastify.ts
import { verifyWebhook, WebhookVerificationError } from '@openvat/client';
import Fastify from 'fastify';

const secret = process.env.OPENVAT_WEBHOOK_SECRET ?? ''; // the whsec_… returned when the endpoint was registered
const app = Fastify();

app.register(async (hooks) => {
  // In this plugin only, JSON bodies stay raw bytes: the signature covers them exactly as sent.
  hooks.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) =>
    done(null, body),
  );
  hooks.post('/openvat/webhooks', async (request, reply) => {
    try {
      const event = await verifyWebhook(request.body as Buffer, request.headers, secret);
      if (event.event === 'batch.completed') {
        console.log(event.event, event.data.meta.request_id, event.data.data.summary);
      } else {
        console.log(event.event, event.data.meta.request_id);
      }
      return reply.code(204).send();
    } catch (error) {
      if (error instanceof WebhookVerificationError) return reply.code(400).send(error.reason);
      throw error;
    }
  });
});

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on ${address}`);

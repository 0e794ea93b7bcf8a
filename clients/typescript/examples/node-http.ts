// A webhook receiver on Node's own http module. Run from the repository root (after npm ci): OPENVAT_WEBHOOK_SECRET=whsec_… npx tsx clients/typescript/examples/node-http.ts
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, WebhookVerificationError } from '@openvat/client';

const secret = process.env.OPENVAT_WEBHOOK_SECRET ?? ''; // the whsec_… returned when the endpoint was registered

const server = createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    // The raw bytes, before any JSON parsing: re-serialised JSON would not match the signature.
    const event = await verifyWebhook(Buffer.concat(chunks), req.headers, secret);
    if (event.event === 'validation.completed') {
      console.log(event.event, event.data.meta.request_id, event.data.data.vat_number, event.data.data.valid);
    } else {
      console.log(event.event, event.data.meta.request_id);
    }
    res.writeHead(204).end();
  } catch (error) {
    if (!(error instanceof WebhookVerificationError)) throw error;
    res.writeHead(400).end(error.reason);
  }
});

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

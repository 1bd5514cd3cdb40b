/**
 * The floor of `bench:webhooks`: mailgate's own HTTP stack (the server's app factory with the push
 * routes) and the same `raw` webhook endpoint, signature check included, built through the
 * registry, in front of an intake that answers at once and stores nothing. What the durable path
 * costs beyond this is storing (parse, commit, fsync).
 *
 *   node dist/bench/support/push-floor.js <hmac_secret>
 * Listens on 127.0.0.1 port 0 and prints `floor listening on <url>`; stops on SIGTERM.
 */
import { KINDS, createAdapter } from '../../adapters/index.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics.js';
import type { Intake } from '../../src/pipeline/types.js';
import { buildApp } from '../../src/server/app.js';
import type { ServerDeps } from '../../src/server/deps.js';

const secret = process.argv[2];
if (secret === undefined) throw new Error('usage: push-floor.js <hmac_secret>');

let next = 0;
/** Every message "stored" at once under a new id. */
const sink: Intake = {
  accept: async (batch) => batch.map(() => ({ id: String((next += 1)), duplicate: false })),
  checkpoint: async () => undefined,
  item: async () => undefined,
};

const logger = createLogger(false);
const entry = (await KINDS.webhooks.schema()).parse({ name: 'raw-in', provider: 'raw', route: 'hooks', hmac_secret: secret });
const adapter = await createAdapter('webhooks', entry, { logger, maxMessageBytes: 50 * 1024 * 1024 });
void adapter.start(sink, new AbortController().signal);
const unused = async (): Promise<never> => {
  throw new Error('not served by the floor');
};
const deps: ServerDeps = {
  ready: async () => ({ ok: true, checks: {} }),
  status: async () => ({ store: {}, routes: [], adapters: [] }),
  push: { endpoints: adapter.endpoints?.() ?? [] },
  deadLetters: { list: unused, get: unused, replay: unused, purge: unused },
  previewItem: unused,
  preview: unused,
  threads: unused,
  metrics: createMetrics(),
  logger,
};
const app = buildApp({ api_keys: [] }, deps);
await app.listen({ host: '127.0.0.1', port: 0 });
const address = app.server.address();
if (address === null || typeof address === 'string') throw new Error('the floor has no TCP address');
process.stdout.write(`floor listening on http://127.0.0.1:${address.port}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));

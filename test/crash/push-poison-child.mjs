// `mailgate serve` as the push poison test needs it: a raw webhook and an SMTP listener on one
// route, the built-in emulator as the API, a SQLite store in DIR, one parse worker with its test
// hooks on (a message starting `X-Mailgate-Internal-Test-Hook: hang` holds the process in its
// parse until the test kills it). Prints `{"url": …, "smtp": port}` once both listen.
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

const [dist, dir, secret] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const { loadConfig } = await load('src/config/load.js');
const { createLogger } = await load('src/logger.js');
const { startService } = await load('src/service/index.js');

const config = loadConfig({
  overrides: {
    store: `sqlite:${join(dir, 'mailgate.db')}`,
    server: { listen: '127.0.0.1:0' },
    routes: [{ name: 'support', source: 'acme/support' }],
    parsing: { workers: 1, timeout_ms: 600000 },
    adapters: {
      webhooks: [{ name: 'raw-in', provider: 'raw', route: 'support', hmac_secret: secret }],
      smtp: [{ name: 'mx', route: 'support', listen: '127.0.0.1:0', recipients: [{ match: '*' }] }],
    },
  },
});
const logger = createLogger({ level: 'warn', destination: process.stderr });
const service = await startService(config, { logger, parseTestHooks: true });
const smtp = service.adapters.find((e) => e.kind === 'smtp');
for (let i = 0; smtp.adapter.health()[0]?.state !== 'listening'; i++) {
  if (i > 600) throw new Error('the SMTP listener never started');
  await sleep(50);
}
const port = Number(String(smtp.adapter.health()[0].detail.address).split(':').pop());
process.stdout.write(`${JSON.stringify({ url: service.url, smtp: port })}\n`);
process.on('SIGTERM', () => void service.stop().then(() => process.exit(0)));

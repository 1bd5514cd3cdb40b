// A process that reads a folder of .eml files into intake (as `mailgate import` does) with the
// parse workers' test hooks on, then prints the outbox counts, the dead letters (with their raw
// bytes) and the parse attempts left in the store, and exits 0. The poison test kills it while a
// message that hangs its parse worker is being parsed, and starts it again; and runs it over
// messages that kill their parse worker. Optional 4th argument: `parsing.poison_after`.
import { join } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const [dist, store, inbox, poisonAfter] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(join(dist, p)).href);
const { loadConfig } = await load('src/config/load.js');
const { createLogger } = await load('src/logger.js');
const { createRuntime } = await load('src/runtime/index.js');

const config = loadConfig({
  overrides: {
    store,
    routes: [{ name: 'support', source: 'acme/support' }],
    // A hanging parse stays until the test kills the process (not the time budget).
    parsing: { workers: 1, timeout_ms: 600000, ...(poisonAfter === undefined ? {} : { poison_after: Number(poisonAfter) }) },
    adapters: { files: [{ name: 'drop', route: 'support', paths: [inbox] }] },
  },
});
const rt = await createRuntime({ config, logger: createLogger(false), dryRun: true, parseTestHooks: true });
try {
  await rt.runAdapters(new globalThis.AbortController().signal);
  const counts = await rt.store.outboxCounts();
  const listed = await rt.store.listDeadLetters({ limit: 100 });
  const dead = [];
  for (const d of listed) {
    const detail = await rt.store.getDeadLetter(d.id);
    dead.push({ code: d.error.code, message: d.error.message, key: d.key, raw: detail?.raw?.toString('latin1') });
  }
  const keys = listed.map((d) => d.key);
  const attempts = Object.fromEntries(await rt.store.parseAttempts('support', keys));
  process.stdout.write(`${JSON.stringify({ counts, dead, attempts })}\n`);
} finally {
  await rt.close();
}

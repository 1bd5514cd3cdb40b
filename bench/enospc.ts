/**
 * A real full disk (ENOSPC), not a simulated one: `mailgate serve` with its SQLite store on a
 * small tmpfs that `scripts/enospc.sh` mounts (as root). Signed webhooks and SMTP messages are
 * pushed until the file system is full; the figures: how many were accepted, how the refused ones
 * were answered (503 with Retry-After, 451), what /readyz said, whether the log reported it; then
 * the tmpfs is grown (`mount -o remount,size=…`, by this script through the callback given) and
 * every refused message is sent again: how long until the service takes mail again, and that
 * everything acknowledged is delivered once and billed once.
 *
 *   node dist/bench/enospc.js DIR GROW_COMMAND…      (run by scripts/enospc.sh)
 */
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simulator } from '../adapters/index.js';
import { buildEmulatorApp } from '../src/emulator/app.js';
import { FaultPlan } from '../src/emulator/faults.js';
import { resolveOptions } from '../src/emulator/options.js';
import { EmulatorState } from '../src/emulator/state.js';
import { SmtpSender } from './support/smtp-sender.js';

const CLI = fileURLToPath(new URL('../cli/mailgate.js', import.meta.url));
const GROW = process.argv.slice(3);
if (process.argv[2] === undefined || GROW.length === 0) throw new Error('usage: node dist/bench/enospc.js DIR GROW_COMMAND…');
const DIR: string = process.argv[2];
const SECRET = randomBytes(24).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const freeMiB = () => {
  const s = statfsSync(DIR);
  return (s.bavail * s.bsize) / 1024 / 1024;
};

function message(tag: string): Buffer {
  return Buffer.from(
    `From: a@example.com\r\nTo: support@acme.example\r\nSubject: full ${tag}\r\nMessage-ID: <${tag}@enospc.example>\r\n` +
      `Date: Mon, 02 Mar 2026 10:00:00 +0000\r\n\r\n${`filler for ${tag} `.repeat(1500)}\r\n`,
  );
}

async function main(): Promise<void> {
  const token = randomBytes(8).toString('hex');
  const state = new EmulatorState();
  const stored = new Set<string>();
  let units = 0;
  const commit = state.commit.bind(state);
  state.commit = (op) => {
    commit(op);
    if (op.op === 'comments') {
      units += op.units;
      for (const c of op.comments) stored.add(c.id);
    }
  };
  const emu = buildEmulatorApp(state, resolveOptions({ token, autoCreateSources: true, logger: false }), new FaultPlan([]));
  const emuUrl = new URL(await emu.listen({ port: 0, host: '127.0.0.1' })).origin;
  const smtpPort = 20_000 + Math.floor(Math.random() * 20_000);
  const config = join(DIR, 'mailgate.yaml');
  writeFileSync(
    config,
    [
      `store: sqlite:${join(DIR, 'mailgate.db')}`,
      `api: { url: ${emuUrl}, token: "${token}" }`,
      'server: { listen: 127.0.0.1:0 }',
      'log_format: json',
      'routes: [{ name: mail, source: full/inbox }]',
      'adapters:',
      `  webhooks: [{ name: raw-in, provider: raw, route: mail, hmac_secret: ${SECRET} }]`,
      `  smtp: [{ name: mx, route: mail, listen: 127.0.0.1:${smtpPort}, recipients: [{ match: "*" }] }]`,
      '',
    ].join('\n'),
  );
  const child = spawn(process.execPath, [CLI, 'serve', '--config', config], { cwd: DIR, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (b: Buffer) => (log += b.toString()));
  child.stderr.on('data', (b: Buffer) => (log += b.toString()));
  let url = '';
  while (url === '') {
    url = /serving on (http:\/\/\S+)/.exec(log)?.[1] ?? '';
    if (child.exitCode !== null) throw new Error(log);
    await sleep(50);
  }
  const { simulator: sim } = await simulator();
  const hook = sim.entryFromSecrets('raw', { hmacSecret: SECRET }, url);
  const smtp = new SmtpSender(smtpPort);
  const hexId = (tag: string) => Buffer.from(`<${tag}@enospc.example>`).toString('hex');
  const acknowledged = new Set<string>();
  const refused: Array<{ tag: string; kind: 'webhook' | 'smtp' }> = [];
  const answers: Record<string, number> = {};
  const push = async (tag: string, kind: 'webhook' | 'smtp'): Promise<boolean> => {
    let ok: boolean;
    if (kind === 'webhook') {
      const req = sim.request(hook, message(tag), { url: '/webhooks/raw-in', now: Date.now() });
      const res = await fetch(`${url}/webhooks/raw-in`, { method: 'POST', headers: req.headers, body: new Uint8Array(req.body) });
      await res.arrayBuffer();
      const key = `webhook ${res.status}${res.headers.get('retry-after') === null ? '' : ' with Retry-After'}`;
      answers[key] = (answers[key] ?? 0) + 1;
      ok = res.ok;
    } else {
      ok = await smtp.send(message(tag));
      const key = `smtp ${ok ? 250 : 'refused (451)'}`;
      answers[key] = (answers[key] ?? 0) + 1;
    }
    if (ok) acknowledged.add(hexId(tag));
    return ok;
  };
  console.log(
    `tmpfs ${DIR}: ${freeMiB().toFixed(1)} MiB free at start; load average ${execFileSync('cat', ['/proc/loadavg']).toString().trim()}`,
  );
  const t0 = performance.now();
  let n = 0;
  let firstRefusalAt: number | undefined;
  // Push until 20 in a row are refused.
  for (let streak = 0; streak < 20 && n < 20_000; n++) {
    const kind = n % 3 === 2 ? 'smtp' : 'webhook';
    const tag = `m${n}`;
    if (await push(tag, kind)) streak = 0;
    else {
      firstRefusalAt ??= performance.now() - t0;
      streak += 1;
      refused.push({ tag, kind });
    }
  }
  const ready = await fetch(`${url}/readyz`);
  const readyBody = await ready.text();
  await sleep(1500);
  const fullLogged = /"code":"MAILGATE_ERR_STORE_FULL"/.test(log);
  console.log(
    `full: ${acknowledged.size} messages acknowledged of ${n} pushed; first refusal after ${((firstRefusalAt ?? 0) / 1000).toFixed(1)} s; ` +
      `${refused.length} refused; free now ${freeMiB().toFixed(2)} MiB`,
  );
  console.log(`answers: ${JSON.stringify(answers)}`);
  console.log(`/readyz while full: ${ready.status} ${readyBody}`);
  console.log(`log has MAILGATE_ERR_STORE_FULL: ${fullLogged}; service still running: ${child.exitCode === null}`);

  execFileSync(GROW[0]!, GROW.slice(1));
  const grownAt = performance.now();
  console.log(`grown: ${freeMiB().toFixed(1)} MiB free`);
  let resumedAfter: number | undefined;
  for (const r of refused) {
    for (let attempt = 0; attempt < 60; attempt++) {
      if (await push(r.tag, r.kind)) {
        resumedAfter ??= performance.now() - grownAt;
        break;
      }
      await sleep(500);
    }
  }
  const until = performance.now() + 120_000;
  while ([...acknowledged].some((id) => !stored.has(id)) && performance.now() < until) await sleep(500);
  // The store clears its full state when the failed write succeeds again; the watcher logs within a second.
  await sleep(1500);
  const readyAfter = (await fetch(`${url}/readyz`)).status;
  const lost = [...acknowledged].filter((id) => !stored.has(id)).length;
  console.log(
    `after growing: the first refused message accepted ${((resumedAfter ?? NaN) / 1000).toFixed(2)} s later; /readyz once everything was delivered: ${readyAfter}; ` +
      `log says writable again: ${/store writable again/.test(log)}`,
  );
  console.log(
    `totals: acknowledged ${acknowledged.size}, delivered ${[...acknowledged].filter((id) => stored.has(id)).length}, ` +
      `lost ${lost}, billed ${units} AI units for ${stored.size} comments (billed twice: ${units - stored.size})`,
  );
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  smtp.close();
  await emu.close();
}

await main();

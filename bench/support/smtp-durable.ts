/**
 * One durable run of the SMTP bench, in this process: the smtp adapter over a real SQLite store
 * (synchronous=FULL, fresh file) through the parse pool and the intake, made as `mailgate serve`
 * makes them (parse attempts counted, workers warmed up), where each 250 means the message is
 * durable. Delivery does not run. The product's modules are loaded from a build's `dist/` folder (this
 * build's by default), so that another build runs under the same harness (A/B).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { drive, type Figures } from './smtp-drive.js';

type Modules = {
  smtpConfig: typeof import('../../adapters/smtp/config.js');
  smtpAdapter: typeof import('../../adapters/smtp/adapter.js');
  schema: typeof import('../../src/config/schema.js');
  logger: typeof import('../../src/logger.js');
  intake: typeof import('../../src/pipeline/intake.js');
  pool: typeof import('../../src/pipeline/pool.js');
  store: typeof import('../../src/store/index.js');
  poison: typeof import('../../src/pipeline/poison.js');
};

/** This build's dist/ folder. */
export const OWN_DIST = new URL('../../', import.meta.url);

async function load(dist: URL): Promise<Modules> {
  const at = (path: string) => new URL(path, dist).href;
  return {
    smtpConfig: (await import(at('adapters/smtp/config.js'))) as Modules['smtpConfig'],
    smtpAdapter: (await import(at('adapters/smtp/adapter.js'))) as Modules['smtpAdapter'],
    schema: (await import(at('src/config/schema.js'))) as Modules['schema'],
    logger: (await import(at('src/logger.js'))) as Modules['logger'],
    intake: (await import(at('src/pipeline/intake.js'))) as Modules['intake'],
    pool: (await import(at('src/pipeline/pool.js'))) as Modules['pool'],
    store: (await import(at('src/store/index.js'))) as Modules['store'],
    poison: (await import(at('src/pipeline/poison.js'))) as Modules['poison'],
  };
}

export interface DurableFigures extends Figures {
  commits: number;
  /**
   * Commits by the messages they held, `[1, 2, …, connections]` (index = messages − 1; a commit
   * of more falls into the last): with senders in step, a full commit holds one message of each.
   */
  commitSizes: number[];
  /** The commit cycle, medians over the commits, in ms (see Cycles). */
  cycle: CycleMedians;
  /** Share of the run the listener's event loop was busy. */
  busy: number;
  /** CPU of the process but the senders' thread (listener, intake, parse workers, store), µs per message. */
  cpuUs: number;
  /** CPU of the listener's thread alone, µs per message. */
  mainCpuUs: number;
}

/** A commit cycle in ms: see Cycles. */
export interface CycleMedians {
  turn: number;
  read: number;
  parse: number;
  wait: number;
  commit: number;
}

/** When the listener had one message read whole (handed to the intake) and when its parse came back. */
interface Seen {
  read: number;
  parsed: number;
}

/**
 * Where each commit cycle's time goes, on the listener's clock: `turn` from the previous commit's
 * end to the first of this commit's messages read whole (the 250s written, the senders' next
 * commands answered, their messages read), `read` from there to the last one read, `parse` from
 * there to the last one's parse back (the parse worker's queue), `wait` from there to the
 * commit's start, `commit` the store's write.
 */
class Cycles {
  private readonly spans: Record<keyof CycleMedians, number[]> = { turn: [], read: [], parse: [], wait: [], commit: [] };
  private lastEnd: number | undefined;

  add(seen: Seen[], start: number, end: number): void {
    if (seen.length > 0) {
      const first = Math.min(...seen.map((s) => s.read));
      const last = Math.max(...seen.map((s) => s.read));
      const parsed = Math.max(...seen.map((s) => s.parsed));
      if (this.lastEnd !== undefined) this.spans.turn.push(first - this.lastEnd);
      this.spans.read.push(last - first);
      this.spans.parse.push(parsed - last);
      this.spans.wait.push(start - parsed);
    }
    this.spans.commit.push(end - start);
    this.lastEnd = end;
  }

  medians(): CycleMedians {
    const median = (xs: number[]) => (xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
    const s = this.spans;
    return { turn: median(s.turn), read: median(s.read), parse: median(s.parse), wait: median(s.wait), commit: median(s.commit) };
  }
}

export interface DurableOptions {
  messages: number;
  connections: number;
  /** Parse worker threads (default: the pool's own, as `mailgate serve` without `parsing.workers`). */
  workers?: number;
}

export async function durableRun(dist: URL, { messages, connections, workers }: DurableOptions): Promise<DurableFigures> {
  const m = await load(dist);
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-smtp-'));
  const config = m.schema.ConfigSchema.parse({ routes: [{ name: 'support', source: 'acme/support' }] });
  const store = await m.store.openStore(`sqlite:${join(dir, 'bench.db')}`);
  // As `mailgate serve` makes it: its workers warm up while the listener starts (a build without
  // the option ignores it).
  const pool = new m.pool.ParsePool({
    ...(workers === undefined ? {} : { size: workers }),
    timeoutMs: config.parsing.timeout_ms,
    maxMessageBytes: config.parsing.max_message_bytes,
    warmUp: true,
  });
  const routes = new Map(config.routes.map((r) => [r.name, r]));
  // When each message was read whole and when its parse came back, by its bytes.
  const read = new WeakMap<Buffer, number>();
  const parsed = new WeakMap<Buffer, number>();
  const logger = m.logger.createLogger(false);
  const intake = m.intake.createIntake({
    store,
    routes,
    parse: async (raw, opts, how) => {
      const result = await pool.parseEncoded(raw, opts, how);
      parsed.set(raw, performance.now());
      return result;
    },
    parsing: { body: config.parsing.body, headers: config.parsing.headers, maxMessageBytes: config.parsing.max_message_bytes },
    maxOutbox: 10_000_000,
    logger,
    // As `mailgate serve` has it: each message's parse attempt is counted in the store before its
    // parse (one write for the messages read in one turn of the event loop), and forgotten later.
    poison: m.poison.poisonGuard(store, config.parsing.poison_after),
  });
  const accept = intake.accept.bind(intake);
  intake.accept = (batch, opts) => {
    const now = performance.now();
    for (const msg of batch) read.set(msg.raw, now);
    return accept(batch, opts);
  };
  // Commits counted where they happen: one enqueue transaction each.
  let commits = 0;
  const commitSizes = new Array<number>(connections).fill(0);
  const enqueue = store.enqueue.bind(store);
  const cycles = new Cycles();
  store.enqueue = (...args) => {
    commits += 1;
    const at = Math.min(Math.max(args[0].length, 1), connections) - 1;
    commitSizes[at] = commitSizes[at]! + 1;
    const seen = args[0].flatMap((it): Seen[] => {
      const r = it.raw === undefined ? undefined : read.get(it.raw);
      const p = it.raw === undefined ? undefined : parsed.get(it.raw);
      return r === undefined || p === undefined ? [] : [{ read: r, parsed: p }];
    });
    const start = performance.now();
    const written = enqueue(...args);
    void Promise.resolve(written).then(
      () => cycles.add(seen, start, performance.now()),
      () => undefined,
    );
    return written;
  };
  // Every sender connects from 127.0.0.1: the per-client cap is raised to the connections asked.
  const entry = m.smtpConfig.smtpEntrySchema.parse({
    name: 'bench',
    route: 'support',
    listen: '127.0.0.1:0',
    recipients: [{ match: '*' }],
    max_connections: Math.max(100, connections),
    max_connections_per_client: Math.max(10, connections),
  });
  const adapter = new m.smtpAdapter.SmtpAdapter(entry, logger);
  const stop = new AbortController();
  const running = adapter.start(intake, stop.signal);
  while (adapter.listening() === undefined) await new Promise((r) => setTimeout(r, 10));
  try {
    const loop = performance.eventLoopUtilization();
    const cpu = process.cpuUsage();
    const mainCpu = process.threadCpuUsage();
    const figures = await drive({ port: adapter.listening()!.port, run: 'durable', messages, connections });
    const used = process.cpuUsage(cpu);
    const usedMain = process.threadCpuUsage(mainCpu);
    const perMessage = (us: number) => us / messages;
    return {
      ...figures,
      commits,
      commitSizes,
      cycle: cycles.medians(),
      busy: performance.eventLoopUtilization(loop).utilization,
      cpuUs: perMessage(used.user + used.system - figures.senderCpuMs * 1000),
      mainCpuUs: perMessage(usedMain.user + usedMain.system),
    };
  } finally {
    stop.abort();
    await running;
    await pool.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `mailgate preview`: read → parse in the pool (in order) → spool; then thread properties over
 * every message of the run → output as jsonl, json (streamed array) or table.
 */
import { fileInputs } from '../../../adapters/index.js';
import type { MboxQuoting, PathItem } from '../../pipeline/types.js';
import { parseOrdered, ParsePool } from '../../pipeline/pool.js';
import { startDisplay } from '../terminal/display.js';
import type { CliContext } from '../types.js';
import { writerFor, type Write } from '../write.js';
import { Spool, type OutputOrigin } from './spool.js';
import { columnWidths, headerLine, tableLine } from './table.js';
import { ThreadInputs } from './thread-inputs.js';
import { Skips } from '../skips.js';
import type { FilterFlags } from '../filter.js';
import { cliFilter, FilteredCount, keptItems } from '../filtered.js';

export type PreviewFormat = 'table' | 'json' | 'jsonl';

export interface PreviewFlags extends FilterFlags {
  format?: PreviewFormat;
  body?: 'auto' | 'plain' | 'html';
  headers?: 'raw' | 'parsed';
  maxMessageBytes?: number;
  timeoutMs?: number;
  workers?: number;
  mbox?: MboxQuoting;
}

const outputOrigin = (item: PathItem): OutputOrigin => ({ ...item.origin.details, path: item.path, index: item.index });

/** First pass: every item parsed and spooled; returns how many failed. A progress bar on stderr when it is a terminal. */
async function firstPass(paths: string[], flags: PreviewFlags, spool: Spool, threads: ThreadInputs, ctx: CliContext): Promise<number> {
  const inputs = (await fileInputs()).inputs;
  const pool = new ParsePool({
    size: flags.workers,
    timeoutMs: flags.timeoutMs,
    maxMessageBytes: flags.maxMessageBytes,
    preview: { body: flags.body, headers: flags.headers },
  });
  let read = 0;
  let failed = 0;
  const display = startDisplay(ctx.stderr, {
    files: () => inputs.files(paths),
    messages: () => read,
    counters: () => `read ${read}  failed ${failed}`,
  });
  const skips = new Skips((line) => display.print(line));
  const filtered = new FilteredCount();
  try {
    const items = keptItems(
      inputs.read(paths, {
        maxMessageBytes: flags.maxMessageBytes,
        mboxQuoting: flags.mbox,
        onSkip: skips.count,
      }),
      cliFilter(flags),
      filtered,
    );
    for await (const { item, outcome } of parseOrdered(pool, items, (i) => i.raw, {
      transfer: true,
      optionsOf: (i) => (i.receivedAt === undefined ? undefined : { receivedAt: i.receivedAt }),
    })) {
      read++;
      if (item.next !== undefined) display.at(item.path, item.next.offset);
      const error = item.error ?? (outcome && !outcome.ok ? outcome.error : undefined);
      if (error || !outcome?.ok) {
        failed++;
        await spool.error({
          origin: outputOrigin(item),
          error: { code: error?.code ?? 'MAILGATE_ERR_MIME_INTERNAL', message: error?.message ?? 'no outcome' },
        });
        continue;
      }
      threads.add(outcome.result.comment);
      await spool.message(outputOrigin(item), outcome.result);
    }
  } finally {
    display.stop();
    await pool.close();
  }
  if (skips.total > 0) ctx.stderr.write(`mailgate: ${skips.text()}, never parsed\n`);
  if (filtered.total > 0) ctx.stderr.write(`mailgate: ${filtered.text()} by --allow/--deny/--skip, never parsed\n`);
  return failed;
}

async function emit(format: PreviewFormat, spool: Spool, props: ThreadInputs, ctx: CliContext): Promise<void> {
  const write: Write = writerFor(ctx.stdout);
  if (format === 'table') {
    const widths = columnWidths(ctx.stdout.columns);
    await write(`${headerLine(widths)}\n`);
    let n = 0;
    for await (const line of spool.lines(props)) await write(`${tableLine(widths, ++n, line)}\n`);
    return;
  }
  let first = true;
  if (format === 'json') await write('[');
  for await (const line of spool.lines(props)) {
    if (format === 'json') await write(`${first ? '\n' : ',\n'}${line.json}`);
    else await write(`${line.json}\n`);
    first = false;
  }
  if (format === 'json') await write(first ? ']\n' : '\n]\n');
}

/** Runs the preview; resolves with the exit code (1 when any message or input failed). */
export async function runPreview(paths: string[], flags: PreviewFlags, ctx: CliContext): Promise<number> {
  const format = flags.format ?? (ctx.stdout.isTTY ? 'table' : 'jsonl');
  const spool = await Spool.create();
  try {
    const threads = new ThreadInputs();
    const failed = await firstPass(paths, flags, spool, threads, ctx);
    await spool.close();
    threads.compute();
    await emit(format, spool, threads, ctx);
    return failed > 0 ? 1 : 0;
  } finally {
    await spool.remove();
  }
}

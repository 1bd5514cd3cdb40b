/**
 * `mailgate import`: the files adapter into intake, and delivery, concurrently, until the
 * input is exhausted and the route's outbox is empty. Resumable: the adapter's checkpoint and
 * the outbox are durable, so a killed import continues where it stopped when run again.
 */
import { createFilesAdapter, type MboxQuoting } from '../../../adapters/files/index.js';
import { createLogger } from '../../logger.js';
import { createRuntime, type Runtime } from '../../pipeline/runtime.js';
import { EXIT_FAILED, EXIT_OK } from '../program.js';
import type { CliContext } from '../types.js';
import { writerFor } from '../write.js';
import { routeConfig, type RouteFlags } from './config.js';
import { dryRunImport } from './dry-run.js';
import { progressLine, startProgress, summarize, summaryText, type ImportSummary } from './progress.js';
import { startImportSinks } from './sinks.js';

/** Messages per intake transaction: fewer commits (each one fsynced) than the adapter default. */
export const IMPORT_BATCH_SIZE = 500;

export interface ImportFlags extends RouteFlags {
  dryRun?: boolean;
  json?: boolean;
  workers?: number;
  mbox?: MboxQuoting;
  leaseMs?: number;
  batchSize?: number;
}

export async function runImport(paths: string[], flags: ImportFlags, ctx: CliContext, env: Record<string, string | undefined>): Promise<number> {
  const { config } = routeConfig(flags, env);
  const parsing = flags.workers === undefined ? config.parsing : { ...config.parsing, workers: flags.workers };
  const delivery = flags.batchSize === undefined ? config.delivery : { ...config.delivery, max_documents: flags.batchSize };
  const logger = createLogger({ level: config.log_level === 'info' ? 'warn' : config.log_level, destination: ctx.stderr });
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  const rt = await createRuntime({
    config: { ...config, parsing, delivery }, logger, dryRun: flags.dryRun === true, signal: controller.signal,
    ...(flags.leaseMs === undefined ? {} : { leaseMs: flags.leaseMs }),
  });
  if (rt.emulatorUrl !== undefined) {
    ctx.stderr.write(`mailgate: *** NO API URL: delivering to the BUILT-IN EMULATOR at ${rt.emulatorUrl}, not to the Text Analytics API ***\n`);
  }
  try {
    const summary = flags.dryRun === true ? await dryRun(rt, paths, flags, ctx) : await realRun(rt, paths, flags, ctx, controller);
    if (rt.emulatorUrl !== undefined) summary.emulatorUrl = rt.emulatorUrl;
    ctx.stderr.write(summaryText(summary));
    if (flags.json === true) await writerFor(ctx.stdout)(`${JSON.stringify(summary)}\n`);
    if (controller.signal.aborted) {
      ctx.stderr.write('mailgate: import interrupted; run the same command again to resume\n');
      return EXIT_FAILED;
    }
    if (summary.sinkFlushed === false) {
      ctx.stderr.write('mailgate: MAILGATE_ERR_SINK_FLUSH_TIMEOUT: stopped waiting for the prediction sink; unsent predictions stay in the store and go out with the next import or serve of this route\n');
      return EXIT_FAILED;
    }
    return summary.deadLettered > 0 ? EXIT_FAILED : EXIT_OK;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await rt.close();
  }
}

async function dryRun(rt: Runtime, paths: string[], flags: ImportFlags, ctx: CliContext): Promise<ImportSummary> {
  let last: ImportSummary | undefined;
  const stop = startProgress(ctx.stderr, () => (last ? progressLine(last) : 'reading…'));
  try {
    return await dryRunImport(rt, paths, flags.mbox, (s) => (last = { ...s }));
  } finally {
    stop();
  }
}

async function realRun(rt: Runtime, paths: string[], flags: ImportFlags, ctx: CliContext, controller: AbortController): Promise<ImportSummary> {
  const route = rt.config.routes[0]!;
  const startedAt = Date.now();
  let unreadable = 0;
  const adapter = createFilesAdapter({
    paths, route: route.name, maxMessageBytes: rt.config.parsing.max_message_bytes, batchSize: IMPORT_BATCH_SIZE,
    ...(flags.mbox ? { mboxQuoting: flags.mbox } : {}),
    onError: (item) => {
      unreadable++;
      rt.logger.warn({ path: item.origin.path, index: item.origin.index, code: item.error.code }, `unreadable: ${item.error.message}`);
    },
  });
  const current = () => summarize(route.name, rt.intake.counters, rt.delivery.counters, unreadable, startedAt);
  const stop = startProgress(ctx.stderr, () => progressLine(current()));
  let intakeDone = false;
  const until = async () => intakeDone && (await rt.store.outboxDepth(route.name)) === 0;
  const sinks = startImportSinks(rt, route, controller.signal);
  const delivering = rt.delivery.run(controller.signal, until);
  let sink: { sent: number; flushed: boolean } | undefined;
  try {
    await adapter.start(rt.intake, controller.signal);
    intakeDone = true;
    await delivering;
    sink = await sinks?.finish(controller.signal);
  } catch (err) {
    controller.abort();
    await delivering.catch(() => undefined);
    throw err;
  } finally {
    stop();
    await sinks?.close();
  }
  const summary = current();
  if (sink !== undefined) {
    summary.sinkSent = sink.sent;
    if (!controller.signal.aborted) summary.sinkFlushed = sink.flushed;
  }
  return summary;
}

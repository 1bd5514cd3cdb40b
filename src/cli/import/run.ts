/**
 * `mailgate import`: the files adapter into intake, and delivery, concurrently, until the
 * input is exhausted and the route's outbox is empty. Resumable: the adapter's checkpoint and
 * the outbox are durable, so a killed import continues where it stopped when run again.
 */
import { stat } from 'node:fs/promises';
import { fileInputs } from '../../../adapters/index.js';
import { GatewayError } from '../../errors.js';
import type { LogFormat } from '../../log-pretty.js';
import { RuntimeEvents } from '../../pipeline/events.js';
import { routeTarget } from '../../pipeline/origin.js';
import type { AcceptOptions, Accepted, Inbound, Intake, MboxQuoting, PathInputs } from '../../pipeline/types.js';
import { createRuntime, type Runtime } from '../../runtime/index.js';
import { EXIT_FAILED, EXIT_OK } from '../exit-codes.js';
import { commandLogger } from '../log.js';
import { Printer, startDisplay } from '../terminal/display.js';
import type { CliContext } from '../types.js';
import { writerFor } from '../write.js';
import { routeConfig, type RouteFlags } from '../route-config.js';
import { dryRunImport } from './dry-run.js';
import { countImport, liveLine, summarize, summaryText, type ImportCounts, type ImportSummary } from './progress.js';
import { startImportSinks } from './sinks.js';
import { Skips } from '../skips.js';
import type { FilterFlags } from '../filter.js';
import { cliFilter, FilteredCount } from '../filtered.js';
import { ask, requireConsentPossible } from '../consent.js';
import { estimateQueued, estimateText } from './estimate.js';

/** Messages per intake transaction: fewer commits (each one fsynced) than the adapter default. */
export const IMPORT_BATCH_SIZE = 500;

export interface ImportFlags extends RouteFlags, FilterFlags {
  dryRun?: boolean;
  json?: boolean;
  workers?: number;
  mbox?: MboxQuoting;
  leaseMs?: number;
  batchSize?: number;
  logFormat?: LogFormat;
  /** Deliver without asking (the question before the first billable request is answered yes). */
  yes?: boolean;
}

export async function runImport(
  paths: string[],
  flags: ImportFlags,
  ctx: CliContext,
  env: Record<string, string | undefined>,
): Promise<number> {
  const { config } = await routeConfig(flags, env);
  const parsing = flags.workers === undefined ? config.parsing : { ...config.parsing, workers: flags.workers };
  const delivery = flags.batchSize === undefined ? config.delivery : { ...config.delivery, max_documents: flags.batchSize };
  // Log lines go through the printer: on a terminal they are written above the progress bar.
  const printer = new Printer(ctx.stderr);
  const logger = commandLogger({
    level: config.log_level === 'info' ? 'warn' : config.log_level,
    format: flags.logFormat ?? config.log_format,
    stream: ctx.stderr,
    env,
    destination: printer,
  });
  await checkInputs(paths);
  // Off a terminal the question cannot be asked: refuse before reading anything. The built-in
  // emulator bills nothing, and a dry run sends nothing.
  if (flags.dryRun !== true && config.api.url !== undefined) requireConsentPossible(ctx, flags.yes, 'import bills AI units');
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  // A one-shot import does not wait out a refusal (bad token, unknown source): it stops, and
  // what it queued stays in the store for the next run.
  let refused: { code: string; message: string } | undefined;
  const events = new RuntimeEvents();
  events.on('route:paused', (e) => {
    refused ??= { code: e.code, message: e.message };
    controller.abort();
  });
  const counts = countImport(events);
  const rt = await createRuntime({
    config: { ...config, parsing, delivery },
    logger,
    events,
    dryRun: flags.dryRun === true,
    // Nothing here waits on one message: each commit's WAL sync runs on the thread pool while the
    // event loop reads, hands over and delivers the next (a batch is still acknowledged, and its
    // items sent, only once durable).
    storeOptions: { sqlite: { syncOffThread: true } },
    signal: controller.signal,
    ...(flags.leaseMs === undefined ? {} : { leaseMs: flags.leaseMs }),
  });
  if (rt.emulatorUrl !== undefined) {
    ctx.stderr.write(
      `mailgate: *** NO API URL: delivering to the BUILT-IN EMULATOR at ${rt.emulatorUrl}, not to the Text Analytics API ***\n`,
    );
  }
  try {
    const skips = new Skips((line) => printer.write(line));
    const filtered = new FilteredCount();
    const run = { rt, paths, flags, ctx, printer, counts, inputs: (await fileInputs()).inputs, skips, filtered };
    const summary = flags.dryRun === true ? await dryRun(run) : await realRun(run, controller);
    summary.skipped = run.skips.total;
    summary.skippedBy = run.skips.byReason;
    if (filtered.total > 0) {
      summary.filtered = filtered.total;
      summary.filteredBy = filtered.byReason;
    }
    if (rt.emulatorUrl !== undefined) summary.emulatorUrl = rt.emulatorUrl;
    ctx.stderr.write(summaryText(summary));
    if (refused !== undefined) summary.error = refused;
    if (flags.json === true) await writerFor(ctx.stdout)(`${JSON.stringify(summary)}\n`);
    if (refused !== undefined) {
      const route = rt.config.routes[0]!;
      ctx.stderr.write(
        `mailgate: ${refused.code}: the API refused route ${route.name} (${routeTarget(route)}): ${refused.message}\n` +
          'mailgate: stopped; what was read stays queued in the store: fix the token, URL or target and run the same command again\n',
      );
      return EXIT_FAILED;
    }
    if (summary.declined === true) {
      ctx.stderr.write(
        `mailgate: nothing sent; what was read stays queued in the store for route ${rt.config.routes[0]!.name}: run the same command again to be asked again (or with --yes)\n`,
      );
      return EXIT_FAILED;
    }
    if (controller.signal.aborted) {
      ctx.stderr.write('mailgate: import interrupted; run the same command again to resume\n');
      return EXIT_FAILED;
    }
    if (summary.sinkFlushed === false) {
      ctx.stderr.write(
        'mailgate: MAILGATE_ERR_SINK_FLUSH_TIMEOUT: stopped waiting for the prediction sink; unsent predictions stay in the store and go out with the next import or serve of this route\n',
      );
      return EXIT_FAILED;
    }
    return summary.deadLettered > 0 ? EXIT_FAILED : EXIT_OK;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await rt.close();
  }
}

/** Every input must exist before anything starts: a mistyped path is a usage error, not a dead letter. */
async function checkInputs(paths: string[]): Promise<void> {
  for (const path of paths) {
    try {
      await stat(path);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file or directory' : (err as Error).message;
      throw new GatewayError('MAILGATE_ERR_INPUT_NOT_FOUND', `${path}: ${why}`, { cause: err });
    }
  }
}

/** Shows the estimate of what was stored and asks; true when there is nothing billable to ask about. */
async function confirmBilling(rt: Runtime, ctx: CliContext): Promise<boolean> {
  const estimate = await estimateQueued(rt);
  if (estimate.aiUnits === 0) return true;
  ctx.stderr.write(estimateText(rt, estimate));
  return ask(ctx, 'mailgate: send them?');
}

/** What both kinds of run work with. */
interface Run {
  rt: Runtime;
  paths: string[];
  flags: ImportFlags;
  ctx: CliContext;
  printer: Printer;
  /** What the run counted so far, from the runtime's events. */
  counts: ImportCounts;
  inputs: PathInputs;
  skips: Skips;
  /** Messages the --allow/--deny/--skip filter left out. */
  filtered: FilteredCount;
}

async function dryRun({ rt, paths, flags, ctx, printer, inputs, skips, filtered }: Run): Promise<ImportSummary> {
  let last: ImportSummary | undefined;
  const display = startDisplay(ctx.stderr, {
    files: () => inputs.files(paths),
    messages: () => last?.read ?? 0,
    counters: (room) => (last ? liveLine(last, room) : 'reading…'),
  });
  printer.via(display);
  try {
    return await dryRunImport(
      rt,
      paths,
      flags.mbox,
      (s) => (last = { ...s }),
      (path, offset) => display.at(path, offset),
      skips.count,
      { filter: cliFilter(flags), count: filtered },
    );
  } finally {
    display.stop();
    printer.via(undefined);
  }
}

/**
 * The intake as the adapter sees it, reporting each batch's checkpoint (the position the read
 * reached) on the way, and leaving out what the --allow/--deny/--skip filter refuses (never
 * parsed, stored or billed; its checkpoint moves all the same).
 */
function reportingSink(
  sink: Intake,
  at: (path: string, offset: number) => void,
  filter?: { judge: NonNullable<ReturnType<typeof cliFilter>>['judge']; count: FilteredCount },
): Intake {
  return {
    // Every option passed on as it came (a fence too, should the runtime ever set one).
    accept(batch: Inbound[], options?: AcceptOptions): Promise<Accepted[]> {
      const v = options?.checkpoint?.value;
      if (typeof v?.['path'] === 'string' && typeof v['offset'] === 'number') at(v['path'], v['offset']);
      const kept =
        filter === undefined
          ? batch
          : batch.filter((m) => {
              if (m.failure !== undefined) return true;
              const verdict = filter.judge(m.raw);
              if (!verdict.keep) filter.count.add(verdict.reason);
              return verdict.keep;
            });
      return sink.accept(kept, options);
    },
    checkpoint: (key) => sink.checkpoint(key),
    item: (id) => sink.item(id),
  };
}

async function realRun(
  { rt, paths, flags, ctx, printer, counts, inputs, skips, filtered }: Run,
  controller: AbortController,
): Promise<ImportSummary> {
  const route = rt.config.routes[0]!;
  const startedAt = Date.now();
  let unreadable = 0;
  const adapter = inputs.adapter({
    paths,
    route: route.name,
    scope: `${route.name}@${routeTarget(route)}`,
    maxMessageBytes: rt.config.parsing.max_message_bytes,
    batchSize: IMPORT_BATCH_SIZE,
    onSkip: skips.count,
    ...(flags.mbox ? { mboxQuoting: flags.mbox } : {}),
    onError: (at, error) => {
      unreadable++;
      const where = at.index > 0 ? `${at.path} (message ${at.index})` : at.path;
      printer.write(`mailgate: ${where}: ${error.code}: ${error.message} (kept as a dead letter)\n`);
    },
  });
  const current = () => summarize(route.name, counts, unreadable, startedAt);
  let intakeDone = false;
  // Asked by each delivery worker after an empty claim: workers asking together share one count.
  let counting: Promise<boolean> | undefined;
  const until = (): Promise<boolean> => {
    if (!intakeDone) return Promise.resolve(false);
    counting ??= rt.store
      .outboxDepth(route.name)
      .finally(() => (counting = undefined))
      .then((n) => n === 0);
    return counting;
  };
  const sinks = startImportSinks(rt, controller.signal);
  // Without consent given up front, everything is read and stored first, and delivery (the
  // first billable request) waits for the answer to the estimate.
  const consent = flags.yes !== true && rt.emulatorUrl === undefined;
  let delivering: Promise<void> | undefined = consent ? undefined : rt.delivery.run(controller.signal, until);
  const show = () =>
    startDisplay(ctx.stderr, {
      files: () => inputs.files(paths),
      messages: () => counts.read,
      counters: (room) => liveLine(current(), room),
    });
  let display = show();
  printer.via(display);
  let sink: { sent: number; flushed: boolean } | undefined;
  let declined = false;
  try {
    const filter = cliFilter(flags);
    await adapter.start(reportingSink(rt.intake, display.at, filter && { judge: filter.judge, count: filtered }), controller.signal);
    intakeDone = true;
    // Nothing more comes: the last partial batch goes out at once, and workers idle since their
    // last empty claim look again now (and end once the outbox is empty).
    rt.delivery.drain();
    if (delivering === undefined && !controller.signal.aborted) {
      display.stop();
      printer.via(undefined);
      declined = !(await confirmBilling(rt, ctx));
      display = show();
      printer.via(display);
      if (!declined) delivering = rt.delivery.run(controller.signal, until);
    }
    await delivering;
    if (!declined) sink = await sinks?.finish(controller.signal);
  } catch (err) {
    controller.abort();
    await delivering?.catch(() => undefined);
    throw err;
  } finally {
    display.stop();
    printer.via(undefined);
    await sinks?.close();
  }
  const summary = current();
  if (declined) summary.declined = true;
  if (sink !== undefined) {
    summary.sinkSent = sink.sent;
    if (!controller.signal.aborted) summary.sinkFlushed = sink.flushed;
  }
  return summary;
}

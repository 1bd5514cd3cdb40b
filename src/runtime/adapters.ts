/**
 * The adapters of a configuration, built through the registry (adapters/index.ts), and
 * running them: one failing adapter is logged and marked failed, never stops the others.
 */
import { ADAPTER_KINDS, createAdapters, KINDS, type AdapterEntryOf, type AdapterKind } from '../../adapters/index.js';
import type { Config } from '../config/schema.js';
import { isGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AdapterState, RuntimeEvents } from '../pipeline/events.js';
import { fanOut } from '../pipeline/fan-out.js';
import type { Adapter, AdapterContext, Intake } from '../pipeline/types.js';
import type { MailboxGuard, MailboxHold } from './mailboxes.js';

export type { AdapterState };

/** How adapters run: their log lines and their state changes (`adapter:state`). */
export interface RunContext {
  logger: Logger;
  events?: RuntimeEvents | undefined;
  /** Mailbox states: a pull adapter with controls runs only while its mailbox is enabled. */
  mailboxes?: MailboxGuard | undefined;
}

export interface AdapterEntry {
  kind: string;
  name: string;
  adapter: Adapter;
  state: AdapterState;
  error?: { code: string; message: string };
  /** Set while the mailbox is disabled (state `disabled`): why. */
  disabled?: MailboxHold;
}

/** One adapter per entry of `adapters.<kind>[]`, for every kind, in the registry's order. */
export async function buildAdapters(
  config: Readonly<Config>,
  logger: Logger,
  checkpoints?: AdapterContext['checkpoints'],
): Promise<AdapterEntry[]> {
  const ctx: AdapterContext = { logger, maxMessageBytes: config.parsing.max_message_bytes, ...(checkpoints && { checkpoints }) };
  const entries: AdapterEntry[] = [];
  for (const kind of ADAPTER_KINDS) {
    for (const entry of config.adapters[kind] as ReadonlyArray<AdapterEntryOf<AdapterKind>>) {
      for (const adapter of await createAdapters(kind, entry as never, ctx)) entries.push(entryOf(adapter));
    }
  }
  return entries;
}

/** Whether the configuration reads mailboxes: an entry of a pull kind (IMAP accounts, API mailboxes, file drops). */
export function readsMailboxes(config: Readonly<Config>): boolean {
  return ADAPTER_KINDS.some((kind) => KINDS[kind].mode === 'pull' && config.adapters[kind].length > 0);
}

export function entryOf(adapter: Adapter): AdapterEntry {
  return { kind: adapter.kind, name: adapter.name, adapter, state: 'starting' };
}

/** Starts every adapter; resolves when all have returned (files: input exhausted; services: signal aborted). */
export async function runAdapters(entries: AdapterEntry[], sink: Intake, shared: AbortSignal, ctx: RunContext): Promise<void> {
  // Each adapter listens on its own signal: one listener on the shared one however many adapters run.
  const fanned = fanOut(shared, entries.length);
  try {
    await Promise.all(entries.map((e, i) => runOne(e, sink, fanned.signals[i]!, ctx)));
  } finally {
    fanned.dispose();
  }
}

/** The store name of a mailbox (a pull adapter with controls): its lease name. */
export function mailboxName(e: Pick<AdapterEntry, 'kind' | 'name' | 'adapter'>): string | undefined {
  return e.adapter.mode === 'pull' && e.adapter.controls !== undefined ? `${e.kind}:${e.name}` : undefined;
}

/** Runs one adapter to its end (a mailbox: while it is enabled), keeping its state; never rejects. */
export async function runOne(e: AdapterEntry, sink: Intake, signal: AbortSignal, ctx: RunContext): Promise<void> {
  const mailbox = mailboxName(e);
  if (ctx.mailboxes === undefined || mailbox === undefined) return runPlain(e, sink, signal, ctx);
  return ctx.mailboxes.run(e, mailbox, (s) => runPlain(e, sink, s, ctx), signal);
}

async function runPlain(e: AdapterEntry, sink: Intake, signal: AbortSignal, ctx: RunContext): Promise<void> {
  const log = ctx.logger.child({ adapter: e.kind, instance: e.name });
  setState(e, 'running', ctx.events);
  try {
    await e.adapter.start(sink, signal);
    setState(e, signal.aborted ? 'stopped' : 'finished', ctx.events);
    log.info({ state: e.state }, 'adapter finished');
  } catch (err) {
    if (signal.aborted) {
      setState(e, 'stopped', ctx.events);
      return;
    }
    e.error = { code: isGatewayError(err) ? err.code : 'MAILGATE_ERR_SERVICE_ADAPTER_FAILED', message: (err as Error).message };
    setState(e, 'failed', ctx.events);
    log.error({ err }, 'adapter failed');
  }
}

/** Sets an adapter's state and reports the change (`adapter:state`, with the error of a failed one). */
export function setState(e: AdapterEntry, state: AdapterState, events: RuntimeEvents | undefined): void {
  if (e.state === state) return;
  e.state = state;
  const error = state === 'failed' && e.error !== undefined ? { error: e.error } : {};
  events?.emit('adapter:state', { kind: e.kind, name: e.name, state, ...error });
}

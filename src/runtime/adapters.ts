/**
 * The adapters of a configuration, built through the registry (adapters/index.ts), and
 * running them: one failing adapter is logged and marked failed, never stops the others.
 */
import { ADAPTER_KINDS, createAdapters, type AdapterEntryOf, type AdapterKind } from '../../adapters/index.js';
import type { Config } from '../config/schema.js';
import { isGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { fanOut } from '../pipeline/fan-out.js';
import type { Adapter, AdapterSink } from '../pipeline/types.js';

/** `standby`: a pull adapter whose mailbox lease another replica holds (it runs there). */
export type AdapterState = 'starting' | 'running' | 'finished' | 'failed' | 'stopped' | 'standby';

export interface AdapterEntry {
  kind: string;
  name: string;
  adapter: Adapter;
  state: AdapterState;
  error?: { code: string; message: string };
}

/** One adapter per entry of `adapters.<kind>[]`, for every kind, in the registry's order. */
export async function buildAdapters(config: Readonly<Config>, logger: Logger): Promise<AdapterEntry[]> {
  const ctx = { logger, maxMessageBytes: config.parsing.max_message_bytes };
  const entries: AdapterEntry[] = [];
  for (const kind of ADAPTER_KINDS) {
    for (const entry of config.adapters[kind] as ReadonlyArray<AdapterEntryOf<AdapterKind>>) {
      for (const adapter of await createAdapters(kind, entry as never, ctx)) entries.push(entryOf(adapter));
    }
  }
  return entries;
}

export function entryOf(adapter: Adapter): AdapterEntry {
  return { kind: adapter.kind, name: adapter.name, adapter, state: 'starting' };
}

/** Starts every adapter; resolves when all have returned (files: input exhausted; services: signal aborted). */
export async function runAdapters(entries: AdapterEntry[], sink: AdapterSink, shared: AbortSignal, logger: Logger): Promise<void> {
  // Each adapter listens on its own signal: one listener on the shared one however many adapters run.
  const fanned = fanOut(shared, entries.length);
  try {
    await Promise.all(entries.map((e, i) => runOne(e, sink, fanned.signals[i]!, logger)));
  } finally {
    fanned.dispose();
  }
}

/** Runs one adapter to its end, keeping its state; never rejects. */
export async function runOne(e: AdapterEntry, sink: AdapterSink, signal: AbortSignal, logger: Logger): Promise<void> {
  const log = logger.child({ adapter: e.kind, instance: e.name });
  e.state = 'running';
  try {
    await e.adapter.start(sink, signal);
    e.state = signal.aborted ? 'stopped' : 'finished';
    log.info({ state: e.state }, 'adapter finished');
  } catch (err) {
    if (signal.aborted) {
      e.state = 'stopped';
      return;
    }
    e.state = 'failed';
    e.error = { code: isGatewayError(err) ? err.code : 'MAILGATE_ERR_SERVICE_ADAPTER_FAILED', message: (err as Error).message };
    log.error({ err }, 'adapter failed');
  }
}

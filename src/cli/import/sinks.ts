/**
 * The prediction sinks of an import: they run beside delivery, and the import waits (within
 * a bound) until everything predicted was written to the route's JSONL file and webhook.
 */
import type { Runtime } from '../../runtime/index.js';

/** How long an import waits for its sinks after delivery ended, in ms. */
export const IMPORT_SINK_FLUSH_MS = 120_000;

export interface ImportSinks {
  /** Waits until every prediction is out, or the bound or the signal ends the wait. */
  finish(signal: AbortSignal, boundMs?: number): Promise<{ sent: number; flushed: boolean }>;
  close(): Promise<void>;
}

/** Undefined when the route is not a predict route with a sink. The runtime's sinks, started beside delivery. */
export function startImportSinks(rt: Runtime, signal: AbortSignal): ImportSinks | undefined {
  const sinks = rt.sinks;
  if (sinks.workers.length === 0) return undefined;
  sinks.start(signal);
  return {
    async finish(stop, boundMs = IMPORT_SINK_FLUSH_MS) {
      const flushed = await sinks.flush(AbortSignal.any([stop, AbortSignal.timeout(boundMs)]));
      return { sent: sinks.workers.reduce((n, w) => n + w.sent, 0), flushed };
    },
    close: () => sinks.close(),
  };
}

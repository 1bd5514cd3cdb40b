/**
 * The adapters of a configuration, built through the registry (adapters/index.ts), and
 * running them: one failing adapter is logged and marked failed, never stops the others.
 */
import { createAdapter, ADAPTERS } from '../../adapters/index.js';
import type { ImapAdapter } from '../../adapters/imap/index.js';
import type { Config } from '../config/schema.js';
import { isGatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Adapter, IntakeSink } from '../pipeline/types.js';

export type AdapterState = 'starting' | 'running' | 'finished' | 'failed' | 'stopped';

export interface AdapterEntry {
  kind: string;
  name: string;
  adapter: Adapter;
  state: AdapterState;
  error?: { code: string; message: string };
}

export interface ServiceAdapters {
  entries: AdapterEntry[];
  /** The IMAP adapter (all accounts), when any account is configured: health and after-delivery actions. */
  imap?: ImapAdapter;
}

export function buildAdapters(config: Readonly<Config>, logger: Logger): ServiceAdapters {
  const entries: AdapterEntry[] = [];
  for (const f of config.adapters.files) {
    // `instance`, not `name`: pino's own `name` field is the program's.
    const log = logger.child({ adapter: 'files', instance: f.name });
    const adapter = createAdapter('files', {
      paths: [...f.paths],
      route: f.route,
      maxMessageBytes: config.parsing.max_message_bytes,
      // An unreadable input file is expected (a broken .msg): one line with its reason, no stack.
      onError: (item) => log.warn({ path: item.origin.path, index: item.origin.index, code: item.error?.code }, `file item skipped: ${item.error?.message ?? 'unreadable'}`),
      onSkip: (path, reason) => log.debug({ path, reason }, 'not mail, skipped'),
    });
    entries.push({ kind: 'files', name: f.name, adapter, state: 'starting' });
  }
  let imap: ImapAdapter | undefined;
  if (config.adapters.imap.length > 0) {
    imap = ADAPTERS.imap({ accounts: config.adapters.imap, logger });
    entries.push({ kind: 'imap', name: 'imap', adapter: imap, state: 'starting' });
  }
  return { entries, ...(imap ? { imap } : {}) };
}

/** Starts every adapter; resolves when all have returned (files: input exhausted; services: signal aborted). */
export async function runAdapters(entries: AdapterEntry[], sink: IntakeSink, signal: AbortSignal, logger: Logger): Promise<void> {
  await Promise.all(
    entries.map(async (e) => {
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
    }),
  );
}

/**
 * createEmulator: state (optionally persistent), fault plan and a listening app.
 */
import type { FastifyInstance } from 'fastify';
import { buildEmulatorApp } from './app.js';
import { FaultPlan } from './faults.js';
import { Journal } from './journal.js';
import { resolveOptions } from './options.js';
import { resetAll } from './routes/admin.js';
import { EmulatorState } from './state.js';
import type { Emulator, EmulatorOptions, EmulatorStats, FaultRule } from './types.js';

/**
 * Creates an emulator; with `dataDir` its state is loaded now (throws
 * MAILGATE_ERR_EMULATOR_STATE_CORRUPT for an unreadable snapshot). Each `listen()` builds a
 * fresh app over the same state, so close() then listen(samePort) restarts it.
 */
export function createEmulator(options: EmulatorOptions): Emulator {
  const resolved = resolveOptions(options);
  const faults = new FaultPlan(options.faults ?? []);
  let state = open();
  let closed = false;
  let app: FastifyInstance | undefined;

  function open(): EmulatorState {
    const s = new EmulatorState(resolved.dataDir === undefined ? undefined : new Journal(resolved.dataDir));
    s.load();
    return s;
  }

  return {
    async listen(port = 0, host = '127.0.0.1'): Promise<string> {
      if (app) throw new Error('emulator is already listening');
      if (closed) {
        // With a data directory a restart reloads what was persisted; without one the memory state carries on.
        if (resolved.dataDir !== undefined) state = open();
        closed = false;
      }
      const built = buildEmulatorApp(state, resolved, faults);
      const address = await built.listen({ port, host });
      app = built;
      const url = new URL(address);
      return `${url.protocol}//${url.host}`;
    },
    async close(): Promise<void> {
      const current = app;
      app = undefined;
      if (current) await current.close();
      if (!closed) state.close();
      closed = true;
    },
    stats(): EmulatorStats {
      return state.stats();
    },
    setFaults(rules: FaultRule[]): void {
      faults.set(rules);
    },
    reset(): void {
      resetAll({ state, options: resolved, faults });
    },
  };
}

/**
 * What `mailgate emulator` runs (src/cli/commands/emulator.ts holds its flags, docs/emulator.md
 * lists them): starts the emulator in the foreground until SIGINT/SIGTERM.
 */
import { listenError } from '../server/listen.js';
import { parseFaultSpec } from './fault-spec.js';
import { createEmulator } from './emulator.js';
import type { Emulator, EmulatorOptions } from './types.js';

export interface EmulatorCommandOptions extends Omit<EmulatorOptions, 'faults'> {
  /** TCP port (0 picks a free one). */
  port: number;
  /** Interface to bind (default 127.0.0.1; `0.0.0.0` to expose it). */
  host?: string;
  /** Fault spec string (see parseFaultSpec). */
  faults?: string;
  /** Where to print the ready line (default stdout). */
  print?: (line: string) => void;
  /** Install SIGINT/SIGTERM handlers that close the emulator (default true). */
  handleSignals?: boolean;
}

export interface RunningEmulator {
  url: string;
  emulator: Emulator;
  stop(): Promise<void>;
}

export async function runEmulatorCommand(opts: EmulatorCommandOptions): Promise<RunningEmulator> {
  const { port, host, faults, print, handleSignals, ...options } = opts;
  const emulator = createEmulator({ ...options, faults: faults === undefined ? [] : parseFaultSpec(faults) });
  let url: string;
  try {
    url = await emulator.listen(port, host ?? '127.0.0.1');
  } catch (err) {
    throw listenError(err, host ?? '127.0.0.1', port, 'Pass another --port, or --port 0 for a free one');
  }
  const out = print ?? ((line: string) => process.stdout.write(`${line}\n`));
  out(`mailgate emulator listening on ${url} (API at ${url}/api/v1, stats at ${url}/_emulator/stats)`);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= emulator.close());
  if (handleSignals ?? true) {
    const onSignal = (): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      void stop();
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  return { url, emulator, stop };
}

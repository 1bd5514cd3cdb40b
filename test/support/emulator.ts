/**
 * Starts a real emulator on 127.0.0.1, port 0, for tests that need the Text Analytics API.
 */
import { randomBytes } from 'node:crypto';
import { createEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.js';

export type StartEmulatorOptions = Omit<Partial<EmulatorOptions>, 'token'> & { token?: string };

export interface StartedEmulator {
  /** Base URL, e.g. `http://127.0.0.1:40123` (the API lives under `/api/v1`). */
  url: string;
  token: string;
  emulator: Emulator;
  stop(): Promise<void>;
}

export async function startEmulator(options: StartEmulatorOptions = {}): Promise<StartedEmulator> {
  const token = options.token ?? `test-${randomBytes(8).toString('hex')}`;
  const emulator = createEmulator({ logger: false, ...options, token });
  const url = await emulator.listen(0, '127.0.0.1');
  return { url, token, emulator, stop: () => emulator.close() };
}

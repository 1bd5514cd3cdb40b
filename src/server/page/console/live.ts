/// <reference lib="dom" />
/**
 * Live updates from GET /api/events (server-sent events). Read with fetch rather than
 * EventSource, because EventSource cannot send the `Authorization` header the admin API needs
 * (and a key in the URL would land in logs and history). Reconnects with a growing, jittered delay.
 */
import { authHeaders, currentKey } from './api.js';
import { sseParser } from './sse.js';

export type EventHandler = (name: string, data: unknown) => void;
export type StateHandler = (connected: boolean) => void;

async function readOnce(signal: AbortSignal, onEvent: EventHandler, onState: StateHandler): Promise<void> {
  const res = await fetch('/api/events', {
    headers: authHeaders({ Accept: 'text/event-stream' }),
    credentials: 'omit',
    cache: 'no-store',
    signal,
  });
  if (!res.ok || !res.body) throw new Error('HTTP ' + res.status);
  onState(true);
  const parse = sseParser((name, data) => {
    let value: unknown = data;
    try {
      value = JSON.parse(data);
    } catch {
      // Not JSON: passed on as text.
    }
    onEvent(name, value);
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parse(value);
  }
}

/** Follows the event stream until `signal` aborts; returns at once. */
export function follow(signal: AbortSignal, onEvent: EventHandler, onState: StateHandler): void {
  let failures = 0;
  const loop = async (): Promise<void> => {
    while (!signal.aborted && currentKey()) {
      try {
        await readOnce(signal, onEvent, onState);
        failures = 0;
      } catch {
        failures++;
      }
      onState(false);
      if (signal.aborted) return;
      const delay = Math.min(30_000, 1000 * 2 ** Math.min(failures, 5)) * (0.5 + Math.random() / 2);
      await new Promise((r) => setTimeout(r, delay));
    }
  };
  void loop();
}

/**
 * One abort signal per consumer, all aborted by a single listener on a shared signal. Many
 * long-running consumers (adapters, IMAP accounts) that each listened on the shared signal
 * would pile up listeners on it — Node warns past 10 (MaxListenersExceededWarning) — while
 * each child signal only carries the listeners of its own consumer.
 */
export interface FannedOut {
  signals: AbortSignal[];
  /** Removes the listener from the shared signal (when the consumers are done). */
  dispose(): void;
}

export function fanOut(parent: AbortSignal, n: number): FannedOut {
  const controllers = Array.from({ length: n }, () => new AbortController());
  const abort = (): void => {
    for (const c of controllers) c.abort(parent.reason);
  };
  if (parent.aborted) abort();
  else parent.addEventListener('abort', abort, { once: true });
  return { signals: controllers.map((c) => c.signal), dispose: () => parent.removeEventListener('abort', abort) };
}

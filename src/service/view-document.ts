/**
 * A stored document made ready for a console view without parsing a large one on the service's
 * thread. A document's JSON text of up to MAX_VIEW_PARSE_CHARS is parsed where it is (a
 * millisecond); a longer one (an HTML body of up to 32 MiB of characters) goes as text to a
 * worker that parses it, cuts it for the view (view-cut.ts) and sends back only what the view
 * shows, under the parse time budget and a heap limit. The service's thread then only copies the
 * text across: a view of a hostile 10 MB item no longer parses 10 MB on the thread that answers
 * /livez and every webhook.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { GatewayError } from '../errors.js';
import { DEFAULT_PARSE_TIMEOUT_MS } from '../limits.js';
import type { RawEmailDocument } from '../model/index.js';
import { cutForView, MAX_VIEW_HTML_CHARS, type ViewDocument } from './view-cut.js';

/** Characters of a stored document's JSON text parsed on the service's thread; longer ones go to the view worker. */
export const MAX_VIEW_PARSE_CHARS = 4 * MAX_VIEW_HTML_CHARS;

/** Heap of the view worker in MiB: a document of 32 MiB of characters, its text and the parsed copy. */
export const VIEW_WORKER_MEMORY_MB = 256;

const WORKER_URL = new URL('./view-worker.js', import.meta.url);

interface Reply {
  id: number;
  ok: boolean;
  view?: ViewDocument;
  message?: string;
}

/** One worker, started on first use and kept (unreferenced) for the next view; replaced after a failure. */
let worker: Worker | undefined;
let nextId = 1;
/** Documents are parsed one after the other: each waits for the one before. */
let queue: Promise<unknown> = Promise.resolve();

function viewer(): Worker {
  if (worker === undefined) {
    worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: VIEW_WORKER_MEMORY_MB } });
    worker.unref();
  }
  return worker;
}

function retire(w: Worker): void {
  if (worker === w) worker = undefined;
  w.removeAllListeners();
  w.on('error', () => undefined);
  void w.terminate();
}

function failed(why: string): GatewayError {
  return new GatewayError('MAILGATE_ERR_SERVER_INTERNAL', `the stored document could not be read for the view: ${why}`);
}

function parseInWorker(json: string, timeoutMs: number): Promise<ViewDocument> {
  const w = viewer();
  const id = nextId++;
  return new Promise<ViewDocument>((resolve, reject) => {
    const done = (fail: GatewayError | undefined, view?: ViewDocument) => {
      clearTimeout(timer);
      w.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (fail) reject(fail);
      else resolve(view!);
    };
    const timer = setTimeout(() => {
      retire(w);
      done(failed(`it took longer than the ${timeoutMs} ms budget`));
    }, timeoutMs);
    const onMessage = (m: Reply) => {
      if (m.id !== id) return;
      if (m.ok) done(undefined, m.view);
      else done(failed(m.message!));
    };
    const onError = (err: Error) => {
      retire(w);
      done(failed(err.message));
    };
    const onExit = (code: number) => {
      retire(w);
      done(failed(`the worker stopped (exit code ${code})`));
    };
    w.on('message', onMessage).on('error', onError).on('exit', onExit);
    w.postMessage({ id, json });
  });
}

/**
 * The document of a stored item as a view shows it (`document` is read only for a short text).
 * Where the compiled worker is absent (the TypeScript sources run directly, as in unit tests)
 * every document is parsed on the calling thread.
 */
export async function documentForView(
  item: { readonly document: RawEmailDocument; readonly documentJson: string },
  timeoutMs = DEFAULT_PARSE_TIMEOUT_MS,
): Promise<ViewDocument> {
  if (item.documentJson.length <= MAX_VIEW_PARSE_CHARS || !existsSync(fileURLToPath(WORKER_URL))) return cutForView(item.document);
  const run = queue.then(() => parseInWorker(item.documentJson, timeoutMs));
  queue = run.catch(() => undefined);
  return run;
}

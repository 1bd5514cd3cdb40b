/** Worker entry of documentForView: stored documents parsed and cut for a view, one at a time. */
import { parentPort } from 'node:worker_threads';
import type { RawEmailDocument } from '../model/index.js';
import { cutForView } from './view-cut.js';

parentPort!.on('message', ({ id, json }: { id: number; json: string }) => {
  try {
    parentPort!.postMessage({ id, ok: true, view: cutForView(JSON.parse(json) as RawEmailDocument) });
  } catch (err) {
    parentPort!.postMessage({ id, ok: false, message: (err as Error).message });
  }
});

/** Worker entry of convertMsg: .msg conversions one at a time, under the caller's time and heap budget. */
import { parentPort } from 'node:worker_threads';
import { msgToRfc822 } from './msg.js';

parentPort!.on('message', ({ id, bytes, name }: { id: number; bytes: Uint8Array; name: string }) => {
  try {
    const raw = msgToRfc822(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), name);
    parentPort!.postMessage({ id, ok: true, raw });
  } catch (err) {
    parentPort!.postMessage({ id, ok: false, message: (err as Error).message });
  }
});

/** Writing to a stream with backpressure: wait for 'drain' instead of buffering without bound. */
import { once } from 'node:events';

export type Write = (text: string) => Promise<void>;

export function writerFor(stream: NodeJS.WritableStream): Write {
  return async (text: string) => {
    if (!stream.write(text)) await once(stream, 'drain');
  };
}

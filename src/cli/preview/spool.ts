/**
 * The first pass writes each message's JSON to a temporary file, split around the place where
 * thread properties go; the second pass reads it back line by line and splices them in. So
 * memory holds only the compact thread inputs, whatever the size of the input.
 *
 * Record: `<comment id>\t<head>\t<tail>` for a message, `!\t<json>` for a failure. JSON text
 * never holds a raw tab or newline, so the separators are unambiguous.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ThreadProperties } from '../../model/index.js';
import type { PreviewResult } from '../../preview/types.js';
import { writerFor, type Write } from '../write.js';

export interface OutputOrigin {
  path: string;
  index: number;
}

export interface ErrorRecord {
  origin: OutputOrigin;
  error: { code: string; message: string };
}

/** One line of output, resolved in the second pass. */
export type SpooledLine = { kind: 'message'; json: string } | { kind: 'error'; json: string };

export class Spool {
  private constructor(
    private readonly dir: string,
    private readonly file: string,
    private readonly stream: WriteStream,
    private readonly write: Write,
  ) {}

  static async create(): Promise<Spool> {
    const dir = await mkdtemp(join(tmpdir(), 'mailgate-preview-'));
    const file = join(dir, 'spool.tsv');
    const stream = createWriteStream(file);
    return new Spool(dir, file, stream, writerFor(stream));
  }

  async message(origin: OutputOrigin, result: PreviewResult): Promise<void> {
    const head = `{"origin":${JSON.stringify(origin)},"document":${JSON.stringify(result.document)},"comment":${JSON.stringify(result.comment)}`;
    const tail = `"warnings":${JSON.stringify(result.warnings.map((w) => ({ code: w.code, message: w.message })))}}`;
    await this.write(`${result.comment.id}\t${head}\t${tail}\n`);
  }

  async error(record: ErrorRecord): Promise<void> {
    await this.write(`!\t${JSON.stringify(record)}\n`);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }

  /** Second pass: every record as its final JSON line, thread properties spliced in. */
  async *lines(threads: { get(id: string): ThreadProperties | undefined }): AsyncGenerator<SpooledLine> {
    const rl = createInterface({ input: createReadStream(this.file), crlfDelay: Infinity });
    for await (const line of rl) {
      const t1 = line.indexOf('\t');
      const id = line.slice(0, t1);
      if (id === '!') {
        yield { kind: 'error', json: line.slice(t1 + 1) };
        continue;
      }
      const t2 = line.indexOf('\t', t1 + 1);
      const props = threads.get(id);
      const middle = props === undefined ? '' : `,"thread_properties":${JSON.stringify(props)}`;
      yield { kind: 'message', json: `${line.slice(t1 + 1, t2)}${middle},${line.slice(t2 + 1)}` };
    }
  }

  async remove(): Promise<void> {
    this.stream.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}

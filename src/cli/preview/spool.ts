/**
 * The first pass writes each message's JSON to a temporary file, split at the two places that
 * depend on the whole run: the value of the comment's `number:Position in Thread` and the
 * place where thread properties go. The second pass reads it back line by line and splices
 * them in. So memory holds only the compact thread inputs, whatever the size of the input.
 *
 * Record: `<comment id>\t<head>\t<rest>\t<tail>` for a message, `!\t<json>` for a failure.
 * `head` ends just before the position value and `rest` runs from after it to the end of the
 * comment; when the comment has no such property `head` holds the whole comment and `rest` is
 * empty. JSON text never holds a raw tab or newline, so the separators are unambiguous; U+2028,
 * U+2029 and bidi controls from mail are written as `\u` escapes (src/line-safe.ts), so a reader
 * of the JSONL that ends lines there still sees one record per line.
 */
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { escapeLineAndBidi } from '../../line-safe.js';
import type { Comment, ThreadProperties } from '../../model/index.js';
import type { PreviewResult } from '../../preview/types.js';
import { writerFor, type Write } from '../write.js';

/**
 * The file and index of an item, and what its kind states about it beside them (the origin's
 * details as its kind built them: the folder inside an archive, the labels and account a Google
 * Vault export gave the message).
 */
export interface OutputOrigin {
  path: string;
  index: number;
  [detail: string]: unknown;
}

export interface ErrorRecord {
  origin: OutputOrigin;
  error: { code: string; message: string };
}

/** The generated property that holds the thread position (see withThreadPosition). */
const POSITION_KEY = 'number:Position in Thread';

/**
 * The comment's JSON text (exactly JSON.stringify's) split around the value of its
 * POSITION_KEY property, or undefined when it has none. `mailgate preview` sets no client
 * properties, so that property is always the generated one and takes the thread position.
 */
export function splitAtPosition(comment: Comment): [string, string] | undefined {
  if (!Object.hasOwn(comment.user_properties, POSITION_KEY)) return undefined;
  let head = '';
  let rest: string | undefined;
  const add = (text: string): void => {
    if (rest === undefined) head += text;
    else rest += text;
  };
  let sep = '{';
  for (const [key, value] of Object.entries(comment)) {
    if (value === undefined) continue;
    add(`${sep}${JSON.stringify(key)}:`);
    sep = ',';
    if (key !== 'user_properties') {
      add(JSON.stringify(value));
      continue;
    }
    let inner = '{';
    for (const [k, v] of Object.entries(comment.user_properties)) {
      add(`${inner}${JSON.stringify(k)}:`);
      inner = ',';
      if (k === POSITION_KEY) rest = '';
      else add(JSON.stringify(v));
    }
    add(inner === '{' ? '{}' : '}');
  }
  add('}');
  return rest === undefined ? undefined : [head, rest];
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
    const split = splitAtPosition(result.comment);
    const comment = split ?? [JSON.stringify(result.comment), ''];
    const head = `{"origin":${JSON.stringify(origin)},"document":${JSON.stringify(result.document)},"comment":${comment[0]}`;
    const tail = `"warnings":${JSON.stringify(result.warnings.map((w) => ({ code: w.code, message: w.message })))}}`;
    await this.write(escapeLineAndBidi(`${result.comment.id}\t${head}\t${comment[1]}\t${tail}\n`));
  }

  async error(record: ErrorRecord): Promise<void> {
    await this.write(`!\t${escapeLineAndBidi(JSON.stringify(record))}\n`);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve, reject) => this.stream.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }

  /** Second pass: every record as its final JSON line, thread position and properties spliced in. */
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
      const t3 = line.indexOf('\t', t2 + 1);
      const props = threads.get(id);
      const rest = line.slice(t2 + 1, t3);
      const position = rest === '' ? '' : String(props?.thread_position ?? 0);
      const middle = props === undefined ? '' : `,"thread_properties":${escapeLineAndBidi(JSON.stringify(props))}`;
      yield { kind: 'message', json: `${line.slice(t1 + 1, t2)}${position}${rest}${middle},${line.slice(t3 + 1)}` };
    }
  }

  async remove(): Promise<void> {
    this.stream.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}

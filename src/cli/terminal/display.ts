/**
 * What `import` and `preview` show on stderr while they run. On a terminal: a progress bar
 * (bytes of the input read, percentage, rates, ETA) beside the command's counters, redrawn in
 * place, with notes and log lines printed above it. Anywhere else: nothing but those lines,
 * written as they come.
 */
import { barText, RateWindow } from './bar.js';
import { InputBytes, type SizedFile } from './input-bytes.js';
import { StatusLine, type TtyStream } from './status-line.js';

export interface ProgressDisplay {
  /** Whole lines for people (notes, log lines): above the bar on a terminal, as they are elsewhere. */
  print(text: string): void;
  /** The read handed on everything of `path` before byte `offset`. */
  at(path: string, offset: number): void;
  /** Clears the bar (a terminal) and stops redrawing it. */
  stop(): void;
}

export interface DisplayOptions {
  /** Every input file with its size, in read order; without it the bar shows the counters only. */
  files?: () => AsyncIterable<SizedFile>;
  /** Messages handled so far (the msg/s rate). */
  messages: () => number;
  /** The command's counters, shown beside the bar; `room`: the columns left for them (a shorter text fits whole). */
  counters: (room: number) => string;
  everyMs?: number;
}

export function startDisplay(stream: TtyStream, options: DisplayOptions): ProgressDisplay {
  if (stream.isTTY !== true) return { print: (text) => void stream.write(text), at: () => undefined, stop: () => undefined };
  const bytes = options.files === undefined ? undefined : new InputBytes(options.files);
  const window = new RateWindow();
  const render = (columns: number) => {
    // The status line keeps the last column free.
    if (bytes === undefined) return options.counters(columns - 1);
    const done = bytes.done();
    window.add(Date.now(), done, options.messages());
    const bar = `${barText({ done, total: bytes.total, ...window.rates() })}  |  `;
    return `${bar}${options.counters(columns - 1 - bar.length)}`;
  };
  const line = new StatusLine(stream, render, options.everyMs);
  bytes?.start();
  line.start();
  return {
    print: (text) => line.print(text),
    at: (path, offset) => bytes?.at(path, offset),
    stop: () => {
      line.stop();
      bytes?.close();
    },
  };
}

/**
 * Where lines for people go: straight to the stream, or through the display while one runs. A
 * logger writes here (it is a pino destination), so a log line never lands inside the bar.
 */
export class Printer {
  private display: ProgressDisplay | undefined;

  constructor(private readonly stream: NodeJS.WritableStream) {}

  write(text: string): void {
    if (this.display === undefined) this.stream.write(text);
    else this.display.print(text);
  }

  /** Lines go through `display` until it is replaced (undefined: straight to the stream again). */
  via(display: ProgressDisplay | undefined): void {
    this.display = display;
  }
}

/**
 * One status line at the bottom of a terminal, redrawn in place at most every `everyMs`. Text
 * printed through it (log lines, notes) clears the line first and is written whole; the
 * status line comes back at the next tick, so the two never share a line.
 */
export interface TtyStream extends NodeJS.WritableStream {
  isTTY?: boolean;
  columns?: number;
}

/** Redraws after a change at most this often: ten times a second. */
export const STATUS_EVERY_MS = 100;

/** Columns assumed when the terminal does not tell its width. */
const DEFAULT_COLUMNS = 80;

const CLEAR = '\r\x1b[2K';

/** Cut to the width: a line that wraps could not be redrawn in place. */
export function fitColumns(text: string, columns: number): string {
  const width = Math.max(1, columns - 1);
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

export class StatusLine {
  private shown = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stream: TtyStream,
    /** The line for a terminal this many columns wide (it is cut to fit whatever it returns). */
    private readonly render: (columns: number) => string,
    private readonly everyMs = STATUS_EVERY_MS,
  ) {}

  start(): void {
    this.draw();
    this.timer = setInterval(() => this.draw(), this.everyMs);
    this.timer.unref();
  }

  /** Writes whole lines above the status line (it is redrawn at the next tick). */
  print(text: string): void {
    this.clear();
    this.stream.write(text);
  }

  /** Draws the final figures once, stops redrawing and leaves the line empty (the caller prints its summary). */
  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.draw();
    this.clear();
  }

  private draw(): void {
    const columns = this.stream.columns;
    // A pseudo-terminal without a size reports 0 columns.
    const width = columns !== undefined && columns > 0 ? columns : DEFAULT_COLUMNS;
    this.stream.write(`${CLEAR}${fitColumns(this.render(width), width)}`);
    this.shown = true;
  }

  private clear(): void {
    if (this.shown) this.stream.write(CLEAR);
    this.shown = false;
  }
}

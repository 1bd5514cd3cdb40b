/** The progress bar's parts: its text, the rates, the bytes a read got through, the status line and the display. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { barText, bytesText, durationText, percentOf, RateWindow } from '../../src/cli/terminal/bar.js';
import { Printer, startDisplay } from '../../src/cli/terminal/display.js';
import { InputBytes, type SizedFile } from '../../src/cli/terminal/input-bytes.js';
import { fitColumns, StatusLine } from '../../src/cli/terminal/status-line.js';

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

const CLEAR = '\r\x1b[2K';

/** Lets the walks of InputBytes run (they advance on promise resolution only). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('bar text', () => {
  it('bar, percentage, bytes, rates and ETA', () => {
    const text = barText({ done: 12_300_000, total: 41_000_000, bytesPerSecond: 3_400_000, messagesPerSecond: 1520.4 });
    expect(text).toBe('[██████░░░░░░░░░░░░░░]  30%  12.3 MB / 41.0 MB  1520 msg/s  3.4 MB/s  ETA 0:08');
  });

  it('no percentage while the total is measured; no ETA without a rate', () => {
    expect(barText({ done: 2048, total: undefined, bytesPerSecond: 0, messagesPerSecond: 0 })).toBe(
      'measuring input…  2.0 kB  0 msg/s  0 B/s',
    );
    expect(barText({ done: 0, total: 100, bytesPerSecond: 0, messagesPerSecond: 0 })).toMatch(/ {2}0%.*ETA --:--$/);
  });

  it('percent never reaches 100 before the end nor passes it; an empty input is done', () => {
    expect(percentOf(999, 1000)).toBe(99);
    expect(percentOf(1000, 1000)).toBe(100);
    expect(percentOf(1500, 1000)).toBe(100);
    expect(percentOf(0, 0)).toBe(100);
  });

  it('sizes and durations for people', () => {
    expect([bytesText(999), bytesText(1500), bytesText(2_500_000), bytesText(3_210_000_000)]).toEqual([
      '999 B',
      '1.5 kB',
      '2.5 MB',
      '3.21 GB',
    ]);
    expect([durationText(9), durationText(75), durationText(3725), durationText(Infinity)]).toEqual(['0:09', '1:15', '1:02:05', '--:--']);
  });

  it('rates over the recent window only (a resumed read jumping ahead leaves it)', () => {
    const w = new RateWindow(5_000);
    expect(w.rates()).toEqual({ bytesPerSecond: 0, messagesPerSecond: 0 });
    w.add(0, 0, 0);
    w.add(1_000, 50_000_000, 10);
    expect(w.rates()).toEqual({ bytesPerSecond: 50_000_000, messagesPerSecond: 10 });
    w.add(7_000, 50_600_000, 70);
    w.add(8_000, 50_700_000, 80);
    expect(w.rates()).toEqual({ bytesPerSecond: 100_000, messagesPerSecond: 10 });
  });
});

describe('InputBytes', () => {
  const files: SizedFile[] = [
    { path: '/in/a.eml', size: 100 },
    { path: '/in/b.mbox', size: 1000 },
    { path: '/in/skipped.txt', size: 50 },
    { path: '/in/c.eml', size: 200 },
  ];
  async function* walk(): AsyncGenerator<SizedFile> {
    for (const f of files) yield f;
  }

  it('measures the total, and counts the files passed plus the position in the current one', async () => {
    const bytes = new InputBytes(walk);
    bytes.start();
    await settle();
    expect(bytes.total).toBe(1350);
    expect(bytes.done()).toBe(0);
    bytes.at('/in/a.eml', 100);
    await settle();
    expect(bytes.done()).toBe(100);
    bytes.at('/in/b.mbox', 400);
    await settle();
    expect(bytes.done()).toBe(500);
    // The file between (not mail, no item) counts once the read is past it.
    bytes.at('/in/c.eml', 200);
    await settle();
    expect(bytes.done()).toBe(1350);
    bytes.close();
  });

  it('starts where a resumed read starts', async () => {
    const bytes = new InputBytes(walk);
    bytes.start();
    bytes.at('/in/b.mbox', 700);
    await settle();
    expect(bytes.done()).toBe(800);
    bytes.close();
  });

  it('has no total when the walk fails', async () => {
    // eslint-disable-next-line require-yield
    async function* broken(): AsyncGenerator<SizedFile> {
      throw new Error('EACCES');
    }
    const bytes = new InputBytes(broken);
    bytes.start();
    await settle();
    expect(bytes.total).toBeUndefined();
    expect(barText({ done: bytes.done(), total: bytes.total, bytesPerSecond: 0, messagesPerSecond: 0 })).toMatch(/^measuring/);
    bytes.close();
  });
});

describe('StatusLine', () => {
  it('draws at once, prints lines after clearing it, draws the final figures and clears it at the end', () => {
    const out = Object.assign(new Capture(), { isTTY: true, columns: 40 });
    let n = 0;
    const line = new StatusLine(out, () => `frame ${++n}`, 60_000);
    line.start();
    line.print('mailgate: a note\n');
    line.print('a log line\n');
    line.stop();
    line.stop();
    expect(out.text).toBe(`${CLEAR}frame 1${CLEAR}mailgate: a note\na log line\n${CLEAR}frame 2${CLEAR}`);
  });

  it('fits the terminal width (a wrapped line could not be redrawn in place); no width: 80 columns', () => {
    expect(fitColumns('x'.repeat(50), 20)).toBe(`${'x'.repeat(18)}…`);
    expect(fitColumns('short', 20)).toBe('short');
    const out = Object.assign(new Capture(), { isTTY: true, columns: 0 });
    const line = new StatusLine(out, () => 'y'.repeat(200), 60_000);
    line.start();
    line.stop();
    expect(out.text.split(CLEAR)[1]).toBe(`${'y'.repeat(78)}…`);
  });
});

describe('startDisplay', () => {
  it('off a terminal: draws nothing and writes lines as they come', async () => {
    const out = new Capture();
    const display = startDisplay(out, { files: async function* () {}, messages: () => 0, counters: () => 'read 0' });
    display.at('/x', 1);
    display.print('mailgate: skipped x (not mail)\n');
    display.stop();
    await settle();
    expect(out.text).toBe('mailgate: skipped x (not mail)\n');
  });

  it('on a terminal: the bar beside the counters; lines printed through the Printer land above it', async () => {
    const out = Object.assign(new Capture(), { isTTY: true, columns: 200 });
    async function* one(): AsyncGenerator<SizedFile> {
      yield { path: '/in/a.mbox', size: 1000 };
    }
    const printer = new Printer(out);
    const display = startDisplay(out, { files: one, messages: () => 3, counters: () => 'read 3', everyMs: 60_000 });
    printer.via(display);
    display.at('/in/a.mbox', 500);
    await settle();
    printer.write('12:00:00.000 WARN  x\n');
    display.stop();
    printer.via(undefined);
    printer.write('summary\n');
    const frames = out.text.split(CLEAR);
    expect(frames[1]).toMatch(/^measuring input….* {2}\| {2}read 3$/);
    expect(frames[2]).toBe('12:00:00.000 WARN  x\n');
    expect(frames[3]).toMatch(/^\[██████████░░░░░░░░░░\] {2}50% {2}500 B \/ 1\.0 kB .* {2}\| {2}read 3$/);
    expect(frames[4]).toBe('summary\n');
  });
});

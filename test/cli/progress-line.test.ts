/**
 * The import's status line at 160 columns: the counters once came after the bar in full, so the
 * AI units (the figure that costs) were cut off the end. A busy run with every counter set still
 * fits; a dry run says what it would send, never "queued".
 */
import { describe, expect, it } from 'vitest';
import { liveLine, progressLine, type ImportSummary } from '../../src/cli/import/progress.js';
import { barText } from '../../src/cli/terminal/bar.js';
import { fitColumns } from '../../src/cli/terminal/status-line.js';

const busy: ImportSummary = {
  route: 'support',
  dryRun: false,
  skipped: 0,
  skippedBy: {},
  read: 1_234_567,
  parsed: 1_234_560,
  unreadable: 7,
  queued: 1_234_560,
  duplicates: 0,
  delivered: 1_200_000,
  unchanged: 30_000,
  rejected: 12,
  deadLettered: 19,
  aiUnits: 1_199_988,
  aiUnitsEstimated: 1_199_988,
  seconds: 600,
  messagesPerSecond: 2000,
};
const bar = barText({ done: 9_990_000_000, total: 12_340_000_000, bytesPerSecond: 999_900_000, messagesPerSecond: 99_999 });

describe('the import status line', () => {
  it('fits 160 columns with every counter set: AI units first, the least wanted counters left out', () => {
    const head = `${bar}  |  `;
    const line = `${head}${liveLine(busy, 159 - head.length)}`;
    expect(line.length).toBeLessThan(160);
    expect(fitColumns(line, 160)).toBe(line);
    expect(line).toMatch(/ {2}\| {2}AI units 1199988 · read 1234567 · queued 1234560 · delivered 1200000( · [a-z ]+ \d+)*$/);
    expect(liveLine(busy)).toBe(
      'AI units 1199988 · read 1234567 · parsed 1234560 · queued 1234560 · delivered 1200000 · unchanged 30000 · rejected 12 · dead letters 19',
    );
  });

  it('leaves out counters at 0 but read; the summary keeps them all', () => {
    const quiet = {
      ...busy,
      read: 0,
      parsed: 0,
      queued: 0,
      delivered: 0,
      unchanged: 0,
      rejected: 0,
      deadLettered: 0,
      aiUnits: 0,
      aiUnitsEstimated: 0,
    };
    expect(liveLine(quiet)).toBe('AI units 0 · read 0');
    expect(progressLine(quiet)).toBe('read 0  parsed 0  queued 0  delivered 0  unchanged 0  rejected 0  dead letters 0  AI units 0');
  });

  it('a dry run queues nothing: it says what it would send, and that the AI units are an estimate', () => {
    const dry = { ...busy, dryRun: true, delivered: 0, unchanged: 0 };
    expect(liveLine(dry)).toMatch(/^AI units 1199988 \(estimated\) · read 1234567 · parsed 1234560 · would send 1234560 ·/);
    expect(progressLine(dry)).not.toMatch(/queued/);
  });
});

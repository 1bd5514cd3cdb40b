/**
 * A Gmail or Graph mailbox logs under its own adapter instance, `<name>/<user>` (what its lease,
 * state, status and `{account}` name), with `mailbox` the user. Regression: the lines carried the
 * entry's name as `instance`, so a log query by the instance `mailgate status` shows found nothing.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createGmailAdapters } from '../../adapters/gmail/index.js';
import { startGmailStandIn } from '../../adapters/gmail/stand-in/index.js';
import { createGraphAdapters } from '../../adapters/graph/index.js';
import { startGraphStandIn } from '../../adapters/graph/stand-in/index.js';
import { createLogger } from '../../src/logger.js';
import type { Adapter } from '../../src/pipeline/types.js';
import { entryFor as graphEntry, MemorySink, until } from '../graph/setup.js';
import { entryFor as gmailEntry } from './setup.js';

type Line = Record<string, unknown>;

function capture(): { logger: ReturnType<typeof createLogger>; lines: Line[] } {
  const lines: Line[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l) as Line);
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', destination }), lines };
}

/** Runs the adapters until a line names `user`; those lines. */
async function linesAbout(adapters: Adapter[], lines: Line[], user: string): Promise<Line[]> {
  const stop = new AbortController();
  const done = Promise.all(adapters.map((a) => a.start(new MemorySink(), stop.signal)));
  try {
    await until(() => lines.some((l) => l['mailbox'] === user), `a line about ${user}`);
  } finally {
    stop.abort();
    await done;
  }
  return lines.filter((l) => l['mailbox'] === user);
}

describe('mailbox log lines name the adapter instance', () => {
  it('gmail: instance <name>/<user>', async () => {
    const standIn = await startGmailStandIn();
    try {
      // Not a mailbox of the stand-in's domain: the round fails, and says so in the log.
      const user = 'nobody@example.test';
      const { logger, lines } = capture();
      const about = await linesAbout(createGmailAdapters(gmailEntry(standIn, [user]), { logger }), lines, user);
      expect(about.length).toBeGreaterThan(0);
      for (const l of about) expect(l).toMatchObject({ adapter: 'gmail', instance: `workspace/${user}` });
    } finally {
      await standIn.close();
    }
  });

  it('graph: instance <name>/<user>', async () => {
    const standIn = await startGraphStandIn();
    try {
      const user = 'nobody@contoso.test';
      const { logger, lines } = capture();
      const about = await linesAbout(createGraphAdapters(graphEntry(standIn, [user]), { logger }), lines, user);
      expect(about.length).toBeGreaterThan(0);
      for (const l of about) expect(l).toMatchObject({ adapter: 'graph', instance: `m365/${user}` });
    } finally {
      await standIn.close();
    }
  });
});

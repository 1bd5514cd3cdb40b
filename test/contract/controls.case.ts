/**
 * Contract cases for controls: route pauses, mailbox states (a command's enable/disable, a
 * run of failures, a disable of its own) and folder sync states with their filtered counts.
 * Two connections see the same (every replica, `mailgate status`, a restart).
 */
import { describe, expect, it } from 'vitest';
import { expectCode, type ContractContext } from './store.case.js';

const pause = (route: string, code = 'MAILGATE_ERR_API_QUOTA') => ({
  route,
  target: 'acme/inbox',
  code,
  message: 'CommentQuotaHit: the project has reached its comment quota',
  since: '2026-01-01T00:00:00.000Z',
  until: '2026-01-01T00:01:00.000Z',
});

export function controlCases(ctx: ContractContext): void {
  describe('controls', () => {
    it('keeps route pauses, extends them in place, and forgets a resumed one', async () => {
      const s = ctx.store();
      await s.pauseRoute(pause('r1'));
      await s.pauseRoute(pause('r2', 'MAILGATE_ERR_API_UNAUTHORIZED'));
      await s.pauseRoute({ ...pause('r1'), until: '2026-01-01T00:02:00.000Z' });
      const other = await ctx.open();
      expect(await other.listRoutePauses()).toEqual([
        { ...pause('r1'), until: '2026-01-01T00:02:00.000Z' },
        pause('r2', 'MAILGATE_ERR_API_UNAUTHORIZED'),
      ]);
      expect(await other.resumeRoute('r1')).toBe(true);
      expect(await other.resumeRoute('r1')).toBe(false);
      expect((await s.listRoutePauses()).map((p) => p.route)).toEqual(['r2']);
    });

    it('records a mailbox state by parts: a field left out keeps its value', async () => {
      const s = ctx.store();
      expect(await s.mailboxState('imap:a')).toBeUndefined();
      await s.putMailboxState('imap:a', {
        enabled: true,
        failingSince: '2026-01-01T00:00:00.000Z',
        errorCode: 'MAILGATE_ERR_IMAP_AUTH',
        errorKind: 'bad_credentials',
        errorMessage: 'login refused',
      });
      await s.putMailboxState('imap:a', { enabled: false, reason: 'sync_error' });
      const other = await ctx.open();
      expect(await other.mailboxState('imap:a')).toMatchObject({
        mailbox: 'imap:a',
        enabled: false,
        reason: 'sync_error',
        errorKind: 'bad_credentials',
        errorCode: 'MAILGATE_ERR_IMAP_AUTH',
        errorMessage: 'login refused',
        byCommand: false,
        failingSince: '2026-01-01T00:00:00.000Z',
        filtered: 0,
        folders: [],
      });
      await other.putMailboxState('imap:a', {
        enabled: true,
        byCommand: true,
        reason: null,
        errorKind: null,
        errorCode: null,
        errorMessage: null,
        failingSince: null,
      });
      expect(await s.mailboxState('imap:a')).toMatchObject({
        enabled: true,
        byCommand: true,
        reason: null,
        errorKind: null,
        failingSince: null,
      });
    });

    it('keeps folder sync states and adds filtered counts; a mailbox known by its folders only is enabled', async () => {
      const s = ctx.store();
      await s.putFolderState('graph:c/u@x', 'inbox', { state: 'in_progress', behind: 40 });
      await s.countFiltered('graph:c/u@x', 'inbox', 3);
      await s.countFiltered('graph:c/u@x', 'inbox', 2);
      await s.countFiltered('graph:c/u@x', 'archive', 1);
      await s.putFolderState('graph:c/u@x', 'inbox', {
        state: 'up_to_date',
        syncedUntil: '2026-01-01T00:00:00.000Z',
        lastSynced: '2026-01-01T00:00:05.000Z',
      });
      await s.putFolderState('graph:c/u@x', 'inbox', { state: 'in_progress', behind: 2 });
      await s.putMailboxState('imap:b', { enabled: false, reason: 'user', byCommand: true });
      const all = await (await ctx.open()).listMailboxStates();
      expect(all.map((m) => m.mailbox)).toEqual(['graph:c/u@x', 'imap:b']);
      const [graph, imap] = all;
      expect(graph).toMatchObject({ enabled: true, byCommand: false, filtered: 6 });
      expect(graph!.folders.map(({ updatedAt: _u, ...f }) => f)).toEqual([
        { folder: 'archive', state: null, syncedUntil: null, lastSynced: null, behind: null, filtered: 1 },
        // A pass under way keeps what the last complete one reached.
        {
          folder: 'inbox',
          state: 'in_progress',
          syncedUntil: '2026-01-01T00:00:00.000Z',
          lastSynced: '2026-01-01T00:00:05.000Z',
          behind: 2,
          filtered: 5,
        },
      ]);
      expect(imap).toMatchObject({ enabled: false, reason: 'user', byCommand: true, folders: [] });
      await expectCode(s.countFiltered('imap:b', 'INBOX', -1), 'MAILGATE_ERR_STORE_INVALID_ARGUMENT');
    });

    it('counts parse attempts per key durably, and forgets them once cleared', async () => {
      const s = ctx.store();
      expect(await s.countParseAttempts('r', ['a', 'b'])).toEqual(
        new Map([
          ['a', 1],
          ['b', 1],
        ]),
      );
      const other = await ctx.open();
      expect(await other.countParseAttempts('r', ['a'])).toEqual(new Map([['a', 2]]));
      expect(await s.countParseAttempts('q', ['a'])).toEqual(new Map([['a', 1]]));
      await s.clearParseAttempts('r', ['a']);
      expect(await other.countParseAttempts('r', ['a', 'b'])).toEqual(
        new Map([
          ['a', 1],
          ['b', 2],
        ]),
      );
      expect(await s.countParseAttempts('r', [])).toEqual(new Map());
    });

    it('begins parse attempts: a first attempt for keys never counted, in one write; keys counted before are left as they are', async () => {
      const s = ctx.store();
      await s.countParseAttempts('r', ['b']);
      expect(await s.beginParseAttempts('r', ['a', 'b', 'c', 'a'])).toEqual(new Set(['a', 'c']));
      expect(await s.parseAttempts('r', ['a', 'b', 'c', 'd'])).toEqual(
        new Map([
          ['a', 1],
          ['b', 1],
          ['c', 1],
        ]),
      );
      const other = await ctx.open();
      expect(await other.beginParseAttempts('r', ['a', 'd'])).toEqual(new Set(['d']));
      expect(await other.beginParseAttempts('q', ['a'])).toEqual(new Set(['a']));
      expect(await s.beginParseAttempts('r', [])).toEqual(new Set());
      await s.clearParseAttempts('r', ['a', 'b', 'c', 'd']);
      expect(await other.parseAttempts('r', ['a', 'b', 'c', 'd'])).toEqual(new Map());
    });
  });
}

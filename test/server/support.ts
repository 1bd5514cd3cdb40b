/** ServerDeps for the server tests: the real preview, an in-memory dead-letter list, real metrics. */
import { GatewayError } from '../../src/errors.js';
import { createMetrics, type Metrics } from '../../src/metrics.js';
import {
  buildApp,
  localPreview,
  type DeadLetterDetailView,
  type DeadLetterPurge,
  type ReadyReport,
  type ServerDeps,
  type ServerOptions,
} from '../../src/server/index.js';

export const KEY = 'test-admin-key-0123456789';
export const OTHER_KEY = 'another-admin-key-abcdefgh';

export const SAMPLE = [
  'From: Ann Example <ann@example.com>',
  'To: Support <support@example.com>',
  'Subject: Invoice 1234 is wrong',
  'Date: Tue, 03 Mar 2026 10:15:00 +0000',
  'Message-ID: <invoice-1234@example.com>',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Hello,',
  '',
  'the amount on invoice 1234 is twice what we agreed.',
  '',
  'Best regards,',
  'Ann',
  '',
  'On Mon, 2 Mar 2026 at 09:00, Support <support@example.com> wrote:',
  '> Please find attached your invoice.',
  '',
].join('\r\n');

export const REPLY = [
  'From: Support <support@example.com>',
  'To: Ann Example <ann@example.com>',
  'Subject: Re: Invoice 1234 is wrong',
  'Date: Tue, 03 Mar 2026 11:45:00 +0000',
  'Message-ID: <reply-1@example.com>',
  'In-Reply-To: <invoice-1234@example.com>',
  'References: <invoice-1234@example.com>',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Hi Ann, we corrected it.',
  '',
].join('\r\n');

/** Subject, names and HTML body all try to run script. */
export const HOSTILE = [
  'From: "<img src=x onerror=window.__pwned=1>" <evil@example.com>',
  'To: victim@example.com',
  'Subject: <script>window.__pwned=1</script> urgent',
  'Date: Tue, 03 Mar 2026 12:00:00 +0000',
  'Message-ID: <hostile@example.com>',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<html><body><p>Click</p><script>window.__pwned=1</script><img src=x onerror="window.__pwned=1"><iframe src="javascript:window.__pwned=1"></iframe></body></html>',
  '',
].join('\r\n');

export interface Fixture {
  deps: ServerDeps;
  metrics: Metrics;
  dead: Map<number, DeadLetterDetailView>;
  purged: DeadLetterPurge[];
  readiness: { report: ReadyReport | Error };
}

function deadLetter(id: number, route: string): DeadLetterDetailView {
  return {
    id,
    route,
    key: `files:/in/${id}.eml:0`,
    commentId: `c${id}`,
    origin: { adapter: 'files', instance: 'drop', id: `/in/${id}.eml:0`, details: { path: `/in/${id}.eml`, index: 0 } },
    error: { code: 'MAILGATE_ERR_BATCH_REJECTED', message: 'rejected by the API' },
    attempts: 1,
    raw: Buffer.from(SAMPLE),
  };
}

export function fixture(): Fixture {
  const metrics = createMetrics({ processMetrics: false });
  const dead = new Map<number, DeadLetterDetailView>([1, 2, 3, 4, 5].map((id) => [id, deadLetter(id, id <= 3 ? 'support' : 'sales')]));
  const purged: DeadLetterPurge[] = [];
  const readiness: Fixture['readiness'] = { report: { ok: true, checks: { store: { ok: true } } } };
  const deps: ServerDeps = {
    ...localPreview(),
    metrics,
    async ready() {
      if (readiness.report instanceof Error) throw readiness.report;
      return readiness.report;
    },
    async status() {
      return {
        store: { kind: 'memory' },
        routes: [{ route: 'support', queued: 2 }],
        adapters: [{ kind: 'imap', name: 'support-inbox', state: 'idle' }],
      };
    },
    deadLetters: {
      async list(q) {
        return [...dead.values()]
          .filter((d) => (q.route === undefined || d.route === q.route) && (q.after === undefined || d.id > q.after))
          .slice(0, q.limit)
          .map(({ raw: _raw, ...rest }) => rest);
      },
      async get(id) {
        return dead.get(id);
      },
      async replay(id) {
        if (!dead.has(id)) throw new GatewayError('MAILGATE_ERR_STORE_NOT_FOUND', `no dead letter ${id}`);
        dead.delete(id);
        return { id, status: 'queued' };
      },
      async purge(filter) {
        purged.push(filter);
        let n = 0;
        for (const d of [...dead.values()]) {
          if (filter.all || ((filter.ids?.includes(d.id) ?? true) && (filter.route === undefined || d.route === filter.route))) {
            dead.delete(d.id);
            n++;
          }
        }
        return n;
      },
    },
    async previewItem(id) {
      if (id !== 7) return undefined;
      const p = await localPreview().preview(Buffer.from(SAMPLE), {});
      return { id, route: 'support', ...p };
    },
  };
  return { deps, metrics, dead, purged, readiness };
}

export function app(options: Partial<ServerOptions> = {}, f: Fixture = fixture()) {
  return { app: buildApp({ api_keys: [KEY, OTHER_KEY], ...options }, f.deps), f };
}

export const auth = (key = KEY) => ({ authorization: `Bearer ${key}` });

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { MAIN, requireBuild, ROOT, runMailgate } from './support/dist.js';

/** Starts `mailgate emulator` with these arguments and resolves with its URL once it listens. */
async function start(args: string[]): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
  requireBuild();
  const child = spawn(process.execPath, [MAIN, 'emulator', '--port', '0', ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (d: string) => {
      out += d;
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`emulator exited early with ${code}: ${out}`)));
  });
  return { child, url };
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null) return child.exitCode;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const [code] = await exited;
  return code as number | null;
}

const doc = (n: number, body: Record<string, string> = { plain: `message ${n}` }) => ({
  raw_email: { headers: { raw: `Message-ID: <cli-${n}@example.com>\r\nSubject: s${n}\r\nFrom: a@example.com` }, body },
});

describe('mailgate emulator', () => {
  it('listens on a free port, answers with the token, and closes on SIGTERM', async () => {
    const { child, url } = await start(['--token', 'secret-token']);
    try {
      const unauthorized = await fetch(`${url}/api/v1/sources/acme/support/sync-raw-emails`, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(unauthorized.status).toBe(401);
      expect(await stop(child)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('takes every emulator option as a flag', async () => {
    const { child, url } = await start([
      '--token',
      'one',
      '--token',
      'two',
      '--transform-tag',
      'acme.0.AAAAAAAA',
      '--transform-tag',
      'acme.1.BBBBBBBB',
      '--max-sync-documents',
      '2',
      '--max-predict-documents',
      '1',
      '--auto-create-sources',
      '--allow-no-charge',
      '--no-require-transform-tag',
      '--no-empty-documents',
      '--model-versions',
      '3',
      '--live-version',
      '3',
      '--staging-version',
      '2',
      '--bodies',
      'at-least-one',
      '--comments-shape',
      'with-thread-properties',
      '--label-names',
      'string',
      '--body-limit',
      '65536',
    ]);
    const call = (path: string, body: unknown, token = 'two') =>
      fetch(url + path, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (r) => ({ status: r.status, json: (await r.json()) as any }));
    const sync = '/api/v1/sources/acme/auto/sync-raw-emails';
    try {
      // --auto-create-sources, second --transform-tag, --allow-no-charge, --bodies at-least-one, --comments-shape
      const first = await call(
        `${sync}?no_charge=true`,
        { documents: [doc(1, { plain: 'p', html: '<p>h</p>' })], transform_tag: 'acme.1.BBBBBBBB', include_comments: true },
        'one',
      );
      expect(first.status).toBe(200);
      expect(first.json).toMatchObject({
        new: 1,
        comments: [{ comment: { id: expect.any(String) }, thread_properties: { num_messages: 1 } }],
      });
      // the default tag is no longer accepted; --no-require-transform-tag uses the first listed one
      expect((await call(sync, { documents: [doc(2)], transform_tag: 'generic.0.CONVKER5' })).status).toBe(422);
      expect((await call(sync, { documents: [doc(2)] })).status).toBe(200);
      // --max-sync-documents, --no-empty-documents, --body-limit
      expect((await call(sync, { documents: [doc(3), doc(4), doc(5)] })).json.message).toMatch(/at most 2 documents/);
      expect((await call(sync, { documents: [] })).status).toBe(400);
      expect((await call(sync, { documents: [doc(6, { plain: 'x'.repeat(70_000) })] })).status).toBe(413);
      // --model-versions / --live-version / --max-predict-documents / --label-names
      expect(
        (
          await fetch(`${url}/api/v1/datasets/acme/triage`, {
            method: 'PUT',
            headers: { authorization: 'Bearer one', 'content-type': 'application/json' },
            body: '{"dataset":{}}',
          })
        ).status,
      ).toBe(200);
      const predicted = await call('/api/v1/datasets/acme/triage/labellers/live/predict-raw-emails', {
        documents: [doc(7, { plain: 'I want a refund' })],
      });
      expect(predicted.json).toMatchObject({
        model: { version: 3 },
        predictions: [expect.arrayContaining([expect.objectContaining({ name: 'Billing > Refund' })])],
      });
      expect((await call('/api/v1/datasets/acme/triage/labellers/3/predict-raw-emails', { documents: [doc(8), doc(9)] })).status).toBe(400);
      expect((await call('/api/v1/datasets/acme/triage/labellers/4/predict-raw-emails', { documents: [doc(8)] })).status).toBe(404);
      expect(((await (await fetch(`${url}/_emulator/stats`)).json()) as { ai_units: number }).ai_units).toBe(2); // no_charge billed nothing
      expect(await stop(child)).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  it('names a busy port and the fix in one line, without a stack trace', async () => {
    const { child, url } = await start(['--token', 't']);
    try {
      const port = new URL(url).port;
      const run = await runMailgate(['emulator', '--port', port, '--token', 't']);
      expect(run.code).toBe(1);
      expect(run.stderr.trim()).toBe(
        `mailgate: MAILGATE_ERR_SERVICE_LISTEN: cannot listen on 127.0.0.1:${port}: the address is already in use by another process (EADDRINUSE). Pass another --port, or --port 0 for a free one`,
      );
    } finally {
      await stop(child);
    }
  });

  it('requires a token', async () => {
    expect((await runMailgate(['emulator', '--port', '0'])).code).toBe(2);
  });

  it.each([
    [['--max-sync-documents', '16385'], /max-sync-documents/],
    [['--bodies', 'both'], /expected one of exactly-one, at-least-one/],
    [['--live-version', '5'], /MAILGATE_ERR_EMULATOR_OPTIONS_INVALID|liveVersion/],
  ])('refuses %j', async (args, message) => {
    const run = await runMailgate(['emulator', '--port', '0', '--token', 't', ...args]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(message);
  });
});

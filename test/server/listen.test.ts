import { describe, expect, it } from 'vitest';
import { app, auth, SAMPLE } from './support.js';

describe('a real listening server', () => {
  it('answers probes, metrics, the admin API and the preview over TCP on a free port, then closes', async () => {
    const { app: a } = app();
    const address = await a.listen({ host: '127.0.0.1', port: 0 });
    try {
      expect(address).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(await (await fetch(`${address}/livez`)).json()).toEqual({ status: 'ok' });
      const metrics = await fetch(`${address}/metrics`);
      expect(metrics.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      expect(await metrics.text()).toContain('# TYPE mailgate_outbox_depth gauge');
      expect((await fetch(`${address}/api/status`)).status).toBe(401);
      expect((await fetch(`${address}/api/status`, { headers: auth() })).status).toBe(200);
      const res = await fetch(`${address}/api/preview`, {
        method: 'POST',
        headers: { 'content-type': 'message/rfc822', ...auth() },
        body: SAMPLE,
      });
      expect(res.status).toBe(200);
      expect(
        ((await res.json()) as { comment: { messages: Array<{ subject: { text: string } }> } }).comment.messages[0]!.subject.text,
      ).toBe('Invoice 1234 is wrong');
      const page = await fetch(`${address}/preview`);
      expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'; style-src 'nonce-[A-Za-z0-9+/=]+'/);
      const script = await fetch(`${address}/preview/app.js`);
      expect(script.status).toBe(200);
      expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    } finally {
      await a.close();
    }
    await expect(fetch(`${address}/livez`)).rejects.toThrow();
  });
});

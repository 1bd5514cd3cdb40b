/**
 * The stand-in's batch endpoint (developers.google.com/workspace/gmail/api/guides/batch): a
 * `multipart/mixed` body of `application/http` parts, each a request line, headers and an
 * optional JSON body; at most `limit` calls. The answer is `multipart/mixed` with one
 * `application/http` part per call, in order, its Content-ID `response-<the call's id>`. Every
 * call is authorized with the outer request's token and metered on its own.
 */
import { randomBytes } from 'node:crypto';
import { apiError, type Reply } from './resources.js';

type Call = (method: string, path: string, query: URLSearchParams, body: unknown) => Reply;

const REASONS: Record<number, string> = {
  200: 'OK',
  204: 'No Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  429: 'Too Many Requests',
};

export function batchReply(contentType: string, text: string, limit: number, seen: (calls: number) => void, call: Call): Reply {
  const b = /boundary="?([^";]+)"?/i.exec(contentType)?.[1];
  if (!/^multipart\/mixed/i.test(contentType) || b === undefined)
    return apiError(400, 'badRequest', 'A batch request is multipart/mixed with a boundary.');
  const parts = text
    .split(`--${b}`)
    .map((p) => p.replace(/^\r?\n/, ''))
    .filter((p) => p.trim() !== '' && !p.startsWith('--'));
  if (parts.length > limit) return apiError(400, 'badRequest', `A batch request may hold at most ${limit} calls.`);
  seen(parts.length);
  const out = randomBytes(8).toString('hex');
  const answers = parts.map((p, i) => {
    const [outer, ...rest] = p.split(/\r?\n\r?\n/);
    const id = /content-id:\s*<?([^>\r\n]+)>?/i.exec(outer ?? '')?.[1] ?? String(i + 1);
    const inner = rest.join('\r\n\r\n');
    const [head, ...bodyParts] = inner.split(/\r?\n\r?\n/);
    const [line] = (head ?? '').split(/\r?\n/);
    const m = /^(GET|POST|PUT|PATCH|DELETE) (\S+)/.exec(line ?? '');
    let reply: Reply;
    if (!m) reply = apiError(400, 'badRequest', 'A batch part holds one HTTP request.');
    else {
      const u = new URL(m[2]!, 'http://batch');
      const bodyText = bodyParts.join('\r\n\r\n').trim();
      let body: unknown;
      try {
        body = bodyText === '' ? undefined : JSON.parse(bodyText);
      } catch {
        body = undefined;
      }
      reply = call(m[1]!, u.pathname, u.searchParams, body);
    }
    const payload = reply.body === undefined ? '' : JSON.stringify(reply.body);
    return (
      `--${out}\r\nContent-Type: application/http\r\nContent-ID: <response-${id}>\r\n\r\n` +
      `HTTP/1.1 ${reply.status} ${REASONS[reply.status] ?? 'Status'}\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n${payload}\r\n`
    );
  });
  return { status: 200, headers: { 'content-type': `multipart/mixed; boundary=${out}` }, body: `${answers.join('')}--${out}--\r\n` };
}

/**
 * A local OAuth2 authorization server for tests: a token endpoint (refresh_token and
 * client_credentials grants) and an RFC 7662 introspection endpoint that Dovecot's oauth2
 * passdb calls (`introspection_mode = post`).
 */
import { createServer, type IncomingMessage } from 'node:http';

export interface OAuthServer {
  readonly url: string;
  readonly tokenUrl: string;
  readonly introspectionUrl: string;
  /** Token requests answered with a token. */
  readonly issued: number;
  /** Lifetime given to new tokens, in seconds. */
  expiresIn: number;
  /** When set, each refresh answer carries a new refresh token (rotation). */
  rotate: boolean;
  /** Valid refresh tokens, each bound to a user. */
  readonly refreshTokens: Map<string, string>;
  /** Valid client credentials: client id → { secret, user the app acts for }. */
  readonly clients: Map<string, { secret: string; user: string }>;
  revokeAll(): void;
  close(): Promise<void>;
}

async function form(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export async function startOAuthServer(): Promise<OAuthServer> {
  const tokens = new Map<string, { user: string; expiresAt: number }>();
  const refreshTokens = new Map<string, string>();
  const clients = new Map<string, { secret: string; user: string }>();
  let seq = 0;
  const state = { issued: 0, expiresIn: 3600, rotate: false };

  const server = createServer(async (req, res) => {
    const body = await form(req);
    const json = (status: number, value: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(value));
    };
    if (req.url === '/token') {
      let user: string | undefined;
      if (body.get('grant_type') === 'refresh_token') user = refreshTokens.get(body.get('refresh_token') ?? '');
      if (body.get('grant_type') === 'client_credentials') {
        const client = clients.get(body.get('client_id') ?? '');
        if (client !== undefined && client.secret === body.get('client_secret')) user = client.user;
      }
      if (user === undefined) return json(400, { error: 'invalid_grant', error_description: 'unknown refresh token or client' });
      const token = `at-${++seq}-${user}`;
      tokens.set(token, { user, expiresAt: Date.now() + state.expiresIn * 1000 });
      state.issued += 1;
      const answer: Record<string, unknown> = { access_token: token, token_type: 'Bearer', expires_in: state.expiresIn };
      if (state.rotate && body.get('grant_type') === 'refresh_token') {
        const next = `rt-${seq}`;
        refreshTokens.delete(body.get('refresh_token') ?? '');
        refreshTokens.set(next, user);
        answer['refresh_token'] = next;
      }
      return json(200, answer);
    }
    if (req.url === '/introspect') {
      const t = tokens.get(body.get('token') ?? '');
      if (t === undefined || t.expiresAt < Date.now()) return json(200, { active: false });
      return json(200, { active: true, username: t.user });
    }
    json(404, { error: 'not_found' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const url = `http://127.0.0.1:${typeof addr === 'object' && addr !== null ? addr.port : 0}`;
  return {
    url,
    tokenUrl: `${url}/token`,
    introspectionUrl: `${url}/introspect`,
    get issued() {
      return state.issued;
    },
    get expiresIn() {
      return state.expiresIn;
    },
    set expiresIn(v: number) {
      state.expiresIn = v;
    },
    get rotate() {
      return state.rotate;
    },
    set rotate(v: boolean) {
      state.rotate = v;
    },
    refreshTokens,
    clients,
    revokeAll: () => tokens.clear(),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

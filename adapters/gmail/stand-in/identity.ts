/**
 * The stand-in's Google identity side: the OAuth 2.0 token endpoint with the two grants mailgate
 * uses — the JWT-bearer grant of a service account (developers.google.com/identity/protocols/
 * oauth2/service-account: an RS256 assertion naming the service account as `iss`, the user as
 * `sub`, the scopes, the token endpoint as `aud`; `unauthorized_client` when the user's domain
 * has not granted the service account domain-wide delegation) and the refresh-token grant — and
 * the OIDC tokens Pub/Sub push puts on each request (an RS256 JWT with a `kid`, `iss`
 * accounts.google.com, the subscription's audience and service account email), with the
 * certificate list a verifier reads.
 */
import { createPublicKey, createSign, generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';

export interface IssuedToken {
  user: string;
  scopes: string[];
  expiresAt: number;
}

export interface TokenReply {
  status: number;
  body: unknown;
}

export interface RefreshClient {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  user: string;
}

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

function signJwt(header: Record<string, unknown>, claims: Record<string, unknown>, key: KeyObject): string {
  const input = `${b64(header)}.${b64(claims)}`;
  const s = createSign('RSA-SHA256').update(input).sign(key).toString('base64url');
  return `${input}.${s}`;
}

export class Identity {
  readonly tokens = new Map<string, IssuedToken>();
  readonly serviceAccount: { email: string; keyId: string; privateKeyPem: string; publicKey: KeyObject };
  /** The key Pub/Sub push tokens are signed with (published at the certs URL under its kid). */
  private readonly pushKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
  readonly pushKid = randomBytes(8).toString('hex');
  readonly refreshClients: RefreshClient[] = [];
  /** Token requests answered with a token, and refused. */
  issued = 0;
  refused = 0;
  /** Users whose domain granted the service account delegation; others get unauthorized_client. */
  readonly undelegated = new Set<string>();
  /** Whether a user exists in the domain (others cannot be impersonated). */
  known: (user: string) => boolean = () => true;

  constructor(public tokenLifetimeS: number) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.serviceAccount = {
      email: 'mailgate-reader@stand-in-project.iam.gserviceaccount.com',
      keyId: randomBytes(20).toString('hex'),
      privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      publicKey,
    };
  }

  /** The service account's JSON key file, as the Cloud console hands it out. */
  keyFile(tokenUri: string): Record<string, string> {
    const sa = this.serviceAccount;
    return {
      type: 'service_account',
      project_id: 'stand-in-project',
      private_key_id: sa.keyId,
      private_key: sa.privateKeyPem,
      client_email: sa.email,
      client_id: '100000000000000000001',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: tokenUri,
    };
  }

  token(form: URLSearchParams, tokenUrl: string): TokenReply {
    const refuse = (error: string, description: string, status = 400): TokenReply => {
      this.refused += 1;
      return { status, body: { error, error_description: description } };
    };
    const grant = form.get('grant_type');
    let user: string;
    let scopes: string[];
    if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      const checked = this.checkAssertion(form.get('assertion') ?? '', tokenUrl);
      if (typeof checked === 'string') return refuse('invalid_grant', checked);
      if (!this.known(checked.sub.toLowerCase())) return refuse('invalid_grant', 'Invalid email or User ID');
      if (this.undelegated.has(checked.sub.toLowerCase()))
        return refuse(
          'unauthorized_client',
          'Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.',
          401,
        );
      user = checked.sub;
      scopes = checked.scope.split(' ');
    } else if (grant === 'refresh_token') {
      const c = this.refreshClients.find((r) => r.clientId === form.get('client_id'));
      if (c === undefined || c.clientSecret !== form.get('client_secret'))
        return refuse('invalid_client', 'The OAuth client was not found.', 401);
      if (c.refreshToken !== form.get('refresh_token')) return refuse('invalid_grant', 'Token has been expired or revoked.');
      user = c.user;
      scopes = ['https://www.googleapis.com/auth/gmail.modify'];
    } else return refuse('unsupported_grant_type', `Invalid grant_type: ${grant}`);
    const token = `ya29.${randomBytes(32).toString('base64url')}`;
    this.tokens.set(token, { user: user.toLowerCase(), scopes, expiresAt: Date.now() + this.tokenLifetimeS * 1000 });
    this.issued += 1;
    return { status: 200, body: { access_token: token, expires_in: this.tokenLifetimeS, token_type: 'Bearer', scope: scopes.join(' ') } };
  }

  private checkAssertion(jwt: string, tokenUrl: string): { sub: string; scope: string } | string {
    const [h, p, s] = jwt.split('.');
    if (!h || !p || !s) return 'Invalid JWT: not three segments.';
    let header: { alg?: string };
    let claims: { iss?: string; sub?: string; aud?: string; scope?: string; exp?: number; iat?: number };
    try {
      header = JSON.parse(Buffer.from(h, 'base64url').toString()) as typeof header;
      claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as typeof claims;
    } catch {
      return 'Invalid JWT: segments are not JSON.';
    }
    if (header.alg !== 'RS256') return 'Invalid JWT: alg must be RS256.';
    if (!verify('sha256', Buffer.from(`${h}.${p}`), this.serviceAccount.publicKey, Buffer.from(s, 'base64url')))
      return 'Invalid JWT Signature.';
    if (claims.iss !== this.serviceAccount.email) return 'Invalid JWT: iss is not a known service account.';
    if (claims.aud !== tokenUrl)
      return `Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. aud must be ${tokenUrl}.`;
    const now = Math.floor(Date.now() / 1000);
    if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number' || claims.exp < now || claims.exp - claims.iat > 3600)
      return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.';
    if (!claims.sub) return 'Invalid JWT: sub (the user to impersonate) is missing.';
    if (!(claims.scope ?? '').split(' ').some((x) => x.startsWith('https://www.googleapis.com/auth/gmail.')))
      return 'Invalid OAuth scope or ID token audience provided.';
    return { sub: claims.sub, scope: claims.scope ?? '' };
  }

  /** Every token issued so far stops being valid now. */
  expireAll(): void {
    for (const t of this.tokens.values()) t.expiresAt = Date.now() - 1;
  }

  /** The token's user, or the reason it is refused. */
  check(authorization: string | undefined): IssuedToken | string {
    const m = /^Bearer (\S+)$/i.exec(authorization ?? '');
    if (!m) return 'Request is missing required authentication credential.';
    const t = this.tokens.get(m[1]!);
    if (t === undefined || t.expiresAt <= Date.now())
      return 'Request had invalid authentication credentials. Expected OAuth 2 access token.';
    return t;
  }

  /** The certificate list at the certs URL: kid → PEM (public keys here; Google serves X.509 certificates). */
  certs(): Record<string, string> {
    return { [this.pushKid]: createPublicKey(this.pushKey.privateKey).export({ type: 'spki', format: 'pem' }).toString() };
  }

  /** A Pub/Sub push token for `audience` naming `email`; `forge` signs with another key (a forged push). */
  pushToken(audience: string, email: string, forge = false): string {
    const now = Math.floor(Date.now() / 1000);
    const key = forge ? generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey : this.pushKey.privateKey;
    return signJwt(
      { alg: 'RS256', kid: this.pushKid, typ: 'JWT' },
      {
        aud: audience,
        azp: '113774264463038321964',
        email,
        email_verified: true,
        exp: now + 3600,
        iat: now,
        iss: 'https://accounts.google.com',
        sub: '113774264463038321964',
      },
      key,
    );
  }
}

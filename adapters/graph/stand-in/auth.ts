/**
 * The stand-in's Microsoft identity platform: the OpenID metadata document a library reads
 * (`/{tenant}/v2.0/.well-known/openid-configuration`) and the token endpoint
 * (`/{tenant}/oauth2/v2.0/token`) of the client-credentials grant, with a client secret or a
 * certificate-signed client assertion (learn.microsoft.com/entra/identity-platform/
 * v2-oauth2-client-creds-grant-flow). Tokens are opaque strings with a lifetime; the Graph side
 * checks them.
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';

export interface StandInClient {
  clientId: string;
  secret?: string;
  /** PEM certificate (or public key) whose private key signs client assertions. */
  certificate?: string;
}

export interface IssuedToken {
  tenant: string;
  clientId: string;
  expiresAt: number;
}

export interface AuthReply {
  status: number;
  body: unknown;
}

export class Identity {
  readonly tokens = new Map<string, IssuedToken>();
  /** Token requests answered with a token. */
  issued = 0;
  private readonly keys = new Map<string, KeyObject>();

  constructor(
    readonly tenant: string,
    private readonly clients: StandInClient[],
    public tokenLifetimeS: number,
  ) {
    for (const c of clients) if (c.certificate) this.keys.set(c.clientId, createPublicKey(c.certificate));
  }

  metadata(base: string, tenant: string): AuthReply {
    if (tenant !== this.tenant && tenant !== 'organizations') return { status: 400, body: { error: 'invalid_tenant' } };
    const t = `${base}/${this.tenant}`;
    return {
      status: 200,
      body: {
        token_endpoint: `${t}/oauth2/v2.0/token`,
        token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        jwks_uri: `${base}/${this.tenant}/discovery/v2.0/keys`,
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        issuer: `${t}/v2.0`,
        authorization_endpoint: `${t}/oauth2/v2.0/authorize`,
        end_session_endpoint: `${t}/oauth2/v2.0/logout`,
        tenant_region_scope: 'EU',
      },
    };
  }

  token(tenant: string, form: URLSearchParams, tokenUrl: string): AuthReply {
    const refuse = (error: string, description: string, status = 400): AuthReply => ({
      status,
      body: { error, error_description: description, error_codes: [], timestamp: new Date().toISOString() },
    });
    if (tenant !== this.tenant) return refuse('invalid_request', `AADSTS90002: Tenant '${tenant}' not found.`);
    if (form.get('grant_type') !== 'client_credentials')
      return refuse('unsupported_grant_type', 'AADSTS70003: only client_credentials here.');
    const client = this.clients.find((c) => c.clientId === form.get('client_id'));
    if (client === undefined) return refuse('unauthorized_client', 'AADSTS700016: Application not found in the directory.');
    if (!(form.get('scope') ?? '').split(' ').some((s) => s.endsWith('/.default')))
      return refuse(
        'invalid_scope',
        'AADSTS1002012: The provided value for scope is not valid (client credentials need <resource>/.default).',
      );
    const secret = form.get('client_secret');
    const assertion = form.get('client_assertion');
    if (secret !== null) {
      if (client.secret === undefined || secret !== client.secret)
        return refuse('invalid_client', 'AADSTS7000215: Invalid client secret provided.', 401);
    } else if (assertion !== null) {
      const why = this.checkAssertion(client, assertion, tokenUrl);
      if (why !== undefined) return refuse('invalid_client', `AADSTS700027: Client assertion failed: ${why}`, 401);
    } else return refuse('invalid_client', 'AADSTS7000216: client_secret or client_assertion is required.', 401);
    const token = `eyJ0eXAiOiJKV1Qi.${randomBytes(24).toString('base64url')}`;
    this.tokens.set(token, { tenant, clientId: client.clientId, expiresAt: Date.now() + this.tokenLifetimeS * 1000 });
    this.issued += 1;
    return {
      status: 200,
      body: { token_type: 'Bearer', expires_in: this.tokenLifetimeS, ext_expires_in: this.tokenLifetimeS, access_token: token },
    };
  }

  /** Every token issued so far stops being valid now (a token expiring mid-sync). */
  expireAll(): void {
    for (const t of this.tokens.values()) t.expiresAt = Date.now() - 1;
  }

  /** undefined when `authorization` carries a valid token, else the reason. */
  check(authorization: string | undefined): string | undefined {
    const m = /^Bearer (\S+)$/i.exec(authorization ?? '');
    if (!m) return 'Access token is empty.';
    const t = this.tokens.get(m[1]!);
    if (t === undefined) return 'Invalid JWT token.';
    if (t.expiresAt <= Date.now()) return 'Lifetime validation failed, the token is expired.';
    return undefined;
  }

  private checkAssertion(client: StandInClient, jwt: string, tokenUrl: string): string | undefined {
    const key = this.keys.get(client.clientId);
    if (key === undefined) return 'no certificate registered for the application';
    const [h, p, s] = jwt.split('.');
    if (!h || !p || !s) return 'not a JWT';
    const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string };
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { aud?: string; iss?: string; sub?: string; exp?: number };
    const alg = header.alg === 'PS256' ? { padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 } : {};
    if (!verify('sha256', Buffer.from(`${h}.${p}`), { key, ...alg }, Buffer.from(s, 'base64url'))) return 'signature does not verify';
    if (claims.iss !== client.clientId || claims.sub !== client.clientId) return 'iss and sub must be the client id';
    // A library behind a loopback rewrite signs for the https form of the same address.
    const bare = (u: string | undefined) => (u ?? '').replace(/^https?:/, '');
    if (bare(claims.aud) !== bare(tokenUrl)) return `aud must be ${tokenUrl}`;
    if ((claims.exp ?? 0) * 1000 < Date.now()) return 'expired';
    return undefined;
  }
}

/**
 * The SMTP/LMTP adapter (kind `smtp`, push mode): a listener on its own port whose 250 is the
 * acknowledgement, given only once the message is durable in the outbox (`Intake.accept` with `whenFull: 'refuse'`).
 * Unknown recipients are refused at RCPT (550), a message over the limit with 552 (SIZE at
 * MAIL FROM, else at the end of DATA, never buffered past the limit), a store that cannot take
 * it with 451 so that the sending server keeps it and retries. LMTP answers each recipient
 * after its route's item is stored.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import {
  SMTPServer,
  type SMTPServerAuthentication,
  type SMTPServerDataStream,
  type SMTPServerOptions,
  type SMTPServerSession,
} from 'smtp-server';
import { CORE_ERRORS, GatewayError, isGatewayError } from '../../src/errors.js';
import type { Logger } from '../../src/logger.js';
import type { Accepted, Adapter, AdapterHealth, Inbound, Intake } from '../../src/pipeline/types.js';
import type { SmtpEntry } from './config.js';
import { byRoute, inboundOf, readData, receivedHeader } from './message.js';
import { allowList, coalesceReplies, isLoopback, parseListen, plainAddress } from './network.js';
import { recipientMatcher, type RecipientMatch } from './recipients.js';
import { SessionGuard } from './session-guard.js';
import { verifyMessage, type DnsResolver } from './verify.js';

type Callback = (err?: Error | null) => void;

/** An error smtp-server answers with `code` and `text`. */
function reply(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

interface Counters {
  connections: number;
  accepted: number;
  duplicates: number;
  deferred: number;
  refusedRecipients: number;
  refusedClients: number;
  /** Connections refused because their address held max_connections_per_client already. */
  refusedBusyClients: number;
  /** Connections closed by the DATA or session deadline. */
  deadlines: number;
  oversized: number;
  aborted: number;
}

export class SmtpAdapter implements Adapter {
  readonly kind = 'smtp';
  readonly mode = 'push' as const;
  readonly name: string;
  private readonly log: Logger;
  private readonly match: (address: string) => RecipientMatch | undefined;
  private readonly allowed: ((address: string) => boolean) | undefined;
  private readonly users: Array<{ user: string; pass: Buffer }>;
  private readonly serverName: string;
  private state: 'starting' | 'listening' | 'stopped' | 'failed' = 'starting';
  private address: string | undefined;
  private lastError: { code: string; message: string } | undefined;
  private readonly counters: Counters = {
    connections: 0,
    accepted: 0,
    duplicates: 0,
    deferred: 0,
    refusedRecipients: 0,
    refusedClients: 0,
    refusedBusyClients: 0,
    deadlines: 0,
    oversized: 0,
    aborted: 0,
  };
  /** Transactions whose submit is under way: shutdown waits for them. */
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly guard: SessionGuard;

  constructor(
    private readonly entry: SmtpEntry,
    logger: Logger,
    /** DNS for `authenticate` (tests replace it); default: the system resolver. */
    private readonly resolver?: DnsResolver,
  ) {
    this.name = entry.name;
    this.log = logger.child({ adapter: 'smtp', instance: entry.name });
    this.match = recipientMatcher(entry);
    this.allowed = entry.allow_from ? allowList(entry.allow_from) : undefined;
    this.users = (entry.auth?.users ?? []).map((u) => ({ user: u.user, pass: digest(u.pass) }));
    this.serverName = entry.hostname ?? hostname();
    parseListen(entry.listen);
    this.guard = new SessionGuard(
      { perClient: entry.max_connections_per_client, dataTimeoutMs: entry.data_timeout_ms, sessionTimeoutMs: entry.session_timeout_ms },
      (reason, client) => {
        if (reason === 'client') this.counters.refusedBusyClients++;
        else this.counters.deadlines++;
        this.log.info({ remoteAddress: client, reason }, `smtp client ${reason === 'client' ? 'refused' : 'disconnected'}: ${reason}`);
      },
    );
  }

  health(): AdapterHealth[] {
    const line: AdapterHealth = {
      name: this.name,
      ok: this.state === 'listening',
      state: this.state,
      detail: { protocol: this.entry.lmtp ? 'lmtp' : 'smtp', address: this.address ?? this.entry.listen, ...this.counters },
    };
    if (this.lastError) line.lastError = this.lastError;
    return [line];
  }

  /** The bound address once listening (tests and logs; port 0 picks one). */
  listening(): { host: string; port: number } | undefined {
    if (this.address === undefined) return undefined;
    const i = this.address.lastIndexOf(':');
    return { host: this.address.slice(0, i).replace(/^\[|\]$/g, ''), port: Number(this.address.slice(i + 1)) };
  }

  async start(push: Intake, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    const server = new SMTPServer(await this.options(push));
    this.guard.attach(server);
    server.on('error', (err: Error) => this.log.warn({ err }, 'smtp connection error'));
    server.server.on('connection', coalesceReplies);
    try {
      await this.listen(server);
    } catch (err) {
      this.state = 'failed';
      const e = isGatewayError(err) ? err : new GatewayError('MAILGATE_ERR_SMTP_LISTEN', String(err));
      this.lastError = { code: e.code, message: e.message };
      throw e;
    }
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    this.state = 'stopped';
    // smtp-server's close(): no new connections; open ones get close_timeout_ms to finish.
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.allSettled([...this.inFlight]);
    this.log.info({ ...this.counters }, 'smtp listener closed');
  }

  private listen(server: SMTPServer): Promise<void> {
    const { host, port } = parseListen(this.entry.listen);
    return new Promise<void>((resolve, reject) => {
      const onError = (err: NodeJS.ErrnoException) => {
        reject(
          new GatewayError(
            'MAILGATE_ERR_SMTP_LISTEN',
            `smtp ${this.name} cannot listen on ${this.entry.listen}: ${err.code ?? err.message}`,
            { cause: err },
          ),
        );
      };
      server.server.once('error', onError);
      server.listen(port, host, () => {
        server.server.off('error', onError);
        const a = server.server.address();
        if (a !== null && typeof a === 'object') this.address = a.family === 'IPv6' ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
        this.state = 'listening';
        this.log.info(
          { address: this.address, lmtp: this.entry.lmtp },
          `${this.entry.lmtp ? 'LMTP' : 'SMTP'} listening on ${this.address}`,
        );
        resolve();
      });
    });
  }

  private async options(push: Intake): Promise<SMTPServerOptions> {
    const e = this.entry;
    const tls = e.tls ? await this.tlsFiles(e.tls) : undefined;
    const auth = this.users.length > 0;
    const disabled = [...(tls ? [] : ['STARTTLS']), ...(auth ? [] : ['AUTH'])];
    // With TLS, AUTH is neither offered nor taken before STARTTLS (every client, loopback too).
    const beforeTls = tls && auth ? [...disabled, 'AUTH'] : undefined;
    return {
      lmtp: e.lmtp,
      name: this.serverName,
      ...(e.banner !== undefined && { banner: e.banner }),
      size: e.max_message_bytes,
      maxClients: e.max_connections,
      maxRecipients: e.max_recipients,
      socketTimeout: e.socket_timeout_ms,
      closeTimeout: e.close_timeout_ms,
      disableReverseLookup: true,
      logger: false,
      disabledCommands: disabled,
      authOptional: !auth,
      authMethods: ['PLAIN', 'LOGIN'],
      // Plaintext AUTH is refused per client in onAuth (loopback only), so the server-wide switch stays open.
      allowInsecureAuth: true,
      hideDSN: true,
      ...(tls ?? {}),
      onConnect: (session, cb) => {
        if (beforeTls && !session.secure) session.disabledCommands = beforeTls;
        this.onConnect(session, cb);
      },
      onSecure: (_socket, session, cb) => {
        session.disabledCommands = disabled;
        cb();
      },
      onAuth: (a, session, cb) => this.onAuth(a, session, cb),
      onMailFrom: (_address, session, cb) => this.onMailFrom(session, cb),
      onRcptTo: (address, _session, cb) => this.onRcptTo(address.address, cb),
      onData: (stream, session, cb) => this.onData(push, stream, session, cb),
      onClose: (session) => {
        this.guard.close(session);
        this.counters.connections = Math.max(0, this.counters.connections - 1);
      },
    };
  }

  private async tlsFiles(t: NonNullable<SmtpEntry['tls']>): Promise<{ key: Buffer; cert: Buffer }> {
    try {
      return { key: await readFile(t.key), cert: await readFile(t.cert) };
    } catch (err) {
      throw new GatewayError(
        'MAILGATE_ERR_SMTP_TLS',
        `smtp ${this.name}: cannot read the TLS key or certificate: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  private onConnect(session: SMTPServerSession, cb: Callback): void {
    if (this.allowed && !this.allowed(session.remoteAddress)) {
      this.counters.refusedClients++;
      this.log.info({ remoteAddress: session.remoteAddress }, 'smtp client refused by allow_from');
      return cb(reply(554, 'Error: your address is not allowed to send mail here'));
    }
    const busy = this.guard.connect(session);
    if (busy !== undefined) return cb(reply(421, busy));
    this.counters.connections++;
    cb();
  }

  private onAuth(a: SMTPServerAuthentication, session: SMTPServerSession, cb: (err: Error | null, res?: { user?: unknown }) => void): void {
    const plaintextOk = isLoopback(session.remoteAddress) || (this.entry.allow_plaintext_auth && !this.entry.tls);
    if (!session.secure && !plaintextOk) return cb(reply(538, 'Error: Must issue a STARTTLS command first'));
    const given = digest(a.password ?? '');
    let ok = false;
    for (const u of this.users) ok = (u.user === a.username && timingSafeEqual(u.pass, given)) || ok;
    if (!ok) {
      // Never the user name in clear: a password typed into the user field would land in the log.
      const knownUser = this.users.some((u) => u.user === a.username);
      this.log.info({ remoteAddress: session.remoteAddress, knownUser }, 'smtp authentication failed');
      return cb(reply(535, 'Error: Authentication credentials invalid'));
    }
    cb(null, { user: a.username });
  }

  private onMailFrom(session: SMTPServerSession, cb: Callback): void {
    if (this.entry.tls?.required && !session.secure) return cb(reply(530, 'Error: Must issue a STARTTLS command first'));
    // smtp-server requires AUTH only while AUTH is offered; before STARTTLS it is not, so check here.
    if (this.users.length > 0 && !session.user) return cb(reply(530, 'Error: authentication Required'));
    cb();
  }

  private onRcptTo(address: string, cb: Callback): void {
    if (this.match(address) !== undefined) return cb();
    this.counters.refusedRecipients++;
    cb(reply(550, `Error: <${address}>: no such recipient here`));
  }

  private onData(
    push: Intake,
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
    cb: (err?: Error | null, message?: string | Array<string | Error>) => void,
  ): void {
    const work = this.transaction(push, stream, session).then(
      (answer) => (Array.isArray(answer) ? cb(null, answer) : answer instanceof Error ? cb(answer) : cb(null, answer)),
      (err: unknown) => {
        this.log.error({ err }, 'smtp transaction failed');
        cb(reply(451, 'Error: local error in processing, try again later'));
      },
    );
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  /** The answer to DATA: a 250 text, one answer per recipient (LMTP), or an error. */
  private async transaction(
    push: Intake,
    stream: SMTPServerDataStream,
    session: SMTPServerSession,
  ): Promise<string | Error | Array<string | Error>> {
    const done = this.guard.data(session);
    const read = await readData(stream, this.entry.max_message_bytes).finally(done);
    if (read.kind === 'aborted') {
      this.counters.aborted++;
      return reply(421, 'Error: connection closed before the end of the message; nothing was stored');
    }
    if (read.kind === 'oversized') {
      this.counters.oversized++;
      return reply(552, `Error: message exceeds fixed maximum message size ${this.entry.max_message_bytes}`);
    }
    const receivedAt = new Date();
    const matches = session.envelope.rcptTo.map((r) => this.match(r.address)!);
    const facts = {
      account: this.name,
      session,
      receivedAt,
      ...(this.entry.add_received && { received: receivedHeader(session, this.serverName, receivedAt) }),
      ...(this.entry.authenticate && { verdicts: await this.verify(read.raw, session) }),
    };
    const groups = [...byRoute(matches)];
    const outcomes = await Promise.all(groups.map(([route, rcpts]) => this.store(push, inboundOf(facts, read.raw, route, rcpts))));
    const byGroup = new Map(groups.map(([route], i) => [route, outcomes[i]!]));
    if (this.entry.lmtp) return matches.map((m) => byGroup.get(m.route)!);
    // SMTP has one answer: any route that could not store makes it 451, and the retry finds the others stored.
    return outcomes.find((o): o is Error => o instanceof Error) ?? (outcomes.length === 1 ? outcomes[0]! : 'OK: message queued');
  }

  private verify(raw: Buffer, session: SMTPServerSession): ReturnType<typeof verifyMessage> {
    const from = session.envelope.mailFrom;
    const helo = session.hostNameAppearsAs;
    return verifyMessage({
      raw,
      ip: plainAddress(session.remoteAddress),
      ...(typeof helo === 'string' && helo !== '' && { helo }),
      sender: from === false ? '' : from.address,
      mta: this.serverName,
      timeoutMs: this.entry.authenticate_timeout_ms,
      ...(this.resolver && { resolver: this.resolver }),
    });
  }

  /** Submits one route's item: its 250 text, or a 451 error the sender retries. */
  private async store(push: Intake, inbound: Inbound): Promise<string | Error> {
    let result: Accepted;
    try {
      [result] = (await push.accept([inbound], { whenFull: 'refuse' })) as [Accepted];
    } catch (err) {
      this.counters.deferred++;
      const full = isGatewayError(err, 'MAILGATE_ERR_INTAKE_OUTBOX_FULL');
      this.lastError = { code: isGatewayError(err) ? err.code : 'MAILGATE_ERR_INTAKE_UNAVAILABLE', message: (err as Error).message };
      // The reply the catalogue declares with the code (451 for both intake refusals).
      const code = CORE_ERRORS[full ? 'MAILGATE_ERR_INTAKE_OUTBOX_FULL' : 'MAILGATE_ERR_INTAKE_UNAVAILABLE'].smtp;
      this.log.warn({ err, route: inbound.route }, `smtp message deferred with ${code}: it could not be stored`);
      return reply(code, full ? 'Error: queue full, try again later' : 'Error: the message could not be stored, try again later');
    }
    if (result.duplicate) this.counters.duplicates++;
    else this.counters.accepted++;
    return `OK: ${result.duplicate ? 'already ' : ''}queued as ${result.id}`;
  }
}

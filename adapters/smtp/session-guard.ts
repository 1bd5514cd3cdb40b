/**
 * Bounds on what one SMTP client may hold: connections per client address, a deadline for each
 * DATA phase and one for the whole session. A client dripping a byte every few seconds keeps a
 * connection alive past any idle timeout; these deadlines end it anyway, with a 421 so the
 * sending server retries later (nothing of an unfinished message is stored).
 */
import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import { plainAddress } from './network.js';

export interface SessionLimits {
  perClient: number;
  dataTimeoutMs: number;
  sessionTimeoutMs: number;
}

/** What smtp-server's connection offers to end it (not in its public types). */
interface Connection {
  session?: { id?: string };
  send(code: number, text: string): void;
  close(): void;
}

export type GuardRefusal = 'client' | 'data_deadline' | 'session_deadline';

export class SessionGuard {
  private readonly perClient = new Map<string, number>();
  private readonly sessions = new Map<string, { client: string; timer: NodeJS.Timeout }>();
  private server: SMTPServer | undefined;

  constructor(
    private readonly limits: SessionLimits,
    private readonly onRefused: (reason: GuardRefusal, client: string) => void,
  ) {}

  attach(server: SMTPServer): void {
    this.server = server;
  }

  /** At connect: undefined to go on, or the text of a 421 (this client holds too many connections). */
  connect(session: SMTPServerSession): string | undefined {
    const client = plainAddress(session.remoteAddress);
    const open = this.perClient.get(client) ?? 0;
    if (open >= this.limits.perClient) {
      this.onRefused('client', client);
      return `Error: too many connections from your address (at most ${this.limits.perClient}), try again later`;
    }
    this.perClient.set(client, open + 1);
    const timer = setTimeout(() => {
      this.onRefused('session_deadline', client);
      this.end(session.id, `Error: session longer than ${this.limits.sessionTimeoutMs} ms, closing`);
    }, this.limits.sessionTimeoutMs);
    timer.unref();
    this.sessions.set(session.id, { client, timer });
    return undefined;
  }

  close(session: SMTPServerSession): void {
    const s = this.sessions.get(session.id);
    if (s === undefined) return;
    this.sessions.delete(session.id);
    clearTimeout(s.timer);
    const left = (this.perClient.get(s.client) ?? 1) - 1;
    if (left <= 0) this.perClient.delete(s.client);
    else this.perClient.set(s.client, left);
  }

  /** At DATA: arms its deadline; call the returned function once the message is read. */
  data(session: SMTPServerSession): () => void {
    const timer = setTimeout(() => {
      this.onRefused('data_deadline', plainAddress(session.remoteAddress));
      this.end(session.id, `Error: the message took longer than ${this.limits.dataTimeoutMs} ms to arrive, closing; nothing was stored`);
    }, this.limits.dataTimeoutMs);
    timer.unref();
    return () => clearTimeout(timer);
  }

  private end(id: string, text: string): void {
    for (const c of (this.server?.connections ?? new Set()) as Set<Connection>) {
      if (c.session?.id !== id) continue;
      c.send(421, text);
      c.close();
    }
  }
}

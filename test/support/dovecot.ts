/**
 * A real, throw-away Dovecot IMAP server for tests and benchmarks, started from the system
 * binary (`dovecot`, package dovecot-imapd) in a temporary directory on a free port.
 *
 * Dovecot's login processes refuse to run as root, so as root the server uses the package's
 * `dovecot`/`dovenull` users and stores mail as `nobody`; as any other user everything runs as
 * that user. Plaintext IMAP on 127.0.0.1 (ssl = no), users in a passwd-file, maildir under the
 * temporary directory. With `oauth2`, a second passdb validates XOAUTH2/OAUTHBEARER tokens
 * against an introspection URL (`introspection_mode = post`, the token sent as `token=`).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ImapFlow } from 'imapflow';

const run = promisify(execFile);

export interface DovecotOptions {
  /** Validate OAuth2 access tokens against this introspection endpoint (POST token=<token>). */
  oauth2?: { introspectionUrl: string };
}

export interface DovecotServer {
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  /** Creates a user with a password (also usable with OAuth2 tokens naming this user). */
  addUser(user: string, pass: string): Promise<void>;
  /** Creates many users with one write of the passwd-file and one wait for it to be read again. */
  addUsers(users: ReadonlyArray<{ user: string; pass: string }>): Promise<void>;
  /** Appends messages over IMAP (creating the folder when missing); returns their UIDs. */
  append(user: string, folder: string, messages: Array<Buffer | string>): Promise<number[]>;
  /** Writes messages straight into the maildir (fast bulk fill); Dovecot assigns UIDs on next access. */
  fillMaildir(user: string, folder: string, messages: Array<Buffer | string>): void;
  createFolder(user: string, folder: string): Promise<void>;
  /**
   * Deletes the folder and creates it again: a new UIDVALIDITY, returned. The new folder is created
   * once the user's sessions open before have gone (at most 10 s), as a session that had the old
   * folder selected is disconnected by Dovecot.
   */
  recreateFolder(user: string, folder: string): Promise<number>;
  /** Runs `fn` with a logged-in imapflow client for inspection (flags, folders…). */
  withClient<T>(user: string, fn: (client: ImapFlow) => Promise<T>): Promise<T>;
  /** Stops and starts the server on the same port, keeping all mail. */
  restart(): Promise<void>;
  /** Stops the master process (the port refuses connections until `start()`). */
  halt(): Promise<void>;
  start(): Promise<void>;
  /** Kills the user's IMAP processes: every open connection of that user drops at once. */
  kick(user: string): Promise<void>;
  /** Open IMAP connections per user, as `doveadm who` lists them. */
  connections(): Promise<Map<string, number>>;
  /**
   * Delivers a message into a folder through Dovecot's own storage (`doveadm save`, as a local
   * delivery agent does): idling sessions are told, and no IMAP connection is opened for it.
   */
  deliver(user: string, folder: string, message: Buffer | string): Promise<void>;
  /** Dovecot's log so far (for failing-test diagnostics). */
  log(): string;
  stop(): Promise<void>;
}

interface Identity {
  root: boolean;
  mailUid: number;
  mailGid: number;
  internalUser: string;
  internalGroup: string;
  loginUser: string;
}

function identity(): Identity {
  const me = userInfo();
  if (me.uid === 0) {
    return { root: true, mailUid: 65534, mailGid: 65534, internalUser: 'dovecot', internalGroup: 'dovecot', loginUser: 'dovenull' };
  }
  const group = me.username;
  return { root: false, mailUid: me.uid, mailGid: me.gid, internalUser: me.username, internalGroup: group, loginUser: me.username };
}

function config(dir: string, port: number, id: Identity, opts: DovecotOptions): string {
  const oauth = opts.oauth2 !== undefined;
  const lines = [
    `base_dir = ${dir}/run`,
    `state_dir = ${dir}/state`,
    `instance_name = mailgate-test-${randomBytes(4).toString('hex')}`,
    'listen = 127.0.0.1',
    'protocols = imap',
    'ssl = no',
    'disable_plaintext_auth = no',
    `auth_mechanisms = plain login${oauth ? ' xoauth2 oauthbearer' : ''}`,
    `log_path = ${dir}/dovecot.log`,
    'mail_location = maildir:~/Maildir',
    'mail_fsync = never',
    'auth_failure_delay = 0',
    `first_valid_uid = ${id.mailUid}`,
    `first_valid_gid = ${id.mailGid}`,
    `default_internal_user = ${id.internalUser}`,
    `default_internal_group = ${id.internalGroup}`,
    `default_login_user = ${id.loginUser}`,
    'protocol imap {',
    '  mail_max_userip_connections = 500',
    '}',
    'passdb {',
    '  driver = passwd-file',
    `  args = scheme=PLAIN ${dir}/passwd`,
    ...(oauth ? ['  mechanisms = plain login'] : []),
    '}',
    ...(oauth ? ['passdb {', '  driver = oauth2', '  mechanisms = xoauth2 oauthbearer', `  args = ${dir}/oauth2.conf.ext`, '}'] : []),
    'userdb {',
    '  driver = passwd-file',
    `  args = ${dir}/passwd`,
    '}',
    'service imap-login {',
    '  chroot =',
    '  inet_listener imap {',
    '    address = 127.0.0.1',
    `    port = ${port}`,
    '  }',
    '  inet_listener imaps {',
    '    port = 0',
    '  }',
    '}',
    'service anvil {',
    '  chroot =',
    '}',
    'service stats {',
    '  unix_listener stats-writer {',
    '    mode = 0666',
    '  }',
    '}',
  ];
  return lines.join('\n') + '\n';
}

function oauthConfig(url: string): string {
  return (
    [
      `introspection_url = ${url}`,
      'introspection_mode = post',
      'force_introspection = yes',
      'username_attribute = username',
      'active_attribute = active',
      'active_value = true',
      'timeout_msecs = 5000',
    ].join('\n') + '\n'
  );
}

/** Resolves once something on host:port answers with an IMAP greeting. */
async function greeting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = netConnect({ host: '127.0.0.1', port });
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(2000, () => done(false));
    sock.once('error', () => done(false));
    sock.once('data', (d) => done(d.toString('latin1').startsWith('* OK')));
  });
}

async function waitFor(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Dovecot: timed out waiting for ${what}`);
}

/** A free TCP port on 127.0.0.1, found by binding port 0. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The binary from the Debian package locations (sbin is often missing from a non-root PATH). */
function binary(name: 'dovecot' | 'doveadm'): string {
  for (const dir of ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin']) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  return name;
}

async function childPids(parent: number): Promise<number[]> {
  const { stdout } = await run('ps', ['-o', 'pid=', '--ppid', String(parent)]).catch(() => ({ stdout: '' }));
  return stdout
    .split('\n')
    .map((l) => Number(l.trim()))
    .filter((p) => Number.isInteger(p) && p > 0);
}

function maildirName(seq: number, size: number): string {
  return `${Date.now()}.M${seq}P${process.pid}R${randomBytes(3).toString('hex')}.mailgate,S=${size}:2,`;
}

export async function startDovecot(opts: DovecotOptions = {}): Promise<DovecotServer> {
  const id = identity();
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-dovecot-'));
  chmodSync(dir, 0o755);
  for (const sub of ['home', 'state']) mkdirSync(join(dir, sub), { mode: 0o755 });
  const port = await freePort();
  const confPath = join(dir, 'dovecot.conf');
  writeFileSync(confPath, config(dir, port, id, opts));
  writeFileSync(join(dir, 'passwd'), '');
  chmodSync(join(dir, 'passwd'), 0o644);
  if (opts.oauth2) writeFileSync(join(dir, 'oauth2.conf.ext'), oauthConfig(opts.oauth2.introspectionUrl));
  const passwords = new Map<string, string>();
  let master: ChildProcess | undefined;
  let fillSeq = 0;

  const home = (user: string): string => join(dir, 'home', user);
  const folderDir = (user: string, folder: string): string =>
    folder.toUpperCase() === 'INBOX' ? join(home(user), 'Maildir') : join(home(user), 'Maildir', `.${folder}`);
  const own = (path: string): void => {
    if (id.root) chownSync(path, id.mailUid, id.mailGid);
  };

  async function start(): Promise<void> {
    const child = spawn(binary('dovecot'), ['-F', '-c', confPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    let exited = false;
    child.once('exit', () => (exited = true));
    master = child;
    await waitFor(
      async () => {
        if (exited) throw new Error(`Dovecot exited at start: ${stderr}\n${readLog()}`);
        return greeting(port);
      },
      20_000,
      `port ${port}`,
    );
  }

  async function halt(): Promise<void> {
    const child = master;
    master = undefined;
    if (child === undefined || child.exitCode !== null) return;
    // The master's children (log, stats, and the IMAP process of every open connection)
    // outlive a SIGTERM to the master; a restart must drop the connections, so they go too.
    const children = child.pid === undefined ? [] : await childPids(child.pid);
    const gone = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    // Connections handled by already-forked children must be gone before a restart binds again.
    await waitFor(async () => !(await greeting(port)), 10_000, 'the port to close');
  }

  function readLog(): string {
    const path = join(dir, 'dovecot.log');
    return existsSync(path) ? readFileSync(path, 'utf8') : '';
  }

  async function withClient<T>(user: string, fn: (client: ImapFlow) => Promise<T>): Promise<T> {
    const pass = passwords.get(user);
    if (pass === undefined) throw new Error(`Dovecot: unknown user ${user}`);
    const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass }, logger: false });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return await fn(client);
    } catch (err) {
      // imapflow says only "Command failed": name the command and Dovecot's answer.
      const e = err as Error & { responseText?: string; executedCommand?: string };
      if (e.responseText !== undefined) e.message += ` (${e.executedCommand ?? '?'}: ${e.responseText})`;
      throw err;
    } finally {
      await client.logout().catch(() => client.close());
    }
  }

  async function ensureFolder(client: ImapFlow, folder: string): Promise<void> {
    if (folder.toUpperCase() === 'INBOX') return;
    const list = await client.list();
    if (!list.some((m) => m.path === folder)) await client.mailboxCreate(folder);
  }

  /** The process ids of the user's IMAP sessions, as `doveadm who` lists them. */
  async function imapPids(user: string): Promise<number[]> {
    const { stdout } = await run(binary('doveadm'), ['-c', confPath, 'who', '-1', user]).catch(() => ({ stdout: '' }));
    const pids = new Set<number>();
    // After the header: `username proto pid ip`, one line per connection.
    for (const line of stdout.split('\n').slice(1)) {
      const pid = Number(line.trim().split(/\s+/)[2]);
      if (Number.isInteger(pid) && pid > 0) pids.add(pid);
    }
    return [...pids];
  }

  async function addUsers(users: ReadonlyArray<{ user: string; pass: string }>): Promise<void> {
    if (users.length === 0) return;
    for (const { user } of users) {
      mkdirSync(home(user), { recursive: true, mode: 0o755 });
      own(home(user));
    }
    const lines = users.map(({ user, pass }) => `${user}:{PLAIN}${pass}:${id.mailUid}:${id.mailGid}::${home(user)}::\n`);
    appendFileSync(join(dir, 'passwd'), lines.join(''));
    for (const { user, pass } of users) passwords.set(user, pass);
    // Dovecot looks at the passwd-file at most once a second: wait until the last user can log in
    // (the file is read whole, so the others can too).
    const last = users[users.length - 1]!.user;
    await waitFor(async () => withClient(last, async () => true).catch(() => false), 10_000, `user ${last}`);
  }

  await start();

  return {
    host: '127.0.0.1',
    port,
    dir,
    async addUser(user, pass) {
      await addUsers([{ user, pass }]);
    },
    addUsers,
    async append(user, folder, messages) {
      return withClient(user, async (client) => {
        await ensureFolder(client, folder);
        const uids: number[] = [];
        for (const m of messages) {
          const res = await client.append(folder, typeof m === 'string' ? Buffer.from(m) : m);
          if (res && res.uid !== undefined) uids.push(res.uid);
        }
        return uids;
      });
    },
    fillMaildir(user, folder, messages) {
      const base = folderDir(user, folder);
      for (const p of [join(home(user), 'Maildir'), base, join(base, 'cur'), join(base, 'new'), join(base, 'tmp')]) {
        if (!existsSync(p)) {
          mkdirSync(p, { mode: 0o700 });
          own(p);
        }
      }
      for (const m of messages) {
        const buf = typeof m === 'string' ? Buffer.from(m) : m;
        const path = join(base, 'cur', maildirName(fillSeq++, buf.length));
        writeFileSync(path, buf);
        own(path);
      }
    },
    async createFolder(user, folder) {
      await withClient(user, (client) => ensureFolder(client, folder));
    },
    async recreateFolder(user, folder) {
      // Through doveadm, not IMAP: no session of ours has the folder open. A session that still
      // has the old folder selected keeps its index open by path: if it touches the folder's
      // directory after the new folder was created there, Dovecot finds a "Corrupted transaction
      // log ... indexid changed" and fails whoever writes next (APPEND answers NO [SERVERBUG]).
      // So the folder is renamed away and deleted, and the new one created only once the
      // sessions open before have noticed and gone (Dovecot disconnects a session whose
      // selected mailbox was deleted); one that has not gone within the bound did not have it
      // selected.
      const adm = (...args: string[]) => run(binary('doveadm'), ['-c', confPath, ...args]);
      const uidValidity = async (): Promise<number | undefined> => {
        const { stdout } = await adm('mailbox', 'status', '-u', user, 'uidvalidity', folder).catch(() => ({ stdout: '' }));
        const m = /uidvalidity=(\d+)/.exec(stdout);
        return m ? Number(m[1]) : undefined;
      };
      const before = await uidValidity();
      const sessions = await imapPids(user);
      if (before !== undefined) {
        const away = `${folder}-deleted-${randomBytes(4).toString('hex')}`;
        await adm('mailbox', 'rename', '-u', user, folder, away);
        await adm('mailbox', 'delete', '-u', user, away);
      }
      const end = Date.now() + 10_000;
      while (Date.now() < end) {
        const now = new Set(await imapPids(user));
        if (![...sessions].some((p) => now.has(p))) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await adm('mailbox', 'create', '-u', user, folder);
      const after = await uidValidity();
      if (after === undefined || after === before)
        throw new Error(`Dovecot: ${folder} of ${user} not recreated (UIDVALIDITY ${before} -> ${after})`);
      return after;
    },
    withClient,
    async restart() {
      await halt();
      await start();
    },
    halt,
    start,
    async kick(user) {
      // Killing the user's IMAP processes drops every connection.
      for (const pid of await imapPids(user)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
    async connections() {
      const { stdout } = await run(binary('doveadm'), ['-c', confPath, 'who', '-1']);
      const counts = new Map<string, number>();
      // After the header: `username proto pid ip`, one line per connection.
      for (const line of stdout.split('\n').slice(1)) {
        const user = line.trim().split(/\s+/)[0];
        if (user) counts.set(user, (counts.get(user) ?? 0) + 1);
      }
      return counts;
    },
    async deliver(user, folder, message) {
      await new Promise<void>((resolve, reject) => {
        const child = execFile(binary('doveadm'), ['-c', confPath, 'save', '-u', user, '-m', folder], (err) =>
          err ? reject(err) : resolve(),
        );
        child.stdin!.end(typeof message === 'string' ? Buffer.from(message) : message);
      });
    },
    log: readLog,
    async stop() {
      await halt().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

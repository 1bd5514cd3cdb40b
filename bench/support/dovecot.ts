/**
 * A throw-away Dovecot for benchmarks, started from the system binary on a free port in a
 * temporary directory: plaintext IMAP on 127.0.0.1, users in a passwd-file, maildir mail
 * written straight to disk. The test harness (test/support/dovecot.ts) has the full
 * version; benchmarks run from dist/, which does not include test/.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

export interface BenchDovecotOptions {
  /** IMAP connections the server must hold at once (process and client limits are raised to fit). Default 1024. */
  connections?: number;
}

export interface BenchDovecot {
  host: string;
  port: number;
  addUser(user: string, pass: string): void;
  /**
   * Adds many users with one write of the passwd-file; their homes and maildirs are created by
   * Dovecot at their first login (1,000 users in milliseconds).
   */
  addUsers(users: ReadonlyArray<{ user: string; pass: string }>): void;
  /** Writes messages straight into the user's INBOX maildir. */
  fill(user: string, messages: Iterable<Buffer>): void;
  /** Process id of the Dovecot master (benchmarks account its CPU and its imap processes'). */
  readonly pid: number;
  /** Kills the master and every IMAP process (every connection drops at once), then starts it again on the same port. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

function greets(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => (s.destroy(), resolve(ok));
    s.setTimeout(2000, () => done(false));
    s.once('error', () => done(false));
    s.once('data', (d) => done(d.toString('latin1').startsWith('* OK')));
  });
}

/** Size of a message with every line ending CRLF. */
function virtualSize(m: Buffer): number {
  let bare = 0;
  for (let i = m.indexOf(10); i !== -1; i = m.indexOf(10, i + 1)) if (i === 0 || m[i - 1] !== 13) bare++;
  return m.length + bare;
}

function binary(): string {
  for (const d of ['/usr/sbin', '/usr/bin', '/usr/local/sbin']) if (existsSync(join(d, 'dovecot'))) return join(d, 'dovecot');
  return 'dovecot';
}

/** Process ids whose parent is `ppid`, from /proc. */
function childrenOf(ppid: number): number[] {
  const pids: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const st = readFileSync(`/proc/${e}/stat`, 'utf8');
      if (Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]) === ppid) pids.push(Number(e));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

export async function startBenchDovecot(options: BenchDovecotOptions = {}): Promise<BenchDovecot> {
  const connections = options.connections ?? 1024;
  const me = userInfo();
  const root = me.uid === 0;
  const uid = root ? 65534 : me.uid;
  const gid = root ? 65534 : me.gid;
  const dir = mkdtempSync(join(tmpdir(), 'mailgate-bench-dovecot-'));
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'home'), { mode: 0o755 });
  // Dovecot creates a user's home at the first login, as the mail user.
  if (root) chownSync(join(dir, 'home'), uid, gid);
  const port = await freePort();
  const conf = [
    `base_dir = ${dir}/run`,
    `state_dir = ${dir}/state`,
    `instance_name = mailgate-bench-${randomBytes(4).toString('hex')}`,
    'listen = 127.0.0.1',
    'protocols = imap',
    'ssl = no',
    'disable_plaintext_auth = no',
    'auth_mechanisms = plain login',
    `log_path = ${dir}/dovecot.log`,
    'mail_location = maildir:~/Maildir',
    'mail_fsync = never',
    `first_valid_uid = ${uid}`,
    `first_valid_gid = ${gid}`,
    `default_internal_user = ${root ? 'dovecot' : me.username}`,
    `default_internal_group = ${root ? 'dovecot' : me.username}`,
    `default_login_user = ${root ? 'dovenull' : me.username}`,
    // One imap process per connection; each also talks to anvil, stats and the log service.
    `default_client_limit = ${connections * 2 + 100}`,
    `service imap {\n  process_limit = ${connections + 100}\n}`,
    'protocol imap {\n  mail_max_userip_connections = 100\n}',
    // Past the kernel's inotify instances per user (often 128) Dovecot checks an idle mailbox
    // every mailbox_idle_check_interval instead (30 s by default): 1 s keeps IDLE prompt for all.
    'mailbox_idle_check_interval = 1 secs',
    `passdb {\n  driver = passwd-file\n  args = scheme=PLAIN ${dir}/passwd\n}`,
    `userdb {\n  driver = passwd-file\n  args = ${dir}/passwd\n}`,
    `service imap-login {\n  chroot =\n  inet_listener imap {\n    address = 127.0.0.1\n    port = ${port}\n  }\n  inet_listener imaps {\n    port = 0\n  }\n}`,
    'service anvil {\n  chroot =\n}',
    'service stats {\n  unix_listener stats-writer {\n    mode = 0666\n  }\n}',
  ].join('\n');
  writeFileSync(join(dir, 'dovecot.conf'), `${conf}\n`);
  writeFileSync(join(dir, 'passwd'), '');
  let master!: ChildProcess;
  async function start(): Promise<void> {
    master = spawn(binary(), ['-F', '-c', join(dir, 'dovecot.conf')], { stdio: 'ignore' });
    const until = Date.now() + 20_000;
    while (!(await greets(port))) {
      if (Date.now() > until || master.exitCode !== null) throw new Error(`Dovecot did not start (log: ${dir}/dovecot.log)`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  async function halt(): Promise<void> {
    // SIGTERM lets the master remove its sockets (a new master refuses to start beside them); its
    // children, the IMAP process of every connection among them, are killed so every client drops.
    const children = childrenOf(master.pid!);
    const gone = new Promise((r) => master.once('exit', r));
    master.kill('SIGTERM');
    await gone;
    for (const pid of children) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    while (children.some((pid) => existsSync(`/proc/${pid}`)) || (await greets(port))) await new Promise((r) => setTimeout(r, 50));
  }
  await start();
  const own = (p: string) => root && chownSync(p, uid, gid);
  let seq = 0;
  return {
    host: '127.0.0.1',
    port,
    get pid() {
      return master.pid!;
    },
    addUser(user, pass) {
      const home = join(dir, 'home', user);
      for (const p of [
        home,
        join(home, 'Maildir'),
        join(home, 'Maildir', 'cur'),
        join(home, 'Maildir', 'new'),
        join(home, 'Maildir', 'tmp'),
      ]) {
        mkdirSync(p, { mode: 0o700 });
        own(p);
      }
      appendFileSync(join(dir, 'passwd'), `${user}:{PLAIN}${pass}:${uid}:${gid}::${home}::\n`);
    },
    addUsers(users) {
      appendFileSync(
        join(dir, 'passwd'),
        users.map((u) => `${u.user}:{PLAIN}${u.pass}:${uid}:${gid}::${join(dir, 'home', u.user)}::\n`).join(''),
      );
    },
    fill(user, messages) {
      const cur = join(dir, 'home', user, 'Maildir', 'cur');
      for (const m of messages) {
        // Named as Dovecot's own delivery names them: S= the file size, W= the size with CRLF
        // line ends (RFC822.SIZE), so the server answers sizes without reading every file.
        const p = join(cur, `${Date.now()}.M${seq++}P${process.pid}.bench,S=${m.length},W=${virtualSize(m)}:2,`);
        writeFileSync(p, m);
        own(p);
      }
    },
    async restart() {
      await halt();
      await start();
    },
    async stop() {
      const gone = new Promise((r) => master.once('exit', r));
      master.kill('SIGTERM');
      await gone;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

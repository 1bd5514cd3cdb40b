/**
 * Controls: what holds a route or a mailbox back, kept in the store so that every replica,
 * `mailgate status` and a restart see the same. A route's pause (the API refused it for a
 * reason no document caused); a mailbox's state (enabled, or disabled with a reason and a coded
 * error kind; how long it has been failing) and, per folder, how far its sync is and how many
 * messages its filter left out.
 */

export interface RoutePauseRow {
  route: string;
  target: string;
  /** The MAILGATE_* code of the refusal. */
  code: string;
  message: string;
  /** ISO-8601: when the pause began (kept while it is extended). */
  since: string;
  /** ISO-8601: when claims start again unless it is extended or resumed by hand. */
  until: string;
}

/** `user`: by an operator; `quota`: the mailbox's provider refuses for quota; `sync_error`: failures that lasted. */
export type MailboxDisableReason = 'user' | 'quota' | 'sync_error';

export interface MailboxStateInput {
  enabled: boolean;
  reason?: MailboxDisableReason | null;
  /** One vocabulary across kinds (src/controls/errors.ts): not_found, bad_credentials, … */
  errorKind?: string | null;
  errorCode?: string | null;
  errorMessage?: string | null;
  /** Set by `mailgate mailboxes enable|disable` or the admin API: wins over the configuration. */
  byCommand?: boolean;
  /** ISO-8601: start of the current run of failures (null: none). */
  failingSince?: string | null;
}

export interface FolderStateInput {
  state: 'in_progress' | 'up_to_date';
  /** What the folder's sync has reached, in the kind's terms (IMAP: `UID 1234`; an ISO date). */
  syncedUntil?: string | null;
  /** ISO-8601: the end of the last complete pass. */
  lastSynced?: string | null;
  /** Messages on the server not yet read, where the protocol tells. */
  behind?: number | null;
}

export interface FolderStateRow {
  folder: string;
  state: 'in_progress' | 'up_to_date' | null;
  syncedUntil: string | null;
  lastSynced: string | null;
  behind: number | null;
  /** Messages of this folder the mailbox's filter left out, since the store began. */
  filtered: number;
  updatedAt: string;
}

export interface MailboxStateRow {
  /** The mailbox's lease name: `imap:<account>`, `graph:<entry>/<user>`, `gmail:…`. */
  mailbox: string;
  enabled: boolean;
  reason: MailboxDisableReason | null;
  errorKind: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  byCommand: boolean;
  failingSince: string | null;
  updatedAt: string;
  /** Sum of its folders' `filtered`. */
  filtered: number;
  folders: FolderStateRow[];
}

export interface ControlStore {
  /** Records (or extends) a route's pause. */
  pauseRoute(pause: RoutePauseRow): Promise<void>;
  /** Forgets a route's pause; true when there was one. */
  resumeRoute(route: string): Promise<boolean>;
  listRoutePauses(): Promise<RoutePauseRow[]>;
  /** A mailbox's state; undefined when nothing was ever recorded (enabled as configured). */
  mailboxState(mailbox: string): Promise<MailboxStateRow | undefined>;
  /** Every mailbox with a recorded state or folder, with its folders. */
  listMailboxStates(): Promise<MailboxStateRow[]>;
  /** Writes a mailbox's state; fields left out keep their stored value (a new row: null / false). */
  putMailboxState(mailbox: string, state: MailboxStateInput): Promise<void>;
  /** Writes one folder's sync state. */
  putFolderState(mailbox: string, folder: string, state: FolderStateInput): Promise<void>;
  /** Adds `n` messages left out by the filter to a folder's count. */
  countFiltered(mailbox: string, folder: string, n: number): Promise<void>;
  /**
   * Poison messages: counts one more parse attempt of each key of `route` before the parse runs,
   * so that it outlives the process (a message that kills the process every time is then known by
   * its count after a restart). Answers each key's attempts, this one included. The parse-attempt
   * writes need not survive a power cut (SQLite does not sync them, PostgreSQL commits them
   * asynchronously): one lost only gives a message one more attempt.
   */
  countParseAttempts(route: string, keys: readonly string[]): Promise<Map<string, number>>;
  /**
   * Counts a first attempt of each key of `route` never counted, in one write, and answers those
   * keys; the others are left as they are (counted before: their earlier parse never finished).
   */
  beginParseAttempts(route: string, keys: readonly string[]): Promise<Set<string>>;
  /** The parse attempts counted for keys of `route` (keys never counted are left out). */
  parseAttempts(route: string, keys: readonly string[]): Promise<Map<string, number>>;
  /** Forgets the attempts of keys whose messages are now stored (queued or set aside). */
  clearParseAttempts(route: string, keys: readonly string[]): Promise<void>;
}

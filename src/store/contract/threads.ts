/** The per-source thread index the preview's thread properties come from (DESIGN.md "Threads"). */

export interface ThreadEntry {
  commentId: string;
  threadId: string;
  /** ISO-8601. */
  timestamp: string;
  from?: string;
  participants: string[];
}

export interface ThreadStore {
  indexThread(source: string, entries: ThreadEntry[]): Promise<void>;
  /** Members of each thread, oldest first (then by comment id). */
  threadMembers(source: string, threadIds: string[]): Promise<Map<string, ThreadEntry[]>>;
}

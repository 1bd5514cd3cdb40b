/**
 * What a stop is still waiting for: each part is named while its close runs, so that a stop past
 * its bound can say which ones never finished (`mailgate serve`, docs/service.md "Shutdown").
 */
export class OpenParts {
  private readonly open = new Map<string, number>();

  /** Waits for `work`, naming `part` as open meanwhile. */
  async wait<T>(part: string, work: Promise<T> | (() => Promise<T>)): Promise<T> {
    this.open.set(part, (this.open.get(part) ?? 0) + 1);
    try {
      return await (typeof work === 'function' ? work() : work);
    } finally {
      const left = this.open.get(part)! - 1;
      if (left === 0) this.open.delete(part);
      else this.open.set(part, left);
    }
  }

  /** The parts whose close has not finished, in the order they began. */
  list(): string[] {
    return [...this.open.keys()];
  }
}

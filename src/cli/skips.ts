/** Files met in a folder walk and skipped (not mail, a link refused): counted by reason, reported once at the end of `import` and `preview`. */
/** How many skipped files are named one by one before they are only counted. */
export const SKIPS_NAMED = 5;

export class Skips {
  readonly byReason: Record<string, number> = {};
  total = 0;

  /** `print`, when given, names the first `named` skipped files as they are met (the rest are only counted). */
  constructor(
    private readonly print?: (line: string) => void,
    private readonly named = SKIPS_NAMED,
  ) {}

  readonly count = (path: string, reason: string): void => {
    this.total++;
    this.byReason[reason] = (this.byReason[reason] ?? 0) + 1;
    if (this.print !== undefined && this.total <= this.named) this.print(`mailgate: skipped ${path} (${reason})\n`);
  };

  text(): string {
    return skipText(this.total, this.byReason);
  }
}

/** `skipped 2500 files (JSON 2500)`, or '' when nothing was skipped. */
export function skipText(total: number, byReason: Record<string, number>): string {
  if (total === 0) return '';
  const reasons = Object.entries(byReason)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  return `skipped ${total} ${total === 1 ? 'file' : 'files'} (${reasons})`;
}

// A one-line progress bar on stderr (redrawn in place on a terminal, one line per update otherwise).
export class ProgressBar {
  private readonly start = Date.now();
  private lastDraw = 0;
  constructor(
    private readonly label: string,
    private total: number,
    private readonly stream = process.stderr,
  ) {}

  update(done: number, detail = '', force = false): void {
    const now = Date.now();
    if (!force && now - this.lastDraw < 100 && done < this.total) return;
    this.lastDraw = now;
    const frac = this.total > 0 ? Math.min(1, done / this.total) : 0;
    const width = 24;
    const filled = Math.round(frac * width);
    const elapsed = (now - this.start) / 1000;
    const eta = frac > 0 && frac < 1 ? ` eta ${formatSeconds((elapsed / frac) * (1 - frac))}` : '';
    const line = `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${this.total}${eta}${detail ? ' ' + detail : ''}`;
    if (this.stream.isTTY) this.stream.write(`\r\x1b[2K${line}`);
    else if (force || done >= this.total) this.stream.write(line + '\n');
  }

  setTotal(total: number): void {
    this.total = total;
  }

  done(detail = ''): void {
    this.update(this.total, detail, true);
    if (this.stream.isTTY) this.stream.write('\n');
  }
}

export function formatSeconds(s: number): string {
  if (s < 60) return `${s.toFixed(0)}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

// What `kimina prove` shows while it works: how the samples decode (waves of rows at once, the calibration),
// the followed sample's thinking (dimmed) and answer (a new one each wave), a progress line kept at the bottom
// (the wave, tokens, tokens/s), one line per attempt, then the proof.
import type { Attempt, ProveEvent, ProveResult } from '../protocol';

export interface TerminalOptions {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  err: NodeJS.WritableStream & { isTTY?: boolean };
  color: boolean;
}

const dim = (on: boolean, s: string) => (on ? `\x1b[2m${s}\x1b[22m` : s);
const bold = (on: boolean, s: string) => (on ? `\x1b[1m${s}\x1b[22m` : s);

export function attemptLine(a: Attempt): string {
  const verdict = a.verdict
    ? `${a.verdict.status}: ${a.verdict.reason}`
    : a.code === null
      ? 'nothing to check (no proof found in the answer)'
      : a.finishReason === 'cancelled'
        ? 'cancelled'
        : 'not checked (another sample won)';
  const format = a.format.stopped ? 'stopped (not checked)' : a.format.ok ? 'format ok' : `format ${a.format.error}`;
  const tokens = a.tokens !== undefined ? `, ${a.tokens} tokens` : '';
  const fix =
    a.fixSkipped && !['valid', 'cancelled', 'proved', 'verifier_failed'].includes(a.fixSkipped)
      ? ` (no fix turn: ${a.fixSkipped})`
      : '';
  const cut = a.cut ? `; cut short: ${a.cut}` : a.finishReason === 'length' ? '; cut short at the token limit' : '';
  return `sample ${a.sample + 1}, turn ${a.turn}: ${format}${tokens}${cut}; Lean ${verdict}${fix}`;
}

/** Renders prove events; call `event` for each, then `finish` with the result. */
export class TerminalView {
  private followed: { sample: number; turn: number } | null = null;
  private samples = 0;
  private line = '';
  private lineIsThink = false;
  private progress = '';
  /** The wave being decoded (its samples follow the previous wave's). */
  private wave = 1;
  private lastPlainProgress = 0;
  /** Piped output: whether the streamed text ended a line (notes on stderr start on a fresh line). */
  private outAtLineStart = true;
  private readonly live: boolean;

  constructor(private readonly o: TerminalOptions) {
    this.live = Boolean(o.err.isTTY && o.out.isTTY);
  }

  event(e: ProveEvent): void {
    switch (e.type) {
      case 'started':
        this.samples = e.samples;
        this.note(
          `Proving ${e.theorem || 'the example'} with ${e.samples} sample${e.samples === 1 ? '' : 's'}, up to ${e.fixTurns} fix turn${e.fixTurns === 1 ? '' : 's'}.`,
        );
        if (e.schedule) this.note(`Decoding: ${e.schedule.text}.`);
        break;
      case 'think':
      case 'text': {
        if (!this.followed || this.followed.turn !== e.turn) {
          this.flushLine();
          this.followed = { sample: e.sample, turn: e.turn };
          const of = this.samples > 1 ? ` (showing 1 of the samples)` : '';
          this.note(bold(this.o.color, `── sample ${e.sample + 1}, turn ${e.turn}${of} ──`));
        }
        if (e.sample !== this.followed.sample) break;
        this.write(e.delta, e.type === 'think');
        break;
      }
      case 'progress': {
        const w = e.wave;
        if (w && w.index !== this.wave) {
          this.wave = w.index;
          // A later wave: follow one of its samples (the followed one has ended); a round's first wave is a new
          // turn, which the text events follow anyway.
          if (w.index > 1) {
            this.flushLine();
            this.followed = null;
          }
        }
        const wave =
          w && w.of > 1 ? `wave ${w.index} of ${w.of}, ${w.rows} row${w.rows === 1 ? '' : 's'} at once · ` : '';
        this.progress = `${wave}${e.tokens} tokens · ${e.tokensPerSecond.toFixed(1)} tok/s`;
        this.drawProgress();
        break;
      }
      case 'attempt':
        this.flushLine();
        this.note(attemptLine(e.attempt));
        break;
      case 'error':
        this.flushLine();
        this.note(`error: ${e.message}`);
        break;
      default:
        break;
    }
  }

  finish(result: ProveResult): void {
    this.flushLine();
    if (!this.outAtLineStart) {
      this.o.out.write('\n');
      this.outAtLineStart = true;
    }
    this.clearProgress();
    this.progress = '';
    if (result.status === 'proved' && result.proof) {
      this.o.out.write(`\n${bold(this.o.color, 'Proved.')} Verified proof:\n\n${result.proof}\n`);
    } else {
      this.o.out.write(
        `\n${bold(this.o.color, result.status === 'cancelled' ? 'Cancelled.' : 'Not proved.')} ${result.attempts.length} attempt${result.attempts.length === 1 ? '' : 's'}, none verified by Lean.\n`,
      );
      if (result.verifierFailure)
        this.o.out.write(
          `${result.verifierFailure.leanMissing ? 'Lean is missing' : 'The Lean verifier failed'}, so no answer could be checked (stopped without a fix turn): ${result.verifierFailure.reason}\n`,
        );
    }
  }

  /** Streams text; on a live terminal only whole lines are printed so the progress line stays at the bottom. */
  private write(delta: string, think: boolean): void {
    if (!this.live) {
      this.o.out.write(think ? dim(this.o.color, delta) : delta);
      if (delta) this.outAtLineStart = delta.endsWith('\n');
      return;
    }
    if (this.line && this.lineIsThink !== think) this.flushLine();
    this.lineIsThink = think;
    this.line += delta;
    const nl = this.line.lastIndexOf('\n');
    if (nl < 0) return;
    const whole = this.line.slice(0, nl + 1);
    this.line = this.line.slice(nl + 1);
    this.clearProgress();
    this.o.out.write(
      think
        ? whole
            .split('\n')
            .map((l) => (l ? dim(this.o.color, l) : l))
            .join('\n')
        : whole,
    );
    this.drawProgress();
  }

  private flushLine(): void {
    if (!this.line) return;
    const rest = this.line;
    this.line = '';
    this.clearProgress();
    this.o.out.write((this.lineIsThink ? dim(this.o.color, rest) : rest) + '\n');
  }

  private note(text: string): void {
    if (!this.outAtLineStart) {
      this.o.out.write('\n');
      this.outAtLineStart = true;
    }
    this.clearProgress();
    this.o.err.write(text + '\n');
    this.drawProgress();
  }

  private clearProgress(): void {
    if (this.live && this.progress) this.o.err.write('\r\x1b[2K');
  }

  private drawProgress(): void {
    if (!this.progress) return;
    if (this.live) {
      this.o.err.write(`\r\x1b[2K${this.progress}`);
      return;
    }
    const now = Date.now();
    if (now - this.lastPlainProgress >= 5000) {
      this.lastPlainProgress = now;
      this.o.err.write(`[${this.progress}]\n`);
    }
  }
}

// The REPL pool: REPLs kept per import header (the header is elaborated once per REPL and reused
// through its env id), least-recently-used eviction, a cap on REPLs, recycling after N uses or above
// an RSS threshold, pre-warming. Waiters are served in arrival order.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandResponse, ReplErrorResponse } from '../protocol';
import { ReplFailure } from './errors';
import type { LaunchSpec } from './launch';
import { ReplProcess } from './repl';

export interface PoolOptions {
  /** Builds the launch of one REPL given its private scratch folder. */
  launch(scratch: string): LaunchSpec;
  maxRepls: number;
  /** Body checks per REPL before it is replaced (0: unlimited). */
  maxUses: number;
  /** Replace a REPL whose process tree holds more than this many MiB (0: never). */
  maxRssMb: number;
  /**
   * When the pool is full and the header's REPL is busy, wait for it instead of evicting another
   * header's idle REPL (default true; false is kimina-lean-server's acquire order, kept for the benchmark).
   */
  waitForBusyHeader?: boolean;
  /** Stop REPLs left idle this long, to give their memory back (0 or absent: keep them). */
  idleTimeoutMs?: number;
}

export interface PoolStats {
  total: number;
  busy: number;
  idle: number;
  waiting: number;
  /** Header commands sent since start (each one is a full import). */
  headerImports: number;
  started: number;
  replaced: number;
}

/** A header command that Lean answered with an error (e.g. an unknown module). */
export class HeaderFailed extends Error {
  constructor(readonly response: CommandResponse | ReplErrorResponse) {
    super('the import header failed');
    this.name = 'HeaderFailed';
  }
}

interface Member {
  repl: ReplProcess;
  header: string;
  headerEnv: number;
  uses: number;
  lastUsed: number;
  scratch: string;
}

/** A REPL lent to one check. Call exactly one of release() and discard(). */
export interface Lease {
  readonly repl: ReplProcess;
  readonly headerEnv: number;
  /** The REPL's private writable folder (its HOME and TMPDIR; the pickled audit writes there). */
  readonly scratch: string;
  /** True when this check paid for the header import. */
  readonly freshImport: boolean;
  release(): void;
  discard(): void;
}

interface Waiter {
  header: string;
  reuse: boolean;
  headerTimeoutMs: number;
  resolve(lease: Lease): void;
  reject(err: Error): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class ReplPool {
  private readonly idle: Member[] = [];
  private readonly busy = new Set<Member>();
  /** Headers of REPLs being started (one entry each). */
  private readonly starting: string[] = [];
  /** REPLs still importing their header: close() kills them too. */
  private readonly importing = new Set<ReplProcess>();
  private readonly waiters: Waiter[] = [];
  private closed = false;
  private counters = { headerImports: 0, started: 0, replaced: 0 };

  private readonly sweeper: NodeJS.Timeout | undefined;

  constructor(private readonly options: PoolOptions) {
    if (!(options.maxRepls >= 1)) throw new Error('maxRepls must be at least 1');
    const idleMs = options.idleTimeoutMs ?? 0;
    if (idleMs > 0) {
      this.sweeper = setInterval(
        () => this.stopIdleSince(Date.now() - idleMs),
        Math.max(10, Math.min(idleMs / 2, 30_000)),
      );
      this.sweeper.unref();
    }
  }

  private stopIdleSince(cutoff: number): void {
    for (let i = this.idle.length - 1; i >= 0; i--) {
      if (this.idle[i].lastUsed < cutoff) this.destroy(this.idle.splice(i, 1)[0]);
    }
  }

  stats(): PoolStats {
    return {
      total: this.idle.length + this.busy.size + this.starting.length,
      busy: this.busy.size + this.starting.length,
      idle: this.idle.length,
      waiting: this.waiters.length,
      ...this.counters,
    };
  }

  /** Waits for a REPL that has elaborated `header` (importing it first when needed). */
  acquire(header: string, options: { reuse?: boolean; headerTimeoutMs: number; signal?: AbortSignal }): Promise<Lease> {
    if (this.closed) return Promise.reject(new Error('the REPL pool is closed'));
    if (options.signal?.aborted) return Promise.reject(new Error('cancelled'));
    return new Promise<Lease>((resolve, reject) => {
      const waiter: Waiter = {
        header,
        reuse: options.reuse ?? true,
        headerTimeoutMs: options.headerTimeoutMs,
        resolve,
        reject,
        signal: options.signal,
      };
      if (options.signal) {
        waiter.onAbort = () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) {
            this.waiters.splice(i, 1);
            reject(new Error('cancelled'));
          }
        };
        options.signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.waiters.push(waiter);
      this.dispatch();
    });
  }

  /** Starts REPLs with these headers (header -> count) and leaves them idle. */
  async prewarm(headers: Record<string, number>, headerTimeoutMs = 60_000): Promise<void> {
    const leases: Promise<Lease>[] = [];
    for (const [header, count] of Object.entries(headers)) {
      for (let i = 0; i < count; i++) leases.push(this.acquire(header, { reuse: false, headerTimeoutMs }));
    }
    const settled = await Promise.allSettled(leases);
    for (const s of settled) if (s.status === 'fulfilled') s.value.release();
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason instanceof Error ? failed.reason : new Error(String(failed.reason));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const w of this.waiters.splice(0)) w.reject(new Error('the REPL pool is closed'));
    for (const m of [...this.idle, ...this.busy]) this.destroy(m);
    for (const repl of this.importing) repl.kill();
    this.idle.length = 0;
    this.busy.clear();
  }

  /**
   * Serves waiters in arrival order where possible: a warm REPL with the header; else a new REPL while
   * under maxRepls; else, if no REPL holds that header at all, a new one in place of the least recently
   * used idle REPL. A waiter whose header has a busy REPL waits for it (an import costs far more than
   * a check), and later waiters that can be served are not held up behind it.
   */
  private dispatch(): void {
    let i = 0;
    while (i < this.waiters.length && !this.closed) {
      const w = this.waiters[i];
      const matchIndex = w.reuse ? this.findIdle(w.header) : -1;
      if (matchIndex >= 0 && !this.idle[matchIndex].repl.alive) {
        // died while idle: drop it and look again
        this.destroy(this.idle.splice(matchIndex, 1)[0]);
        continue;
      }
      if (matchIndex >= 0) {
        const [m] = this.idle.splice(matchIndex, 1);
        this.take(i);
        this.busy.add(m);
        w.resolve(this.lease(m, false));
        continue;
      }
      const total = this.idle.length + this.busy.size + this.starting.length;
      if (total < this.options.maxRepls) {
        this.take(i);
        this.startFor(w);
        continue;
      }
      const headerHeld =
        w.reuse &&
        this.options.waitForBusyHeader !== false &&
        ([...this.busy].some((m) => m.header === w.header) || this.starting.includes(w.header));
      if (this.idle.length > 0 && !headerHeld) {
        let lru = 0;
        for (let k = 1; k < this.idle.length; k++) if (this.idle[k].lastUsed < this.idle[lru].lastUsed) lru = k;
        const [victim] = this.idle.splice(lru, 1);
        this.destroy(victim);
        this.take(i);
        this.startFor(w);
        continue;
      }
      i++;
    }
  }

  private findIdle(header: string): number {
    let best = -1;
    for (let i = 0; i < this.idle.length; i++) {
      if (this.idle[i].header !== header) continue;
      if (best < 0 || this.idle[i].lastUsed > this.idle[best].lastUsed) best = i;
    }
    return best;
  }

  private take(index: number): void {
    const [w] = this.waiters.splice(index, 1);
    if (w.signal && w.onAbort) w.signal.removeEventListener('abort', w.onAbort);
  }

  private startFor(w: Waiter): void {
    this.starting.push(w.header);
    const started = (): void => {
      this.starting.splice(this.starting.indexOf(w.header), 1);
    };
    const scratch = mkdtempSync(join(tmpdir(), 'kimina-repl-'));
    let repl: ReplProcess;
    try {
      repl = new ReplProcess(this.options.launch(scratch));
    } catch (err) {
      started();
      rmSync(scratch, { recursive: true, force: true });
      w.reject(err instanceof Error ? err : new Error(String(err)));
      this.dispatch();
      return;
    }
    this.importing.add(repl);
    this.counters.started++;
    this.counters.headerImports++;
    const seconds = w.headerTimeoutMs / 1000;
    repl.send({ cmd: w.header }, w.headerTimeoutMs, `Lean REPL header command timed out in ${seconds} seconds`).then(
      (answer) => {
        started();
        this.importing.delete(repl);
        const response = answer as CommandResponse & Partial<ReplErrorResponse>;
        const headerBroken =
          typeof response.message === 'string' ||
          typeof response.env !== 'number' ||
          (response.messages ?? []).some((msg) => msg.severity === 'error');
        const m: Member = {
          repl,
          header: w.header,
          headerEnv: response.env ?? 0,
          uses: 0,
          lastUsed: Date.now(),
          scratch,
        };
        if (headerBroken || this.closed) {
          this.destroy(m);
          w.reject(this.closed ? new Error('the REPL pool is closed') : new HeaderFailed(response));
        } else {
          this.busy.add(m);
          w.resolve(this.lease(m, true));
        }
        this.dispatch();
      },
      (err: unknown) => {
        started();
        this.importing.delete(repl);
        repl.kill();
        rmSync(scratch, { recursive: true, force: true });
        w.reject(err instanceof Error ? err : new ReplFailure('exited', String(err)));
        this.dispatch();
      },
    );
  }

  private lease(m: Member, freshImport: boolean): Lease {
    let done = false;
    const finish = (keep: boolean): void => {
      if (done) return;
      done = true;
      this.busy.delete(m);
      m.uses++;
      m.lastUsed = Date.now();
      const worn =
        (this.options.maxUses > 0 && m.uses >= this.options.maxUses) ||
        (this.options.maxRssMb > 0 && m.repl.rssBytes() > this.options.maxRssMb * 1024 * 1024);
      if (keep && !this.closed && m.repl.alive && !worn) this.idle.push(m);
      else {
        if (keep && worn) this.counters.replaced++;
        this.destroy(m);
      }
      this.dispatch();
    };
    return {
      repl: m.repl,
      headerEnv: m.headerEnv,
      scratch: m.scratch,
      freshImport,
      release: () => finish(true),
      discard: () => finish(false),
    };
  }

  private destroy(m: Member): void {
    m.repl.kill();
    rmSync(m.scratch, { recursive: true, force: true });
  }
}

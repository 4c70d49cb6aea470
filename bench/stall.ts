// How long the server's event loop stalls while it prepares a 1 M-character /v1/prove request (finding the
// declarations and building the formal statement, prover/prove.ts proveStatement) and while it harvests a
// 1 MB Lean file for training (training/harvest.ts harvestWorkspace). Both read large sources in a worker
// thread (lean/offThread.ts); the in-place reading of the same request is printed beside it for scale.
// Run: node --import tsx bench/stall.ts   (prints one JSON line; issue 20 asks for < 50 ms for both).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { performance as nodePerformance } from 'node:perf_hooks';
import { join } from 'node:path';
import { proveStatement } from '../backend/prover/prove';
import { harvestWorkspace } from '../backend/training/harvest';
import { inPlace } from '../backend/lean/offThread';

/** A Lean file of `chars` characters: many small theorems, some with `sorry` and users of those. */
export function bigLeanFile(chars: number): string {
  const parts: string[] = ['import Mathlib\n\nopen Nat\n'];
  let size = parts[0].length;
  for (let i = 0; size < chars; i++) {
    const piece =
      `/-- Theorem ${i}. -/\ntheorem t${i} (a b : ℕ) (h : a = b) : a + 0 = b := by\n  simp [h] -- step ${i}\n` +
      (i % 7 === 0 ? `lemma s${i} : True := by\n  sorry\n` : '') +
      (i % 11 === 0 ? `theorem u${i} : t${i} = t${i} := rfl\n` : '');
    parts.push(piece);
    size += piece.length;
  }
  return parts.join('').slice(0, chars) + '\ntheorem last_one (n : ℕ) : n + 0 = n := by\n  sorry\n';
}

/** The worst gap between 1 ms timer ticks while `work` runs, and how long it took. */
export async function stallDuring(
  work: () => Promise<unknown>,
): Promise<{ stallMs: number; ms: number; busyMs: number }> {
  const elu = nodePerformance.eventLoopUtilization();
  let last = performance.now();
  let worst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    worst = Math.max(worst, now - last);
    last = now;
  }, 1);
  const t = performance.now();
  await work();
  const ms = performance.now() - t;
  await new Promise((r) => setTimeout(r, 5)); // one more tick, so a stall at the very end is counted
  clearInterval(timer);
  // the main thread's own busy time in all (the timer's ticks included): what the work costs the event loop,
  // whatever else runs on the machine; the worst gap also counts time the OS gave to other processes
  const busyMs = nodePerformance.eventLoopUtilization(elu).active;
  return { stallMs: worst, ms, busyMs };
}

async function main(): Promise<void> {
  const request = bigLeanFile(1_000_000);
  const prepare = await stallDuring(() => proveStatement(request, 'last_one'));
  const inPlaceMs = await stallDuring(async () => inPlace({ type: 'select', code: request, theorem: 'last_one' }));
  const dir = mkdtempSync(join(tmpdir(), 'kimina-bench-stall-'));
  try {
    const file = bigLeanFile(1024 * 1024);
    writeFileSync(join(dir, 'Big.lean'), file);
    let prompts = 0;
    const harvest = await stallDuring(async () => {
      prompts = (await harvestWorkspace(dir, { fileBytes: 2 * 1024 * 1024, ms: 120_000 })).prompts.length;
    });
    console.log(
      JSON.stringify({
        prepare1MChars: {
          stallMs: +prepare.stallMs.toFixed(1),
          ms: Math.round(prepare.ms),
          mainThreadBusyMs: Math.round(prepare.busyMs),
        },
        prepare1MCharsInPlace: { stallMs: +inPlaceMs.stallMs.toFixed(1) },
        harvest1MB: {
          stallMs: +harvest.stallMs.toFixed(1),
          ms: Math.round(harvest.ms),
          mainThreadBusyMs: Math.round(harvest.busyMs),
          prompts,
          bytes: file.length,
        },
        loadAverage: loadavg()[0],
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1]?.endsWith('stall.ts')) void main();

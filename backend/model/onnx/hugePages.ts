// Linux transparent huge pages for the KV cache, asked for without costing memory: madvise(MADV_COLLAPSE)
// (Linux 6.1+) turns the 2 MiB blocks a cache row has already filled into huge pages, so decode's reads of
// the cache miss the TLB 512 times less often (1.08-1.19x per decode step at 4,096 and 12,288 cached on a
// 2-core VM: docs/benchmarks.md). Blocks not yet written stay unallocated 4 KiB pages, as before; asking for
// huge pages up front (MADV_HUGEPAGE) would allocate up to 2 MiB per head region at its first write.
// Elsewhere (macOS, Windows, older kernels, koffi missing) this does nothing.

const HUGE_PAGE = 2 << 20;
const MADV_COLLAPSE = 25;

type Madvise = (addr: number, len: number, advice: number) => number;
type Koffi = typeof import('koffi');

let madvise: Madvise | null | undefined;
let koffi: Koffi | undefined;
let wanted = true;

/** Turns huge pages off (or back on) for caches made from now on: the benchmarks' A/B (KIMINA_HUGE_PAGES=off). */
export function useHugePages(on: boolean): void {
  wanted = on;
}

function load(): Madvise | null {
  if (!wanted) return null;
  if (madvise !== undefined) return madvise;
  madvise = null;
  if (process.platform !== 'linux') return null;
  try {
    // Resolved at run time: a missing or unloadable koffi must not break the module graph.
    koffi = require(['koffi'][0]) as Koffi;
    const libc = koffi.load('libc.so.6');
    madvise = libc.func('int madvise(uintptr_t addr, size_t len, int advice)') as Madvise;
  } catch {
    madvise = null;
  }
  return madvise;
}

/**
 * Collapses the whole 2 MiB blocks inside bytes [from, to) of `array` into huge pages (already-huge blocks
 * are skipped by the kernel). Returns false when the system cannot (then callers stop asking).
 */
export function collapseHugePages(array: ArrayBufferView, from: number, to: number): boolean {
  const fn = load();
  if (!fn || !koffi) return false;
  const base = koffi.address(array); // the view's first byte (its offset included)
  const huge = BigInt(HUGE_PAGE);
  const start = ((base + BigInt(from) + huge - 1n) / huge) * huge;
  const end = ((base + BigInt(to)) / huge) * huge;
  if (end <= start) return true;
  // EINVAL: a kernel without MADV_COLLAPSE. Other failures (EAGAIN: no huge page free now) are transient.
  if (fn(Number(start), Number(end - start), MADV_COLLAPSE) !== 0) {
    if (koffi.errno() === 22 /* EINVAL */) {
      madvise = null;
      return false;
    }
  }
  return true;
}

/** Bytes of one huge page (the granularity `collapseHugePages` works in). */
export const HUGE_PAGE_BYTES = HUGE_PAGE;

/** Whether `collapseHugePages` can work here (Linux, koffi loaded; a kernel without MADV_COLLAPSE shows later). */
export function hugePagesAvailable(): boolean {
  return load() !== null;
}

/** Bytes from the start of `buffer` to its first huge-page boundary (0 where huge pages are unavailable). */
export function hugePageOffset(buffer: ArrayBuffer): number {
  if (!load() || !koffi) return 0;
  const base = koffi.address(new Uint8Array(buffer, 0, 1));
  return Number((BigInt(HUGE_PAGE) - (base % BigInt(HUGE_PAGE))) % BigInt(HUGE_PAGE));
}

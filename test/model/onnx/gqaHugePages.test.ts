// The C API path's KV cache on huge pages (gqaCache.ts, hugePages.ts): head regions start on 2 MiB
// boundaries once a cache holds a huge page per head, the filled blocks are collapsed into huge pages
// (Linux with MADV_COLLAPSE; the kernel's own AnonHugePages count is read back), and no value moves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { GqaCache } from '../../../backend/model/onnx/gqaCache';
import { HUGE_PAGE_BYTES, hugePagesAvailable } from '../../../backend/model/onnx/hugePages';
import { OrtNative } from '../../../backend/model/onnx/ortNative';

const shape = { layers: 2, kvHeads: 2, headDim: 128 };
const blockTokens = HUGE_PAGE_BYTES / (shape.headDim * 4); // 4,096 float32 slots per head
const skip = hugePagesAvailable() ? false : 'huge pages: Linux with koffi only';

const anonHugeBytes = () =>
  Number(/AnonHugePages:\s+(\d+)/.exec(readFileSync('/proc/self/smaps_rollup', 'utf8'))![1]) * 1024;

/** Slot t of head h in row r of array n: a value that says where it is. */
const mark = (n: number, r: number, h: number, t: number, d: number) =>
  n * 1e6 + r * 1e5 + h * 1e4 + (t % 1000) + d / 1000;

function fill(cache: GqaCache, row: number, tokens: number): void {
  const P = cache.capacity;
  [...cache.keys, ...cache.values].forEach((a, n) => {
    for (let h = 0; h < shape.kvHeads; h++)
      for (let t = 0; t < tokens; t++)
        for (let d = 0; d < shape.headDim; d += 31)
          a[((row * shape.kvHeads + h) * P + t) * shape.headDim + d] = mark(n, row, h, t, d);
  });
  cache.lengths[row] = tokens;
}

function assertFilled(cache: GqaCache, row: number, tokens: number, from = row): void {
  const P = cache.capacity;
  [...cache.keys, ...cache.values].forEach((a, n) => {
    for (let h = 0; h < shape.kvHeads; h++)
      for (let t = 0; t < tokens; t += 97)
        for (let d = 0; d < shape.headDim; d += 31)
          assert.equal(
            a[((row * shape.kvHeads + h) * P + t) * shape.headDim + d],
            Math.fround(mark(n, from, h, t, d)),
            `array ${n} row ${row} head ${h} slot ${t}`,
          );
  });
}

test(
  'a cache of a huge page or more per head: capacity in whole huge pages, every head region on a 2 MiB boundary',
  { skip },
  () => {
    const koffi = require('koffi') as typeof import('koffi');
    const cache = new GqaCache(OrtNative.load(), shape, 2, 5000);
    assert.equal(cache.capacity, 2 * blockTokens);
    for (const a of [...cache.keys, ...cache.values]) assert.equal(koffi.address(a) % BigInt(HUGE_PAGE_BYTES), 0n);
    cache.release();
    // Smaller caches keep the capacity asked for.
    const small = new GqaCache(OrtNative.load(), shape, 1, 300);
    assert.equal(small.capacity, 300);
    small.release();
  },
);

test(
  'collapseFilled: the blocks a row filled become huge pages, the values stay; growth and row selection keep them',
  { skip },
  () => {
    const cache = new GqaCache(OrtNative.load(), shape, 2, 5000);
    fill(cache, 0, blockTokens + 100);
    fill(cache, 1, 50);
    const before = anonHugeBytes();
    cache.collapseFilled();
    if (!hugePagesAvailable()) return; // a kernel without MADV_COLLAPSE said so: nothing collapsed, nothing to check
    // Row 0 filled one whole block in each head region of each array: 2 layers × K, V × 2 heads.
    const grown = anonHugeBytes() - before;
    assert.ok(grown >= 8 * HUGE_PAGE_BYTES, `AnonHugePages grew by ${grown} bytes`);
    assertFilled(cache, 0, blockTokens + 100);
    assertFilled(cache, 1, 50);
    // Growing past the capacity: a new buffer, still in whole huge pages, every value copied.
    cache.reserve(cache.capacity - cache.lengths[0] + 10);
    assert.equal(cache.capacity % blockTokens, 0);
    assertFilled(cache, 0, blockTokens + 100);
    assertFilled(cache, 1, 50);
    cache.collapseFilled();
    assertFilled(cache, 0, blockTokens + 100);
    // Row 1 becomes a copy of row 0 (n samples of one prompt).
    cache.selectRows([0, 0]);
    cache.collapseFilled();
    assertFilled(cache, 1, blockTokens + 100, 0);
    cache.release();
  },
);

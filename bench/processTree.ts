// Resident memory of a process and all its descendants (Linux /proc), sampled while a benchmark runs.
import { readdirSync, readFileSync } from 'node:fs';

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function rssBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Sum of VmRSS over `root` and every process below it. */
export function treeRssBytes(root: number): number {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    const parent = parentOf(pid);
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), pid]);
  }
  let total = 0;
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    total += rssBytes(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** Samples the tree's RSS every `everyMs` until stopped; returns the peak. */
export function samplePeakRss(root: number, everyMs = 200): { stop(): number } {
  let peak = treeRssBytes(root);
  const timer = setInterval(() => {
    peak = Math.max(peak, treeRssBytes(root));
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, treeRssBytes(root));
    },
  };
}

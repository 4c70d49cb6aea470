// A long module file for the file-session measurements (test/lean/fileSession.test.ts, test/prover/proveInFileSession.test.ts).
/** A module file with a copyright header, its own notation/macro/option, `lines` long, the target last (with sorry). */
export function bigModuleFile(lines: number): { file: string; targetLine: number } {
  const head = [
    '/-',
    'Copyright (c) 2026 Someone. All rights reserved.',
    'Released under Apache 2.0 license as described in the file LICENSE.',
    '-/',
    'module',
    '',
    'public import Mathlib',
    '',
    '/-! # A long file -/',
    '',
    '@[expose] public section',
    '',
    'namespace Big',
    '',
    'set_option doc.verso.suggestions false',
    'notation "twice " x => x + x',
    'macro "my_simp" : tactic => `(tactic| simp)',
    '',
  ];
  const body: string[] = [];
  for (let i = 1; head.length + body.length + 3 <= lines - 4; i++)
    body.push(`theorem lemma_${i} : (${i} : ℕ) + 0 = ${i} := by`, '  simp', '');
  while (head.length + body.length < lines - 4) body.push('');
  const targetLine = head.length + body.length + 1;
  const tail = ['theorem target (n : ℕ) : n + 0 = n := by', '  sorry', '', 'end Big'];
  return { file: [...head, ...body, ...tail].join('\n'), targetLine };
}

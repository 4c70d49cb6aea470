// TEST DATA: sorries where real files hold them (a def's term, an instance, an abbrev, a match arm, a where
// clause, a have of a longer proof), and the REPL's report of each (`sorries[].goal`, as Lean prints the goal).
import type { ReplSorry } from '../../backend/protocol';

export const SHAPES = `import Mathlib

namespace Shapes

def safeDiv (a b : Nat) (h : b ≠ 0) : { q : Nat // q * b ≤ a } :=
  ⟨a / b, sorry⟩

instance oneLtTwo : Fact (1 < 2) := ⟨sorry⟩

abbrev Pos := { n : Nat // 0 < n }

abbrev one : Pos := ⟨1, sorry⟩

def pred' : Nat → { n : Nat // n ≥ 0 }
  | 0 => ⟨0, sorry⟩
  | n + 1 => ⟨n, Nat.zero_le _⟩

theorem uses_aux (m : Nat) : m + 0 = m := aux m
where
  aux (n : Nat) : n + 0 = n := by
    sorry

theorem long_proof (a : Nat) (h : a = 2) : a + a = 4 := by
  have h1 : a + a = 2 * a := by
    sorry
  omega

problem imo_shape (n : Nat) (h : 0 < n) : 1 ≤ n := by
  sorry

end Shapes
`;

/** The goal Lean reports for each sorry, keyed by a piece of its line (as `lake env lean` prints them). */
const GOALS: [string, string][] = [
  ['⟨a / b, sorry⟩', 'a b : Nat\nh : b ≠ 0\n⊢ a / b * b ≤ a'],
  ['Fact (1 < 2)', '⊢ 1 < 2'],
  ['⟨1, sorry⟩', '⊢ 0 < 1'],
  ['| 0 =>', '⊢ 0 ≥ 0'],
  ['    sorry', 'n : Nat\n⊢ n + 0 = n'],
  ['  sorry', 'n : Nat\nh : 0 < n\n⊢ 1 ≤ n'],
];
const HAVE_GOAL = 'a : Nat\nh : a = 2\n⊢ a + a = 2 * a';

/** The REPL's sorries of a snippet, each with its goal: 1-based lines, codepoint columns. */
export function replSorries(code: string): ReplSorry[] {
  const out: ReplSorry[] = [];
  const lines = code.split('\n');
  lines.forEach((l, i) => {
    for (const m of l.matchAll(/(?<![\p{L}\p{N}_.'])sorry(?![\p{L}\p{N}_'])/gu)) {
      const column = [...l.slice(0, m.index)].length;
      const inHave = i > 0 && lines[i - 1].includes('have h1');
      const goal = inHave ? HAVE_GOAL : (GOALS.find(([k]) => l.includes(k))?.[1] ?? '⊢ True');
      out.push({ goal, pos: { line: i + 1, column }, endPos: { line: i + 1, column: column + 5 } });
    }
  });
  return out;
}

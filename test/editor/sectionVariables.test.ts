// What a theorem's statement gains from section variables (Lean v4.11+: named in the statement, or `include`d
// until `omit` or the end of the scope), read from the source.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gainedVariables } from '../../backend/editor/sectionVariables';

function byName(source: string): Record<string, { gained: string[]; hidden: string[]; elaborated: string }> {
  const out: Record<string, { gained: string[]; hidden: string[]; elaborated: string }> = {};
  const names = [...source.matchAll(/^theorem (\S+)/gm)].map((m) => [m.index!, m[1]] as const);
  for (const [offset, g] of gainedVariables(source)) {
    const name = names.find(([at]) => at === offset)?.[1] ?? `@${offset}`;
    out[name] = { gained: g.binders.map((b) => b.text), hidden: g.hidden.map((b) => b.text), elaborated: g.elaborated };
  }
  return out;
}

test('include adds a hidden hypothesis until omit or the end of its section; named variables are not hidden', () => {
  const source = [
    'variable (n : Nat) {α : Type} [inst : Inhabited α]',
    'theorem top : n = n := rfl',
    'section S',
    'variable (h : 1 = 2)',
    '  (k : 3 = 3)',
    'include h k',
    '-- include ignored in a comment: include n',
    'theorem uses : 2 = 1 := h.symm',
    'omit k',
    'theorem after_omit (m : Nat) : m = m := rfl',
    'end S',
    'theorem outside : True := trivial',
    'namespace A.B',
    'variable (q : False)',
    'include q',
    'theorem inner : 1 = 2 := q.elim',
    'end B',
    'theorem still_in_A : True := trivial',
    'end A',
  ].join('\n');
  const g = byName(source);
  assert.deepEqual(g.top, { gained: ['(n : Nat)'], hidden: [], elaborated: 'theorem top (n : Nat) : n = n' });
  assert.deepEqual(g.uses.hidden, ['(h : 1 = 2)', '(k : 3 = 3)']);
  assert.equal(g.uses.elaborated, 'theorem uses (h : 1 = 2) (k : 3 = 3) : 2 = 1');
  assert.deepEqual(g.after_omit.hidden, ['(h : 1 = 2)']);
  assert.equal(g.outside, undefined, 'the section ended: nothing gained');
  assert.deepEqual(g.inner.hidden, ['(q : False)']);
  assert.equal(g.still_in_A, undefined, '`end B` closed the scope of q (namespace A.B opened two)');
});

// The shown statement's size against the budget: for every theorem (or only those holding a sorry) of the Lean
// files given (default: the vendored real-file corpus), the tokens of the whole prefix (what the model was shown
// before) and of the bounded statement (backend/prover/statementContext.ts). `--tokenizer DIR` counts with a
// model's tokenizer.json (e.g. Qwen3's); without it, with the budget's own conservative estimate.
//   node --import tsx bench/statementContext.ts [--tokenizer DIR] [--sorries] [FILE…]
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { findDeclarations, formalStatementOf, PROVABLE_KINDS } from '../backend/lean/declarations';
import { STATEMENT_TOKEN_BUDGET, estimateTokens, shownStatement } from '../backend/prover/statementContext';
import { loadTokenizer } from '../backend/model/tokenizer';

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[s.length >> 1] : 0;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--tokenizer');
  const tokenizer = at >= 0 ? await loadTokenizer(args[at + 1]) : null;
  const sorriesOnly = args.includes('--sorries');
  let files = args.filter((a, k) => !a.startsWith('--') && (at < 0 || k !== at + 1));
  if (files.length === 0) {
    const root = join(__dirname, '..', 'test', 'fixtures', 'real-lean');
    files = (readdirSync(root, { recursive: true }) as string[])
      .filter((f) => f.endsWith('.lean'))
      .map((f) => join(root, f));
  }
  const count = (text: string) => (tokenizer ? tokenizer.encode(text).length : estimateTokens(text));
  console.log(
    `budget ${STATEMENT_TOKEN_BUDGET} tokens (estimate); counted with ${tokenizer ? 'the tokenizer' : 'the estimate'}`,
  );
  console.log('file\tlines\ttargets\twhole median\twhole max\tshown median\tshown max\tover budget');
  for (const file of files) {
    const src = readFileSync(file, 'utf8');
    const targets = findDeclarations(src).filter(
      (d) => (PROVABLE_KINDS.includes(d.kind) || d.kind === 'custom') && (!sorriesOnly || d.sorries.length > 0),
    );
    if (targets.length === 0) continue;
    const whole = targets.map((d) => count(formalStatementOf(src, d).text));
    const shown = targets.map((d) => shownStatement(src, d));
    const shownTokens = shown.map((s) => count(s.text));
    const over = shown.filter((s) => s.tokens > STATEMENT_TOKEN_BUDGET).length;
    console.log(
      [
        file,
        src.split('\n').length,
        targets.length,
        median(whole),
        Math.max(...whole),
        median(shownTokens),
        Math.max(...shownTokens),
        over,
      ].join('\t'),
    );
  }
}

void main();

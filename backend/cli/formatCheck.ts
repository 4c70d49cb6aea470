// `kimina format-check`: JSON Lines on stdin, one `{"ok", "error", "proof"}` line per input line, in order.
import { createInterface } from 'node:readline';
import { checkLine } from '../prover/checkLine';

const HELP = `usage: kimina format-check < answers.jsonl

Reads one JSON object per line: {"statement": "...", "response": "..."} or
{"statement": "...", "messages": [{"role": "...", "content": "..."}, ...]} (every assistant turn is checked).
Writes one line per input line: {"ok": bool, "error": "NONE" | "<FORMAT_ERROR>" | "invalid input: ...", "proof": string | null}.
Exit status 0 when every line was read (whatever the verdicts), 1 if any line was invalid input.`;

export async function run(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  if (args.length > 0) {
    console.error(`kimina format-check: unexpected argument '${args[0]}'\n\n${HELP}`);
    return 2;
  }
  let invalid = 0;
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    const result = checkLine(line);
    if (result.error.startsWith('invalid input')) invalid++;
    if (!process.stdout.write(JSON.stringify(result) + '\n')) await new Promise((r) => process.stdout.once('drain', r));
  }
  return invalid > 0 ? 1 : 0;
}

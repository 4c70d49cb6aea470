// Python's str.strip / lstrip / rstrip, which chat templates call (`.lstrip('\n')`, `|trim`), made
// exact for @huggingface/jinja: its versions ignore the argument and strip every whitespace character,
// so `lstrip('\n')` also ate spaces and the rendered prompt differed from transformers' jinja2.
import { Environment, Interpreter, parse, tokenize } from '@huggingface/jinja';

/**
 * Characters for which Python's `str.isspace()` is true, as a regex character class (what `\s` and `strip()` use on
 * str; JS's trim differs: no \x1c-\x1f, \x85, and it adds \ufeff). The prover's format checks build their regexes on it.
 */
export const PY_SPACE =
  '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const leadingSpace = new RegExp(`^[${PY_SPACE}]+`, 'u');
const trailingSpace = new RegExp(`[${PY_SPACE}]+$`, 'u');

export type StripSide = 'both' | 'left' | 'right';

/**
 * Python's s.strip(chars) / lstrip / rstrip (`side`), the one implementation (chat templates and the prover's format
 * checks): chars null or left out = whitespace; code points compared.
 */
export function pyStrip(s: string, chars?: string | null, side: StripSide = 'both'): string {
  if (chars === null || chars === undefined) {
    const left = side === 'right' ? s : s.replace(leadingSpace, '');
    return side === 'left' ? left : left.replace(trailingSpace, '');
  }
  const set = new Set(Array.from(chars));
  const points = Array.from(s);
  let start = 0;
  let end = points.length;
  if (side !== 'right') while (start < end && set.has(points[start])) start++;
  if (side !== 'left') while (end > start && set.has(points[end - 1])) end--;
  return points.slice(start, end).join('');
}

interface RuntimeValue {
  value: unknown;
  type: string;
}
type JinjaFunction = (args: RuntimeValue[]) => RuntimeValue;

let installed = false;

/**
 * Replaces the string methods strip/lstrip/rstrip and the trim filter of @huggingface/jinja's runtime
 * with Python's semantics. The runtime classes are not exported, so they are taken from a rendered
 * value; idempotent.
 */
export function installPythonStringMethods(): void {
  if (installed) return;
  installed = true;
  const sample = new Interpreter(new Environment()).run(parse(tokenize("{{ 'a' }}"))) as unknown as RuntimeValue & {
    builtins: Map<string, RuntimeValue>;
  };
  const StringValue = sample.constructor as new (v: string) => RuntimeValue;
  const FunctionValue = sample.builtins.get('upper')!.constructor as new (f: JinjaFunction) => RuntimeValue;
  const proto = StringValue.prototype as object;
  const original = Object.getOwnPropertyDescriptor(proto, 'builtins')?.get;
  if (!original) throw new Error('@huggingface/jinja: StringValue.builtins not found (unsupported version)');
  const charsArg = (name: string, args: RuntimeValue[]): string | null => {
    const a = args[0];
    if (a === undefined || a.type === 'NullValue' || a.type === 'UndefinedValue') return null;
    if (a.type !== 'StringValue') throw new Error(`${name}() argument must be a string or None`);
    return a.value as string;
  };
  Object.defineProperty(proto, 'builtins', {
    configurable: true,
    get(this: RuntimeValue & { _pyBuiltins?: Map<string, RuntimeValue> }) {
      if (this._pyBuiltins) return this._pyBuiltins;
      const map = new Map(original.call(this) as Map<string, RuntimeValue>);
      const text = this.value as string;
      for (const [name, side] of [
        ['strip', 'both'],
        ['lstrip', 'left'],
        ['rstrip', 'right'],
      ] as const) {
        map.set(name, new FunctionValue((args) => new StringValue(pyStrip(text, charsArg(name, args), side))));
      }
      this._pyBuiltins = map;
      return map;
    },
  });
  // The trim filter (jinja2: value.strip(chars)), with or without its argument.
  type Node = { type: string; value?: string; callee?: { type: string; value: string }; args?: unknown[] };
  const interp = Interpreter.prototype as unknown as {
    applyFilter(operand: RuntimeValue, filter: Node, env: unknown): RuntimeValue;
    evaluateArguments(args: unknown[], env: unknown): [RuntimeValue[], Map<string, RuntimeValue>];
  };
  const applyFilter = interp.applyFilter;
  interp.applyFilter = function (this: typeof interp, operand, filter, env) {
    if (operand instanceof StringValue) {
      if (filter.type === 'Identifier' && filter.value === 'trim')
        return new StringValue(pyStrip(operand.value as string, null));
      if (filter.type === 'CallExpression' && filter.callee?.type === 'Identifier' && filter.callee.value === 'trim') {
        const [args, kwargs] = this.evaluateArguments(filter.args ?? [], env);
        const chars = args[0] ?? kwargs.get('chars');
        return new StringValue(pyStrip(operand.value as string, chars ? charsArg('trim', [chars]) : null));
      }
    }
    return applyFilter.call(this, operand, filter, env);
  };
}

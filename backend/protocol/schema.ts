// A small schema vocabulary for request bodies: each schema is plain data (so tests can walk it and
// generate bad input), gives its TypeScript type through `Infer<typeof schema>`, and is checked at run
// time by `checkValue`. Problems come out in pydantic's terms (type, loc, msg) for the FastAPI-style
// routes, with a plain sentence (`text`) for routes that answer one message.

/** What a schema accepts, besides its type: */
interface Common {
  /** The key may be absent (object fields only). `null` counts as absent when `nullable` is set too. */
  optional?: boolean;
  nullable?: boolean;
  /** Replaces the message for the given problem types (`*` for all) at this place. */
  messages?: Partial<Record<ProblemType | '*', string>>;
}

export interface StringNode extends Common {
  kind: 'string';
  /** Length in UTF-16 code units. `max` is always given: no string is unbounded. */
  min?: number;
  max: number;
  /** Refuses text that is only whitespace. */
  notBlank?: boolean;
  pattern?: RegExp;
  /** What `pattern` means, for the message: e.g. "1-100 letters, digits or _.:-". */
  patternText?: string;
}
export interface NumberNode extends Common {
  kind: 'number';
  integer?: boolean;
  min?: number;
  max?: number;
  /** Exclusive lower bound (e.g. topP > 0). */
  above?: number;
}
export interface BooleanNode extends Common {
  kind: 'boolean';
}
export interface EnumNode extends Common {
  kind: 'enum';
  values: readonly string[];
}
export interface ArrayNode extends Common {
  kind: 'array';
  item: SchemaNode;
  min?: number;
  /** Always given: no list is unbounded. */
  max: number;
  /** Items must differ in this key (compared as strings). */
  uniqueBy?: string;
}
export interface ObjectNode extends Common {
  kind: 'object';
  fields: Record<string, SchemaNode>;
  /** `ignore` (pydantic's default, kimina-lean-server routes) or `forbid` unknown keys. */
  extra: 'ignore' | 'forbid';
  /** Rules across fields (e.g. "proof or code"), run when the fields themselves are fine. */
  refine?: (value: Record<string, unknown>) => RefineProblem[];
}
export interface RecordNode extends Common {
  kind: 'record';
  value: SchemaNode;
  maxKeys: number;
  keyMax: number;
}
/** One of several object shapes, told apart by a string field (`tag`). */
export interface VariantNode extends Common {
  kind: 'variant';
  tag: string;
  variants: Record<string, ObjectNode>;
}
/** The first of several schemas that accepts the value. */
export interface OneOfNode extends Common {
  kind: 'oneOf';
  options: SchemaNode[];
}

export type SchemaNode =
  StringNode | NumberNode | BooleanNode | EnumNode | ArrayNode | ObjectNode | RecordNode | VariantNode | OneOfNode;

/** A schema node that also carries the TypeScript type it accepts. */
export type Schema<T> = SchemaNode & { readonly __type?: T };
export type Infer<S> = S extends { readonly __type?: infer T } ? T : never;

type ProblemType =
  | 'missing'
  | 'model_attributes_type'
  | 'string_type'
  | 'bool_type'
  | 'int_type'
  | 'float_type'
  | 'list_type'
  | 'dict_type'
  | 'enum'
  | 'union_tag_invalid'
  | 'greater_than_equal'
  | 'greater_than'
  | 'less_than_equal'
  | 'string_too_short'
  | 'string_too_long'
  | 'string_pattern_mismatch'
  | 'too_short'
  | 'too_long'
  | 'extra_forbidden'
  | 'value_error'
  | 'json_invalid';

/** One thing wrong with a value: pydantic's type and location (`loc` from the body's root), its message, and a plain sentence. */
export interface Problem {
  type: ProblemType;
  loc: (string | number)[];
  msg: string;
  text: string;
}
/** What a `refine` rule reports; `loc` is relative to the object it checks. */
interface RefineProblem {
  loc: (string | number)[];
  msg: string;
  type?: ProblemType;
}

// ---- builders ----

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Optional = { optional: true };
type OptionalKeys<F> = { [K in keyof F]: F[K] extends Optional ? K : never }[keyof F];
type ObjectType<F extends Record<string, SchemaNode>> = Simplify<
  { [K in Exclude<keyof F, OptionalKeys<F>>]: Infer<F[K]> } & { [K in OptionalKeys<F>]?: Infer<F[K]> }
>;

export const s = {
  string: (o: Omit<StringNode, 'kind'>): Schema<string> => ({ kind: 'string', ...o }),
  number: (o: Omit<NumberNode, 'kind'> = {}): Schema<number> => ({ kind: 'number', ...o }),
  integer: (o: Omit<NumberNode, 'kind' | 'integer'> = {}): Schema<number> => ({ kind: 'number', integer: true, ...o }),
  boolean: (o: Omit<BooleanNode, 'kind'> = {}): Schema<boolean> => ({ kind: 'boolean', ...o }),
  enum: <const V extends string>(values: readonly V[], o: Omit<EnumNode, 'kind' | 'values'> = {}): Schema<V> => ({
    kind: 'enum',
    values,
    ...o,
  }),
  array: <I extends SchemaNode>(item: I, o: Omit<ArrayNode, 'kind' | 'item'>): Schema<Infer<I>[]> => ({
    kind: 'array',
    item,
    ...o,
  }),
  object: <F extends Record<string, SchemaNode>>(
    fields: F,
    o: Partial<Omit<ObjectNode, 'kind' | 'fields'>> = {},
  ): Schema<ObjectType<F>> & ObjectNode & { fields: F } => ({ kind: 'object', fields, extra: 'ignore', ...o }),
  record: <V extends SchemaNode>(
    value: V,
    o: Omit<RecordNode, 'kind' | 'value'>,
  ): Schema<Record<string, Infer<V>>> => ({ kind: 'record', value, ...o }),
  /** Each variant declares the tag field itself (`kind: s.enum(['started'])`), so its type names it. */
  variant: <V extends Record<string, ObjectNode & Schema<unknown>>>(
    tag: string,
    variants: V,
    o: Omit<VariantNode, 'kind' | 'tag' | 'variants'> = {},
  ): Schema<Infer<V[keyof V]>> => ({ kind: 'variant', tag, variants, ...o }),
  oneOf: <O extends SchemaNode[]>(
    options: O,
    o: Omit<OneOfNode, 'kind' | 'options'> = {},
  ): Schema<Infer<O[number]>> => ({ kind: 'oneOf', options, ...o }),
  /** The key may be absent. */
  optional: <S extends SchemaNode>(schema: S): S & Optional => ({ ...schema, optional: true }),
  /** The key may be absent or null (pydantic's `X | None = None`). */
  nullable: <T>(schema: Schema<T>): Schema<T | null> & Optional =>
    ({ ...schema, optional: true, nullable: true }) as Schema<T | null> & Optional,
};

// ---- checking ----

const name = (loc: (string | number)[]): string =>
  loc.length === 0
    ? 'the request body'
    : `'${loc.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('')}'`;

const shown = (key: string): string => (key.length > 60 ? `${key.slice(0, 60)}…` : key);

class Checker {
  readonly problems: Problem[] = [];

  add(node: SchemaNode, loc: (string | number)[], type: ProblemType, msg: string, text: string): void {
    const custom = node.messages?.[type] ?? node.messages?.['*'];
    this.problems.push({ type, loc, msg: custom ?? msg, text: custom ?? text });
  }

  value(node: SchemaNode, v: unknown, loc: (string | number)[]): void {
    if (v === null && node.nullable) return;
    switch (node.kind) {
      case 'string':
        this.string(node, v, loc);
        return;
      case 'number':
        this.number(node, v, loc);
        return;
      case 'boolean':
        if (typeof v !== 'boolean')
          this.add(node, loc, 'bool_type', 'Input should be a valid boolean', `${name(loc)} must be true or false`);
        return;
      case 'enum':
        if (typeof v !== 'string' || !node.values.includes(v)) {
          this.add(
            node,
            loc,
            'enum',
            `Input should be one of ${node.values.map((x) => `'${x}'`).join(', ')}`,
            `${name(loc)} must be one of ${node.values.join(', ')}`,
          );
        }
        return;
      case 'array':
        this.array(node, v, loc);
        return;
      case 'object':
        this.object(node, v, loc);
        return;
      case 'record':
        this.record(node, v, loc);
        return;
      case 'variant':
        this.variant(node, v, loc);
        return;
      case 'oneOf': {
        for (const option of node.options) {
          const trial = new Checker();
          trial.value(option, v, loc);
          if (trial.problems.length === 0) return;
        }
        const first = new Checker();
        first.value(node.options[0], v, loc);
        const p = first.problems[0];
        this.add(node, loc, p.type, p.msg, p.text);
        return;
      }
    }
  }

  private string(node: StringNode, v: unknown, loc: (string | number)[]): void {
    if (typeof v !== 'string') {
      this.add(node, loc, 'string_type', 'Input should be a valid string', `${name(loc)} must be a string`);
      return;
    }
    if (node.min !== undefined && v.length < node.min) {
      this.add(
        node,
        loc,
        'string_too_short',
        `String should have at least ${node.min} character${node.min === 1 ? '' : 's'}`,
        node.min === 1 ? `${name(loc)} is empty` : `${name(loc)} is shorter than ${node.min} characters`,
      );
    } else if (node.notBlank && v.trim() === '') {
      this.add(node, loc, 'string_too_short', 'String should not be blank', `${name(loc)} is empty`);
    }
    if (v.length > node.max)
      this.add(
        node,
        loc,
        'string_too_long',
        `String should have at most ${node.max} characters`,
        `${name(loc)} is longer than ${node.max} characters`,
      );
    if (node.pattern && !node.pattern.test(v)) {
      this.add(
        node,
        loc,
        'string_pattern_mismatch',
        `String should match pattern '${node.pattern.source}'`,
        `${name(loc)} must be ${node.patternText ?? `like ${node.pattern.source}`}`,
      );
    }
  }

  private number(node: NumberNode, v: unknown, loc: (string | number)[]): void {
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      const [type, msg] = node.integer
        ? (['int_type', 'Input should be a valid integer'] as const)
        : (['float_type', 'Input should be a valid number'] as const);
      this.add(node, loc, type, msg, `${name(loc)} must be a number${node.integer ? ' (a whole number)' : ''}`);
      return;
    }
    if (node.integer && !Number.isInteger(v)) {
      this.add(
        node,
        loc,
        'int_type',
        'Input should be a valid integer',
        `${name(loc)} must be a whole number, got ${v}`,
      );
      return;
    }
    const range = `${node.above !== undefined ? `above ${node.above}` : node.min !== undefined ? `at least ${node.min}` : ''}${node.max !== undefined ? `${node.above !== undefined || node.min !== undefined ? ' and ' : ''}at most ${node.max}` : ''}`;
    if (node.above !== undefined && v <= node.above)
      this.add(
        node,
        loc,
        'greater_than',
        `Input should be greater than ${node.above}`,
        `${name(loc)} must be ${range}, got ${v}`,
      );
    else if (node.min !== undefined && v < node.min)
      this.add(
        node,
        loc,
        'greater_than_equal',
        `Input should be greater than or equal to ${node.min}`,
        `${name(loc)} must be ${range}, got ${v}`,
      );
    else if (node.max !== undefined && v > node.max)
      this.add(
        node,
        loc,
        'less_than_equal',
        `Input should be less than or equal to ${node.max}`,
        `${name(loc)} must be ${range}, got ${v}`,
      );
  }

  private array(node: ArrayNode, v: unknown, loc: (string | number)[]): void {
    if (!Array.isArray(v)) {
      this.add(node, loc, 'list_type', 'Input should be a valid list', `${name(loc)} must be a list`);
      return;
    }
    if (node.min !== undefined && v.length < node.min) {
      this.add(
        node,
        loc,
        'too_short',
        `List should have at least ${node.min} item${node.min === 1 ? '' : 's'} after validation, not ${v.length}`,
        `${name(loc)} needs at least ${node.min} item${node.min === 1 ? '' : 's'}`,
      );
    }
    if (v.length > node.max) {
      // the items of an oversized list are not looked at: the answer stays small and quick
      this.add(
        node,
        loc,
        'too_long',
        `List should have at most ${node.max} items after validation, not ${v.length}`,
        `${name(loc)} has ${v.length} items; at most ${node.max} are allowed per request`,
      );
      return;
    }
    const seen = new Set<string>();
    v.forEach((item, i) => {
      const before = this.problems.length;
      this.value(node.item, item, [...loc, i]);
      if (node.uniqueBy && this.problems.length === before) {
        const key = String((item as Record<string, unknown>)[node.uniqueBy]);
        if (seen.has(key))
          this.add(
            node,
            [...loc, i, node.uniqueBy],
            'value_error',
            `Value error, ${node.uniqueBy} values must be unique`,
            `${name([...loc, i, node.uniqueBy])} repeats an earlier one`,
          );
        seen.add(key);
      }
    });
  }

  private isObject(node: SchemaNode, v: unknown, loc: (string | number)[]): v is Record<string, unknown> {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return true;
    if (loc.length === 0)
      this.add(
        node,
        loc,
        'model_attributes_type',
        'Input should be a JSON object',
        'the request body must be a JSON object',
      );
    else this.add(node, loc, 'dict_type', 'Input should be a valid dictionary', `${name(loc)} must be an object`);
    return false;
  }

  private object(node: ObjectNode, v: unknown, loc: (string | number)[]): void {
    if (!this.isObject(node, v, loc)) return;
    const before = this.problems.length;
    if (node.extra === 'forbid') {
      const unknown = Object.keys(v).filter((k) => !Object.hasOwn(node.fields, k));
      for (const key of unknown.slice(0, 10))
        this.add(
          node,
          [...loc, key],
          'extra_forbidden',
          'Extra inputs are not permitted',
          `unknown field: ${shown(key)}`,
        );
    }
    for (const [key, field] of Object.entries(node.fields)) {
      const present = Object.hasOwn(v, key) ? v[key] : undefined;
      if (present === undefined || (present === null && field.nullable)) {
        if (!field.optional)
          this.add(field, [...loc, key], 'missing', 'Field required', `${name([...loc, key])} is required`);
        continue;
      }
      this.value(field, present, [...loc, key]);
    }
    if (node.refine && this.problems.length === before) {
      for (const p of node.refine(v)) this.add(node, [...loc, ...p.loc], p.type ?? 'value_error', p.msg, p.msg);
    }
  }

  private record(node: RecordNode, v: unknown, loc: (string | number)[]): void {
    if (!this.isObject(node, v, loc)) return;
    const keys = Object.keys(v);
    if (keys.length > node.maxKeys) {
      this.add(
        node,
        loc,
        'too_long',
        `Object should have at most ${node.maxKeys} keys, not ${keys.length}`,
        `${name(loc)} has more than ${node.maxKeys} entries`,
      );
      return;
    }
    for (const key of keys) {
      if (key.length > node.keyMax)
        this.add(
          node,
          [...loc, shown(key)],
          'string_too_long',
          `Key should have at most ${node.keyMax} characters`,
          `a key of ${name(loc)} is longer than ${node.keyMax} characters`,
        );
      else this.value(node.value, v[key], [...loc, key]);
    }
  }

  private variant(node: VariantNode, v: unknown, loc: (string | number)[]): void {
    if (!this.isObject(node, v, loc)) return;
    const tag = v[node.tag];
    const names = Object.keys(node.variants);
    if (typeof tag !== 'string' || !Object.hasOwn(node.variants, tag)) {
      this.add(
        node,
        [...loc, node.tag],
        tag === undefined ? 'missing' : 'union_tag_invalid',
        tag === undefined ? 'Field required' : `Input tag should be one of ${names.map((x) => `'${x}'`).join(', ')}`,
        `${name([...loc, node.tag])} must be one of ${names.join(', ')}`,
      );
      return;
    }
    this.object(node.variants[tag], v, loc);
  }
}

/** Every problem with `value` against `schema` (empty when it conforms). Walks the schema, never deeper than it. */
export function checkValue(schema: SchemaNode, value: unknown): Problem[] {
  const c = new Checker();
  if (value === undefined) {
    if (!schema.optional) c.add(schema, [], 'missing', 'Field required', 'a JSON body is required');
  } else {
    c.value(schema, value, []);
  }
  return c.problems;
}

/**
 * Query strings arrive as text: turns the values of number fields that look like numbers into numbers, so
 * the same schema checks them (anything else stays text and fails the check).
 */
export function coerceQuery(schema: SchemaNode, query: Record<string, unknown>): Record<string, unknown> {
  if (schema.kind !== 'object') return query;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(query)) {
    const field = schema.fields[key];
    out[key] = field?.kind === 'number' && typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
  }
  return out;
}

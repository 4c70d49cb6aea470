// Bad input generated from a route's schema (backend/protocol/schema.ts): a valid baseline, then one change at
// a time at every place in it: a wrong type, null, out of range, too long, too many items, a missing required
// field, an unknown key. Every string the server could echo carries MARKER, so a test can see it never does.
import type { SchemaNode } from '../../backend/protocol';

export const MARKER = 'ECHO_MARKER';

/** The smallest value the schema accepts (every optional field included, so each can be spoiled). */
function validSample(node: SchemaNode): unknown {
  switch (node.kind) {
    case 'string': {
      const candidates = ['a'.repeat(Math.max(1, node.min ?? 1)), '0', 'cpu', 'x_1'];
      return candidates.find((c) => c.length <= node.max && (!node.pattern || node.pattern.test(c))) ?? 'a';
    }
    case 'number': {
      const low = node.above !== undefined ? node.above + (node.integer ? 1 : 0.5) : (node.min ?? 0);
      return node.max !== undefined ? Math.min(low, node.max) : low;
    }
    case 'boolean':
      return true;
    case 'enum':
      return node.values[0];
    case 'array':
      return Array.from({ length: Math.max(1, node.min ?? 0) }, (_, i) => {
        const item = validSample(node.item);
        return node.uniqueBy && item && typeof item === 'object' ? { ...item, [node.uniqueBy]: `id${i}` } : item;
      });
    case 'object':
      return Object.fromEntries(Object.entries(node.fields).map(([k, f]) => [k, validSample(f)]));
    case 'record':
      return { key: validSample(node.value) };
    case 'variant':
      return validSample(Object.values(node.variants)[0]);
    case 'oneOf':
      return validSample(node.options[0]);
  }
}

/** Values of the wrong kind for a node. */
function wrongTypes(node: SchemaNode): unknown[] {
  const notString = [5, [MARKER], { [MARKER]: MARKER }];
  switch (node.kind) {
    case 'string':
      return notString;
    case 'number':
      return [MARKER, true, [1]];
    case 'boolean':
      return [MARKER, 1];
    case 'enum':
      return [`${MARKER}-not-a-value`, 3];
    case 'array':
      return [MARKER, { 0: MARKER }];
    case 'object':
    case 'record':
    case 'variant':
      return [MARKER, [MARKER], 7];
    case 'oneOf':
      return [[MARKER], { [MARKER]: 1 }, true];
  }
}

/** Values of the right kind but outside the bounds. */
function outOfBounds(node: SchemaNode, valid: unknown): unknown[] {
  switch (node.kind) {
    case 'string':
      return [
        `${MARKER}${'x'.repeat(node.max + 1)}`,
        ...(node.min ? [''] : []),
        ...(node.pattern ? [`${MARKER} with spaces\n`] : []),
      ];
    case 'number':
      return [
        ...(node.min !== undefined ? [node.min - 1] : []),
        ...(node.above !== undefined ? [node.above] : []),
        ...(node.max !== undefined ? [node.max + 1] : []),
        ...(node.integer ? [(node.min ?? 0) + 0.5] : []),
      ];
    case 'array':
      return [Array.from({ length: node.max + 1 }, () => validSample(node.item)), ...(node.min ? [[]] : [])];
    case 'record':
      return [
        Object.fromEntries(Array.from({ length: node.maxKeys + 1 }, (_, i) => [`k${i}`, validSample(node.value)])),
      ];
    case 'variant':
      return [{ ...(valid as object), [node.tag]: `${MARKER}-kind` }];
    default:
      return [];
  }
}

interface Malformed {
  what: string;
  body: unknown;
}

/** The body as sent, plus deep nesting (which JSON.stringify itself cannot write) at the root and in each field. */
export function malformedTexts(root: SchemaNode, depth = 4): { what: string; text: string }[] {
  const nested = '['.repeat(100_000) + ']'.repeat(100_000);
  const fields = root.kind === 'object' ? Object.keys(root.fields) : [];
  return [
    { what: '100k-deep nested lists', text: nested },
    ...fields.map((k) => ({ what: `${k}: 100k-deep nested lists`, text: `{"${k}":${nested}}` })),
    ...malformedBodies(root, depth)
      .filter((m) => m.body !== undefined)
      .map((m) => ({ what: m.what, text: JSON.stringify(m.body) })),
  ];
}

/** One bad body per change, each at a named place (depth-first, at most `depth` levels down). */
function malformedBodies(root: SchemaNode, depth = 4): Malformed[] {
  const out: Malformed[] = [
    { what: 'a list instead of an object', body: [MARKER] },
    { what: 'a string instead of an object', body: MARKER },
    { what: 'null instead of an object', body: null },
  ];
  const baseline = validSample(root);
  const at = (path: (string | number)[], value: unknown, remove = false): unknown => {
    const copy = structuredClone(baseline) as Record<string | number, unknown>;
    let target = copy;
    for (const key of path.slice(0, -1)) target = target[key] as Record<string | number, unknown>;
    const last = path[path.length - 1];
    if (remove) delete target[last];
    else target[last] = value;
    return copy;
  };
  const visit = (node: SchemaNode, path: (string | number)[], value: unknown, level: number): void => {
    const name = path.join('.') || 'body';
    if (path.length > 0) {
      for (const v of wrongTypes(node))
        out.push({ what: `${name}: ${JSON.stringify(v).slice(0, 40)}`, body: at(path, v) });
      if (!node.nullable) out.push({ what: `${name}: null`, body: at(path, null) });
      for (const v of outOfBounds(node, value))
        out.push({ what: `${name}: out of bounds (${JSON.stringify(v).slice(0, 30)})`, body: at(path, v) });
      if (!node.optional) out.push({ what: `${name}: missing`, body: at(path, undefined, true) });
    }
    if (level >= depth) return;
    if (node.kind === 'object') {
      if (node.extra === 'forbid')
        out.push({
          what: `${name}: an unknown key`,
          body: path.length
            ? at(path, { ...(value as object), unexpectedField: 1 })
            : { ...(value as object), unexpectedField: 1 },
        });
      for (const [k, f] of Object.entries(node.fields))
        visit(f, [...path, k], (value as Record<string, unknown>)[k], level + 1);
    } else if (node.kind === 'array' && Array.isArray(value) && value.length > 0) {
      visit(node.item, [...path, 0], value[0], level + 1);
    } else if (node.kind === 'variant') {
      const variant = Object.values(node.variants)[0];
      for (const [k, f] of Object.entries(variant.fields))
        if (k !== node.tag) visit(f, [...path, k], (value as Record<string, unknown>)[k], level + 1);
    }
  };
  visit(root, [], baseline, 0);
  return out;
}

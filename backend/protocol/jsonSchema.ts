// A schema of ./schema.ts as JSON Schema (draft 2020-12, the dialect MCP tool listings use), for faces that
// publish their argument schemas to other programs (the MCP tool list, VS Code's languageModelTools). Cross-field
// rules (`refine`) have no JSON Schema form here: the run-time check (`checkValue`) still applies them.
import type { SchemaNode } from './schema';

export type JsonSchema = { [key: string]: unknown };

export function toJsonSchema(node: SchemaNode): JsonSchema {
  const nullable = (schema: JsonSchema): JsonSchema => (node.nullable ? { anyOf: [schema, { type: 'null' }] } : schema);
  switch (node.kind) {
    case 'string':
      return nullable({
        type: 'string',
        maxLength: node.max,
        ...(node.min !== undefined ? { minLength: node.min } : {}),
        ...(node.pattern ? { pattern: node.pattern.source } : {}),
      });
    case 'number':
      return nullable({
        type: node.integer ? 'integer' : 'number',
        ...(node.min !== undefined ? { minimum: node.min } : {}),
        ...(node.max !== undefined ? { maximum: node.max } : {}),
        ...(node.above !== undefined ? { exclusiveMinimum: node.above } : {}),
      });
    case 'boolean':
      return nullable({ type: 'boolean' });
    case 'enum':
      return nullable({ type: 'string', enum: [...node.values] });
    case 'array':
      return nullable({
        type: 'array',
        items: toJsonSchema(node.item),
        maxItems: node.max,
        ...(node.min !== undefined ? { minItems: node.min } : {}),
      });
    case 'object': {
      const required = Object.entries(node.fields)
        .filter(([, f]) => !f.optional)
        .map(([k]) => k);
      return nullable({
        type: 'object',
        properties: Object.fromEntries(Object.entries(node.fields).map(([k, f]) => [k, toJsonSchema(f)])),
        ...(required.length ? { required } : {}),
        additionalProperties: node.extra === 'ignore',
      });
    }
    case 'record':
      return nullable({
        type: 'object',
        additionalProperties: toJsonSchema(node.value),
        maxProperties: node.maxKeys,
      });
    case 'variant':
      return nullable({ oneOf: Object.values(node.variants).map(toJsonSchema) });
    case 'oneOf':
      return nullable({ anyOf: node.options.map(toJsonSchema) });
  }
}

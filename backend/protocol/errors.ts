// What a failed request lacks, as a kind its caller picks the remedy by (a button, a fallback), so that no code
// reads an error's message text to decide. Declared once here: a backend error carries it as its `kind`, an
// HTTP error answer as its body's `kind`, a failed custom LSP request in its ResponseError's `data.kind`.
export const errorKinds = ['model-missing', 'lean-missing', 'trainer-missing'] as const;
export type ErrorKind = (typeof errorKinds)[number];

/** The `data` of a failed custom LSP request: its kind (when it has one) and, for a relayed one, the HTTP status. */
export interface LspErrorData {
  kind?: ErrorKind;
  status?: number;
}

/** The kind an error carries: its own `kind`, or the `data.kind` it crossed the LSP boundary with; else undefined. */
export function errorKindOf(err: unknown): ErrorKind | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const data: unknown = (err as { data?: unknown }).data;
  const kind: unknown =
    (err as { kind?: unknown }).kind ??
    (typeof data === 'object' && data !== null ? (data as { kind?: unknown }).kind : undefined);
  return (errorKinds as readonly unknown[]).includes(kind) ? (kind as ErrorKind) : undefined;
}

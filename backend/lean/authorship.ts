// Trust follows authorship, and the type system carries it:
// - `UserSource`: a file the user wrote (or opened in a workspace they trust). Elaborated as Lean elaborates it in
//   their project: its header, notations, macros, options, `#eval`s, attributes and imports are never filtered or
//   rewritten. Every declaration it adds is still audited (a `sorry` is still a `sorry`).
// - `ModelText`: text a model wrote, or a snippet nobody vouches for (HTTP `/api/check`, `kimina check --untrusted`).
//   Filtered by the untrusted-code filter (untrusted.ts), spliced as one body, audited.
// A plain string is neither: a caller says which it holds by calling `userSource` or `modelText`, where the text
// comes in (the CLI's file argument, the prover's extracted proof, an HTTP body).

declare const authored: unique symbol;

export type UserSource = string & { readonly [authored]: 'user' };
export type ModelText = string & { readonly [authored]: 'model' };

/** The user's own file: trusted in a workspace the user trusts (docs/security.md). */
export function userSource(text: string): UserSource {
  return text as UserSource;
}

/** Text nobody vouches for: a model's answer, an HTTP snippet. */
export function modelText(text: string): ModelText {
  return text as ModelText;
}

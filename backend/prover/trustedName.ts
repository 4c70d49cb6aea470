// The trusted theorem's full name: the declaration a formal statement asks to prove, named as Lean names it
// (enclosing namespaces included). The prover passes it to the verifier's audit; so does the reward service.
import { selectDeclaration, type Declaration } from '../lean/declarations';

/** `Ns.name` for a declaration inside `namespace Ns`; undefined for an `example` (nothing to name). */
export function qualifiedName(decl: Declaration): string | undefined {
  if (!decl.name) return undefined;
  return decl.namespace ? `${decl.namespace}.${decl.name}` : decl.name;
}

/** The theorem a formal statement asks to prove, or undefined when it names none (or several, none marked). */
export function trustedTheoremName(statement: string): string | undefined {
  try {
    return qualifiedName(selectDeclaration(statement));
  } catch {
    return undefined;
  }
}

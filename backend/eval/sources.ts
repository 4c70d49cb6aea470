// The competition family of a benchmark problem, read from its name (miniF2F naming:
// aime_1983_p2, amc12a_2019_p21, imo_1959_p1, mathd_algebra_10, induction_…, numbertheory_…).
const families: [RegExp, string][] = [
  [/^aime/i, 'AIME'],
  [/^amc/i, 'AMC'],
  [/^imo/i, 'IMO'],
  [/^mathd/i, 'MATHD'],
  [/^algebra/i, 'ALGEBRA'],
  [/^numbertheory/i, 'NUMBER THEORY'],
  [/^induction/i, 'INDUCTION'],
];

export function sourceOf(name: string): string {
  for (const [pattern, family] of families) if (pattern.test(name)) return family;
  return 'OTHER';
}

/** The order sources appear in tables and plots: competitions first, then the rest. */
export const sourceOrder = ['AIME', 'AMC', 'IMO', 'MATHD', 'ALGEBRA', 'NUMBER THEORY', 'INDUCTION', 'OTHER'];

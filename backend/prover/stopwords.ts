// The stop list of the recipe's repetition check (check 4): a token in this set does not count towards
// the 10 content words a thinking line needs. Source: `COMMON_STOPWORDS` in the recipe's
// `kimina_prover_rl/reward/definitions.py` (138 entries), read from a stored copy of project-numina/verl.
// Only the single-word entries are listed here: the set's multi-word phrases ("we have", "given that", …),
// symbols (⇒, ∀, ∎, …) and LaTeX commands (\forall, …) can never equal a `\w+` token, so they never
// change the count.
export const STOPWORDS: ReadonlySet<string> = new Set(
  `
a an the and or of to in on for with by from as at is are was were be been it its this that these those
we you they he she i there their your his her not no yes but if only than then so
let assume suppose consider take fix define set choose given each every all any either otherwise exists exist
such wlog have obtain get see conclude note notice observe clearly obviously evidently hence thus therefore
implies imply iff since because
theorem lemma corollary proposition claim definition remark example proof qed
now next finally lastly again furthermore moreover first second third one two three
`
    .split(/\s+/)
    .filter((w) => w !== ''),
);

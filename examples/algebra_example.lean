import Mathlib

/-- Given that $2x + 3 = 11$ for a real number $x$, show that $x = 4$. -/
theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry

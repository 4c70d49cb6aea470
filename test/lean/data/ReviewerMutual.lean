-- The reviewer's file (issue 20): `mutual … end` inside a namespace, then a root and a namespaced `c`.
-- A finder without `mutual` closes `Foo` at the block's `end` and reports `Foo.c` under the clean root `c`.
theorem c : True := trivial

namespace Foo

mutual
  theorem a : True := trivial
  theorem b : True := trivial
end

theorem c : False := sorryAx False

end Foo

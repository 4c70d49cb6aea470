# Drives a running server with the real kimina-client (PyPI kimina-client 0.2.1) and prints
# "<id> <analyze status>" per snippet, sorted by id. Used by kimina-client.test.ts.
import sys
import typing

try:  # kimina-client 0.2.1 uses typing.TypedDict, which pydantic rejects on Python < 3.12
    import typing_extensions
    typing.TypedDict = typing_extensions.TypedDict
except ImportError:
    pass

from kimina_client import KiminaClient
from kimina_client.models import Snippet

url, token = sys.argv[1], sys.argv[2]
client = KiminaClient(api_url=url, api_key=token)
stmt = "theorem t (a b : Nat) (h : a = b) : b = a := by\n"
cases = {
    "honest": "import Mathlib\n" + stmt + "  simp [h]",
    "admit": stmt + "  admit",
    "axiom": "axiom cheat : False\n" + stmt + "  exact cheat.elim",
    "native": "theorem t : 2 + 2 = 4 := by native_decide",
    "sorry": stmt + "  sorry",
    "error": stmt + "  exact bogus_x",
    "hang": stmt + "  omega -- stand_in_hang",
}
result = client.check([Snippet(id=k, code=v) for k, v in cases.items()], timeout=2, show_progress=False)
for r in sorted(result.results, key=lambda x: x.id):
    print(r.id, r.analyze().status.value)

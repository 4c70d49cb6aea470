"""Unit tests of the error-fix cache: the recipe's filters in order, per-group substitution, persistence."""
import os
import tempfile
import unittest

from kimina_trainer.fix_cache import FixCache

ROW = {"prompt": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}], "formal_statement": "f",
       "prompt_id": "p", "turn": 1}


def offer(cache, result, row=ROW, tokens=10, max_tokens=100, max_chars=3000):
    cache.offer(row, "answer", result, max_chars, lambda conv: tokens, max_tokens)


class FixCacheTest(unittest.TestCase):
    def test_filters_in_recipe_order(self):
        c = FixCache()
        offer(c, {"acc": 1, "feedback": None})
        offer(c, {"acc": 0, "feedback": None})
        offer(c, {"acc": 0, "feedback": "x" * 3001})
        offer(c, {"acc": 0, "feedback": "err"}, row={**ROW, "turn": 2})
        offer(c, {"acc": 0, "feedback": "err"}, tokens=101)
        self.assertEqual(len(c), 0)
        offer(c, {"acc": 0, "feedback": "err"})
        self.assertEqual(len(c), 1)
        self.assertEqual(c.take_counters(), {
            "multiturn/turn_1/valid": 1, "multiturn/turn_1/filtered": 1, "multiturn/turn_1/feedback_too_long": 1,
            "multiturn/turn_2/exceed_max_turn": 1, "multiturn/turn_1/max_prompt_token_len_exceeded": 1,
            "multiturn/turn_1/added_in_database": 1})
        entry = c.entries[0]
        self.assertEqual(entry["turn"], 2)
        self.assertEqual([m["role"] for m in entry["prompt"]], ["system", "user", "assistant", "user"])
        self.assertEqual(entry["prompt"][2]["content"], "answer")
        self.assertEqual(entry["prompt"][3]["content"], "err")

    def test_empty_feedback_of_a_sorry_only_failure_still_makes_a_fix_prompt(self):
        c = FixCache()
        offer(c, {"acc": 0, "feedback": ""})
        self.assertEqual(len(c), 1)

    def test_capacity_keeps_the_newest(self):
        c = FixCache(capacity=3)
        for i in range(5):
            c.add({"prompt_id": str(i)})
        self.assertEqual([e["prompt_id"] for e in c.entries], ["2", "3", "4"])

    def test_substitution_replaces_whole_groups_about_half_the_time(self):
        c = FixCache(sampling_rate=0.5, seed=1)
        c.add({**ROW, "prompt_id": "fix", "turn": 2})
        rows = [{**ROW, "prompt_id": f"g{g}"} for g in range(200) for _ in range(4)]
        out = c.substitute(rows, 4, step=3)
        self.assertEqual(len(out), len(rows))
        groups = [out[i:i + 4] for i in range(0, len(out), 4)]
        for g in groups:
            self.assertEqual(len({r["prompt_id"] for r in g}), 1, "a group must answer one conversation")
        fixed = sum(1 for g in groups if g[0]["prompt_id"] == "fix")
        self.assertTrue(70 <= fixed <= 130, fixed)
        self.assertEqual(out, c.substitute(rows, 4, step=3), "deterministic for a step")

    def test_no_substitution_while_empty_or_disabled(self):
        rows = [dict(ROW) for _ in range(4)]
        self.assertIs(FixCache().substitute(rows, 2, 0), rows)
        c = FixCache(sampling_rate=0)
        c.add(ROW)
        self.assertIs(c.substitute(rows, 2, 0), rows)

    def test_rejects_batches_not_made_of_groups(self):
        c = FixCache()
        c.add(ROW)
        with self.assertRaises(ValueError):
            c.substitute([ROW] * 3, 2, 0)

    def test_save_and_load(self):
        c = FixCache()
        c.add({**ROW, "turn": 2})
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fix_cache.json")
            c.save(path)
            c2 = FixCache()
            c2.load(path)
            self.assertEqual(c2.entries, c.entries)
            c3 = FixCache()
            c3.load(os.path.join(d, "missing.json"))
            self.assertEqual(c3.entries, [])


if __name__ == "__main__":
    unittest.main()


class SeedTest(unittest.TestCase):
    def test_seeds_follow_the_recipe_filters_and_are_counted(self):
        cache = FixCache(capacity=10)
        conv = lambda feedback, answer="a": [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                                             {"role": "assistant", "content": answer}, {"role": "user", "content": feedback}]
        rows = [
            {"prompt": conv("x" * 3000), "formal_statement": "t", "prompt_id": "1"},
            {"prompt": conv("𝕜" * 3000), "formal_statement": "t", "prompt_id": "2"},  # 3000 code points: kept
            {"prompt": conv("x" * 3001), "formal_statement": "t", "prompt_id": "3"},
            {"prompt": conv("", answer="a" * 500), "formal_statement": "t", "prompt_id": "4"},  # sorry-only: empty feedback
            {"prompt": conv("", answer="a" * 5000), "formal_statement": "t", "prompt_id": "5"},
        ]
        chars = lambda msgs: sum(len(m["content"]) for m in msgs)
        counts = cache.add_seeds(rows, 3000, chars, 4000)
        self.assertEqual(dict(counts), {"added_in_database": 3, "feedback_too_long": 1, "max_prompt_token_len_exceeded": 1})
        self.assertEqual([e["prompt_id"] for e in cache.entries], ["1", "2", "4"])
        self.assertTrue(all(e["turn"] == 2 for e in cache.entries))

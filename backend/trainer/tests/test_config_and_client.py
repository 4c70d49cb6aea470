"""Unit tests of the run config validation, request chunking and completion text rebuilding."""
import json
import os
import tempfile
import unittest

from kimina_trainer.backend_client import MAX_BODY_BYTES, MAX_CHUNK_ITEMS, BackendError, chunks, encode
from kimina_trainer.chat import completion_text, previous_answers
from kimina_trainer.config import load_config

BASE = {"run_id": "r", "backend_url": "http://127.0.0.1:1", "model_path": "m", "output_dir": "o", "train_file": "t"}


def write(d, cfg):
    path = os.path.join(d, "run.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


class ConfigTest(unittest.TestCase):
    def test_defaults_follow_the_recipe(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = load_config(write(d, BASE))
        self.assertEqual((cfg.epsilon, cfg.epsilon_high, cfg.beta, cfg.num_generations), (0.2, 0.3, 0.0, 8))
        self.assertEqual(cfg.generation_batch_size, 2048)
        self.assertIsNone(cfg.lora)

    def test_lora_and_unknown_keys(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = load_config(write(d, {**BASE, "lora": {"r": 8, "alpha": 16}}))
            self.assertEqual((cfg.lora.r, cfg.lora.alpha), (8, 16))
            with self.assertRaisesRegex(ValueError, "unknown run config keys: bogus"):
                load_config(write(d, {**BASE, "bogus": 1}))

    def test_rejects_impossible_batches(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(ValueError, "at least 2"):
                load_config(write(d, {**BASE, "num_generations": 1}))
            with self.assertRaisesRegex(ValueError, "multiple of per_device_batch"):
                load_config(write(d, {**BASE, "prompts_per_step": 3, "num_generations": 2, "per_device_batch": 4}))


class ChunkTest(unittest.TestCase):
    def test_chunks_keep_order_and_size(self):
        items = [{"response": "x" * 100_000, "i": i} for i in range(60)]
        parts = chunks(items)
        self.assertGreater(len(parts), 1)
        self.assertEqual([it["i"] for p in parts for it in p], list(range(60)))
        for p in parts:
            self.assertLessEqual(len(encode({"items": p})), MAX_BODY_BYTES)

    def test_cjk_answers_are_measured_as_sent(self):
        # 64 answers with 20,000 CJK characters of thinking each: 60 KB apiece in UTF-8, 120 KB with \u escapes
        think = ("因为二乘以未知数加三等于十一，所以未知数等于四。" * 1000)[:20_000]
        items = [{"promptId": str(i), "turn": 1, "formalStatement": "theorem t : True := by", "previous": [],
                  "response": f"<think>\n{think}\n</think>\n```lean4\ntheorem t : True := by\n  trivial\n```"} for i in range(64)]
        envelope = {"step": 3, "purpose": "train"}
        parts = chunks(items, envelope)
        self.assertEqual([it["promptId"] for p in parts for it in p], [str(i) for i in range(64)])
        self.assertGreater(len(parts), 1)
        for p in parts:
            body = encode({**envelope, "items": p})
            self.assertLessEqual(len(body), MAX_BODY_BYTES)
            self.assertLess(len(body), 4 * 1024 * 1024)  # the backend's body limit
            self.assertLessEqual(len(p), MAX_CHUNK_ITEMS)
            self.assertNotIn(b"\\u", body)  # sent as UTF-8, exactly as measured
            self.assertEqual(json.loads(body.decode("utf-8"))["items"], p)

    def test_item_count_is_capped(self):
        parts = chunks([{"i": i} for i in range(200)])
        self.assertEqual([len(p) for p in parts], [64, 64, 64, 8])

    def test_one_oversized_answer_is_an_error(self):
        with self.assertRaises(BackendError):
            chunks([{"response": "x" * (MAX_BODY_BYTES + 1)}])
        with self.assertRaises(BackendError):  # 1.2 M CJK characters: 3.6 MB in UTF-8
            chunks([{"response": "证" * 1_200_000}])


class ChatTest(unittest.TestCase):
    def test_completion_text_rebuilds_split_thinking(self):
        self.assertEqual(completion_text([{"role": "assistant", "content": "A"}]), "A")
        self.assertEqual(completion_text([{"role": "assistant", "reasoning_content": "r", "content": "A"}]), "<think>r</think>A")

    def test_previous_answers(self):
        msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                {"role": "assistant", "content": "a1"}, {"role": "user", "content": "fb"}]
        self.assertEqual(previous_answers(msgs), ["a1"])


if __name__ == "__main__":
    unittest.main()

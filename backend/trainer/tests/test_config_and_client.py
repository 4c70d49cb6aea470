"""Unit tests of the run config validation, request chunking and completion text rebuilding."""
import json
import os
import tempfile
import unittest

from kimina_trainer.backend_client import MAX_BODY_BYTES, MAX_CHUNK_ITEMS, BackendError, chunks, encode
from kimina_trainer.chat import completion_text, previous_answers
from kimina_trainer.config import load_config

# A complete config as the backend writes it for the recipe preset (every key is required).
BASE = {"run_id": "r", "backend_url": "http://127.0.0.1:1", "model_path": "m", "output_dir": "o", "train_file": "t",
        "held_out_file": None, "fix_seed_file": None, "token": None, "launch_id": None, "backend_pid": None, "learning_rate": 2e-6, "num_generations": 8,
        "prompts_per_step": 256, "per_device_batch": 256, "max_completion_length": 24576, "max_prompt_length": 8192,
        "temperature": 1.0, "top_p": 1.0, "epsilon": 0.2, "epsilon_high": 0.3, "beta": 0.0, "max_steps": 1000,
        "save_steps": 5, "eval_steps": 5, "eval_samples": 8, "eval_top_p": 0.95, "seed": 42, "lora": None,
        "use_vllm": "auto", "vllm_gpu_memory_utilization": 0.3, "fix_sampling_rate": 0.5, "fix_cache_size": 5000,
        "max_feedback_chars": 3000, "gradient_checkpointing": True, "use_cpu": False, "final_export": True}


def write(d, cfg):
    path = os.path.join(d, "run.json")
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


class ConfigTest(unittest.TestCase):
    def test_every_key_is_required(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = load_config(write(d, BASE))
            self.assertEqual(cfg.generation_batch_size, 2048)
            self.assertIsNone(cfg.lora)
            partial = {k: v for k, v in BASE.items() if k not in ("epsilon_high", "fix_cache_size")}
            with self.assertRaisesRegex(ValueError, "missing run config keys .*: epsilon_high, fix_cache_size"):
                load_config(write(d, partial))

    def test_grpo_sampling_and_is_correction_follow_the_recipe(self):
        from kimina_trainer.worker import build_args

        with tempfile.TemporaryDirectory() as d:
            cfg = load_config(write(d, {**BASE, "output_dir": d, "use_cpu": True, "per_device_batch": 8,
                                        "prompts_per_step": 2, "gradient_checkpointing": False}))
            args = build_args(cfg, vllm=False)
        self.assertEqual(args.top_k, 0, "no top-k cut (verl's -1)")
        self.assertFalse(args.vllm_importance_sampling_correction, "the recipe's verl has no IS correction")
        self.assertEqual((args.loss_type, args.scale_rewards, args.epsilon_high), ("dr_grpo", "none", 0.3))

    def test_lora_and_unknown_keys(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = load_config(write(d, {**BASE, "lora": {"r": 8, "alpha": 16, "dropout": 0.0, "target_modules": ["q_proj"]}}))
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

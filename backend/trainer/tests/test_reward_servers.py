"""kimina_reward.py's spreading over several reward servers against FAKE SERVERS: http.server in threads on
127.0.0.1 standing in for `kimina serve`'s /health, /v1/load and /v1/training/reward (each answer's score is the
number written in it, so a lost, doubled or reordered reward shows at once). A fake server can take a set time per
batch or hang (hold every request of a route until the test ends), to check that a server that stops answering is
taken out within a bounded time while the others finish, and that the /health and /v1/load probes never hold up
the batches."""
from __future__ import annotations

import importlib.util
import json
import os
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))


def load_module():
    spec = importlib.util.spec_from_file_location("kimina_reward_under_test", os.path.join(HERE, "..", "verl", "kimina_reward.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class FakeServer:
    """One stand-in reward server. `batch_s`: seconds per reward request; `hang`: routes that never answer while
    the test runs (released at the end)."""

    def __init__(self, batch_s: float = 0.05, hang: tuple[str, ...] = (), fail_first: int = 0, busy: bool = False):
        self.busy = busy  # every reward request answered 429 with Retry-After: 1
        self.batch_s = batch_s
        self.hang = set(hang)
        self.fail_first = fail_first  # reward requests answered 500 before it works
        self.release = threading.Event()
        self.reward_requests = 0
        self.answered_items = 0
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *_):
                pass

            def _json(self, obj):
                data = json.dumps(obj).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _hold(self, route: str) -> bool:
                if route in fake.hang:
                    fake.release.wait(60)
                    return True
                return False

            def do_GET(self):
                if self.path == "/health":
                    if not self._hold("health"):
                        self._json({"status": "ok"})
                elif self.path == "/v1/load":
                    if not self._hold("load"):
                        self._json({"inFlight": 0, "capacity": 4, "waiting": 0})
                else:
                    self.send_error(404)

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8"))
                with fake.lock:
                    fake.reward_requests += 1
                    fail = fake.reward_requests <= fake.fail_first
                if fail:
                    self.send_error(500)
                    return
                if fake.busy:
                    self.send_response(429)
                    self.send_header("Retry-After", "1")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if self._hold("reward"):
                    return
                time.sleep(fake.batch_s)
                results = [{"score": float(it["response"]), "acc": 0.0, "code": None, "feedback": None,
                            "formatErrorText": "No error."} for it in body["items"]]
                with fake.lock:
                    fake.answered_items += len(results)
                self._json({"results": results})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


N = 48
SOLS = [str(i) for i in range(N)]  # each answer's reward is its own number
INFOS = [{"formal_statement": "theorem t : True := by", "index": str(i)} for i in range(N)]


class RewardServersTest(unittest.TestCase):
    def setUp(self):
        self.m = load_module()  # a fresh module: no server state from another test
        self.servers: list[FakeServer] = []
        self.saved = {k: os.environ.get(k) for k in ("KIMINA_REWARD_URL", "KIMINA_REWARD_BATCH_ITEMS",
                                                     "KIMINA_REWARD_CONCURRENCY", "KIMINA_REWARD_TIMEOUT_S",
                                                     "KIMINA_API_TOKEN", "KIMINA_VERDICT_MODE")}
        for k in self.saved:
            os.environ.pop(k, None)
        os.environ["KIMINA_REWARD_BATCH_ITEMS"] = "4"  # 12 batches of 4 answers

    def tearDown(self):
        for s in self.servers:
            s.close()
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v

    def start(self, *fakes: FakeServer) -> None:
        self.servers.extend(fakes)
        os.environ["KIMINA_REWARD_URL"] = ",".join(f.url for f in fakes)

    def score(self) -> tuple[list[float], float]:
        t0 = time.monotonic()
        out = self.m.reward(["s"] * N, SOLS, [None] * N, INFOS)
        return out, time.monotonic() - t0

    def test_a_hung_server_is_taken_out_within_a_bounded_time_while_the_others_finish(self):
        # every route of `hung` holds its requests: no answer to batches, /health or /v1/load
        self.m.MIN_DEADLINE_S = 1.0
        self.m.PROBE_TIMEOUT_S = 1.0
        good1, hung, good2 = FakeServer(), FakeServer(hang=("reward", "health", "load")), FakeServer()
        self.start(good1, hung, good2)
        rewards, seconds = self.score()
        self.assertEqual(rewards, [float(i) for i in range(N)], "every answer one reward, in order")
        # the request timeout is 900 s; the deadline (1 s here, doubling per retry) and the probes' bound of
        # 1 s (the body limit's /health at the start) are what bound it
        self.assertLess(seconds, 10.0, f"the call took {seconds:.1f} s")
        self.assertGreater(hung.reward_requests, 0, "the hung server was handed batches before it was taken out")
        self.assertEqual(good1.answered_items + good2.answered_items, N, "the others checked every answer once")
        state = self.m._servers[hung.url]
        self.assertTrue(state.out, "the hung server is out")
        self.assertIn("no answer to a batch", state.last_error)
        self.assertFalse(self.m._servers[good1.url].out)
        self.assertFalse(self.m._servers[good2.url].out)

    def test_probes_do_not_hold_up_the_batches(self):
        # /v1/load of one server never answers, with a probe bound far above the time the batches take
        self.m.PROBE_TIMEOUT_S = 30.0
        slow_load, good = FakeServer(hang=("load",)), FakeServer()
        self.start(slow_load, good)
        rewards, seconds = self.score()
        self.assertEqual(rewards, [float(i) for i in range(N)])
        self.assertLess(seconds, 10.0, f"the call took {seconds:.1f} s: a /v1/load probe held up the batches")
        self.assertGreater(slow_load.answered_items, 0, "its batches were still scored on the last load figure")

    def test_a_server_out_whose_health_hangs_does_not_hold_up_the_call(self):
        # a server out earlier, due for its /health probe when the call starts; the probe never answers
        # (a blocking probe would cost PROBE_TIMEOUT_S here, or 5 s as the module once had it)
        self.m.PROBE_TIMEOUT_S = 30.0
        hung, good = FakeServer(hang=("health",)), FakeServer()
        self.start(hung, good)
        self.m._limits[hung.url] = self.m.DEFAULT_BODY_LIMIT  # its body limit already read
        state = self.m.servers_from(os.environ["KIMINA_REWARD_URL"])[0]
        state.take_out("earlier failure")
        state.out_until = 0.0  # due for its /health probe now
        rewards, seconds = self.score()
        self.assertEqual(rewards, [float(i) for i in range(N)])
        self.assertLess(seconds, 4.0, f"the call took {seconds:.1f} s: a /health probe held up the batches")
        self.assertEqual(hung.answered_items, 0)
        self.assertEqual(good.answered_items, N)

    def test_one_slow_server_alone_is_not_taken_out(self):
        # no other server answers, so a batch past its deadline is waited for (until the request timeout)
        self.m.MIN_DEADLINE_S = 0.2
        slow = FakeServer(batch_s=0.6)
        self.start(slow)
        rewards, _ = self.score()
        self.assertEqual(rewards, [float(i) for i in range(N)])
        self.assertFalse(self.m._servers[slow.url].out)
        self.assertEqual(slow.answered_items, N)

    def test_a_slower_server_that_answers_stays_in(self):
        # 3x slower than the other but well within the deadline: it keeps its share
        self.m.MIN_DEADLINE_S = 1.0
        slow, fast = FakeServer(batch_s=0.15), FakeServer(batch_s=0.05)
        self.start(slow, fast)
        rewards, _ = self.score()
        self.assertEqual(rewards, [float(i) for i in range(N)])
        self.assertFalse(self.m._servers[slow.url].out)
        self.assertGreater(slow.answered_items, 0)
        self.assertEqual(slow.answered_items + fast.answered_items, N)

    def test_a_failed_server_comes_back_in_the_next_call_once_healthy(self):
        flaky, steady = FakeServer(fail_first=1), FakeServer()
        self.start(flaky, steady)
        rewards, _ = self.score()
        self.assertEqual(rewards, [float(i) for i in range(N)])
        state = self.m._servers[flaky.url]
        self.assertTrue(state.out, "taken out after its 500")
        before = flaky.answered_items
        time.sleep(1.2)  # past the first back-off
        rewards, _ = self.score()
        self.assertEqual(rewards, [float(i) for i in range(N)])
        self.assertFalse(state.out, "back in after /health answered")
        self.assertGreater(flaky.answered_items, before, "and scoring batches again")

    def test_a_busy_server_beside_a_dead_one_ends_the_call_after_the_wait_limit(self):
        # one server answers 429 forever, the other is gone: the wait is counted and the call ends with a clear error
        busy = FakeServer(busy=True)
        dead = FakeServer()
        dead.close()
        self.servers.append(busy)
        os.environ["KIMINA_REWARD_URL"] = f"{busy.url},{dead.url}"
        self.m.MAX_WAIT_S = 3.0
        t0 = time.monotonic()
        with self.assertRaises(self.m.RewardServiceError) as ctx:
            self.m.reward(["s"] * N, SOLS, [None] * N, INFOS)
        self.assertLess(time.monotonic() - t0, 30.0)
        self.assertIn("429", str(ctx.exception))


if __name__ == "__main__":
    unittest.main()

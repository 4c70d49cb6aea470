"""The trainer's lifeline (kimina_trainer/lifeline.py) in real processes: a child bound to a parent that dies goes
with it, by the Linux parent-death signal and, with the signal off, by end-of-file on its stdin."""
import os
import subprocess
import sys
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A parent that starts a bound child (printing its pid), then waits; the test kills the parent with SIGKILL.
PARENT = textwrap.dedent('''
    import os, subprocess, sys, time
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(os.getpid())], stdin=subprocess.PIPE, start_new_session=True)
    print(child.pid, flush=True)
    time.sleep(600)
''')
CHILD = textwrap.dedent('''
    import os, sys, time
    from kimina_trainer import lifeline
    if os.environ.get("NO_PDEATHSIG"):
        lifeline.set_parent_death_signal = lambda: False
    lifeline.bind_to_backend(int(sys.argv[1]))
    time.sleep(600)
''')


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


class LifelineTest(unittest.TestCase):
    def orphan_dies(self, extra_env: dict) -> float:
        env = dict(os.environ, PYTHONPATH=HERE, **extra_env)
        parent = subprocess.Popen([sys.executable, "-c", f"CHILD = {CHILD!r}\n{PARENT}"], env=env, stdout=subprocess.PIPE, text=True)
        child = int(parent.stdout.readline())
        time.sleep(1.0)  # the child has armed its lifeline
        self.assertTrue(alive(child))
        parent.kill()
        parent.wait()
        t0 = time.monotonic()
        while alive(child) and time.monotonic() - t0 < 10:
            time.sleep(0.05)
        self.assertFalse(alive(child), "the child outlived its parent")
        return time.monotonic() - t0

    @unittest.skipUnless(sys.platform.startswith("linux"), "parent-death signal is Linux only")
    def test_parent_death_signal(self):
        self.assertLess(self.orphan_dies({}), 5)

    def test_stdin_end_of_file(self):
        self.assertLess(self.orphan_dies({"NO_PDEATHSIG": "1"}), 5)

    def test_stop_line_on_stdin(self):
        """Windows' graceful stop: a `stop` line on stdin calls on_stop; other lines, and a line cut in two, do not."""
        child_code = textwrap.dedent('''
            import os, sys, time
            from kimina_trainer import lifeline
            lifeline.bind_to_backend(os.getppid(), on_stop=lambda: (print("on_stop", flush=True), os._exit(0)))
            print("ready", flush=True)
            time.sleep(600)
        ''')
        env = dict(os.environ, PYTHONPATH=HERE)
        child = subprocess.Popen([sys.executable, "-c", child_code], env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, text=True)
        try:
            self.assertEqual(child.stdout.readline().strip(), "ready")
            child.stdin.write("hello\nstopx\nst")
            child.stdin.flush()
            time.sleep(0.5)
            self.assertIsNone(child.poll(), "a line other than `stop` stopped it")
            child.stdin.write("op\n")
            child.stdin.flush()
            self.assertEqual(child.wait(timeout=10), 0)
            self.assertEqual(child.stdout.read().strip(), "on_stop")
        finally:
            child.kill()
            child.wait()
            child.stdin.close()
            child.stdout.close()

    def test_started_by_hand_binds_nothing(self):
        from kimina_trainer.lifeline import bind_to_backend
        self.assertEqual(bind_to_backend(None), "none (started by hand)")


if __name__ == "__main__":
    unittest.main()

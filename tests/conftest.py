import functools
import http.server
import os
import threading

import numpy as np
import pytest

# kernels keep the thread count the test expects: the watcher that narrows it while other
# processes compete for the cores (mxc/_core/threads.py) would make results and thread-count
# assertions depend on the machine's load; tests/_core/test_threads.py tests it on its own
os.environ.setdefault("MXC_FOLLOW_LOAD", "0")
# downloads (datasets, pretrained models) go to a port nothing listens on: refused at once, so no
# test reaches the internet or waits on it; tests that download serve their files locally
os.environ["MXNET_GLUON_REPO"] = "http://127.0.0.1:9/"


@pytest.fixture
def rng(request):
    """A seeded generator; the seed is printed when the test fails (MXC_TEST_SEED overrides)."""
    seed = int(os.environ.get("MXC_TEST_SEED", np.random.SeedSequence().entropy % 2**31))
    print(f"MXC_TEST_SEED={seed}")
    return np.random.default_rng(seed)


class _Served:
    """Files of `root` served over HTTP from 127.0.0.1 on a thread; `hits` counts GETs by path,
    and `fail_first` paths answer 503 that many times first"""

    def __init__(self, root):
        served = self
        self.root, self.hits, self.fail_first = root, {}, {}

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                served.hits[self.path] = served.hits.get(self.path, 0) + 1
                if served.fail_first.get(self.path, 0) > 0:
                    served.fail_first[self.path] -= 1
                    self.send_error(503)
                    return
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(
            ("127.0.0.1", 0), functools.partial(Handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def served(tmp_path):
    """An HTTP server on 127.0.0.1 over the empty directory `served.root` (tmp_path/www)"""
    root = tmp_path / "www"
    root.mkdir()
    s = _Served(root)
    yield s
    s.close()

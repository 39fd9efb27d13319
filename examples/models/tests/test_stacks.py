"""The stacks' request bodies (no frameworks needed): what the tests under a memory limit send."""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import stacks  # noqa: E402


class BodyTest(unittest.TestCase):
    def test_a_clustering_body_is_its_rows_dumped(self):
        for n in (0, 1, 34, 35, 36, 70, 1001, 20000):
            rows = [[2 + (i % 7) * 0.5, 3 + (i % 5) * 0.5] for i in range(n)]
            self.assertEqual(stacks.rows_body(n), json.dumps({"instances": rows}), n)
            self.assertEqual(stacks.body("clustering", ([n], 1)), json.dumps({"instances": rows}), n)


if __name__ == "__main__":
    unittest.main()

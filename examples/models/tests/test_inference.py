"""The examples' inference code, without the containers: the pure parts (parsing, tiers, heads, clustering)."""
import importlib.util
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.normpath(os.path.join(HERE, "..", "..", "..", "runtime", "python")))

from resilient_endpoint_runtime import RequestRejected  # noqa: E402


def load(name):
    path = os.path.join(HERE, "..", name, "code", "inference.py")
    spec = importlib.util.spec_from_file_location(name + "_inference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ClusteringInferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load("clustering")
        cls.model = {"centroids": [[1.9, 2.1], [5.0, 8.1], [8.0, 3.1]]}

    def test_model_fn_reads_model_json(self):
        import tempfile
        d = tempfile.mkdtemp()
        with open(os.path.join(d, "model.json"), "w") as f:
            json.dump(self.model, f)
        self.assertEqual(self.m.model_fn(d)["centroids"], self.model["centroids"])

    def test_json_and_csv_requests(self):
        self.assertEqual(self.m.input_fn(b'{"instances": [[2, 2], [8, 3]]}', "application/json"), [[2, 2], [8, 3]])
        self.assertEqual(self.m.input_fn("2,2\n8,3\n", "text/csv"), [[2.0, 2.0], [8.0, 3.0]])
        with self.assertRaises(ValueError):
            self.m.input_fn("x", "application/x-npy")

    def test_nearest_centroid(self):
        out = self.m.predict([[2, 2], [5, 8], [8, 3], [7.9, 2.9]], self.model, 0)
        self.assertEqual(out, {"clusters": [0, 1, 2, 2], "degradeLevel": 0, "truncated": 0})

    def test_levels_cut_the_request(self):
        rows = [[2, 2]] * 1000
        self.assertEqual(self.m.predict(rows, self.model, 1)["truncated"], 1000 - self.m.TIERS.degraded_len)
        with self.assertRaises(RequestRejected):
            self.m.predict(rows, self.model, 2)
        with self.assertRaises(RequestRejected):
            self.m.predict([[2, 2]] * (self.m.TIERS.max_len + 1), self.model, 0)

    def test_output_is_json_and_responses_pass_through(self):
        body, ctype = self.m.output_fn({"clusters": [1]}, "application/json")
        self.assertEqual((json.loads(body), ctype), ({"clusters": [1]}, "application/json"))
        sentinel = object()
        self.assertIs(self.m.output_fn(sentinel, "application/json"), sentinel)


class RecommenderInferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load("recommender")

    def test_parse_request(self):
        events, profile = self.m.parse_request(json.dumps({"events": [1, 2, 50003], "profile": [0.5] * 20}))
        self.assertEqual(events, [1, 2, 3])
        self.assertEqual(len(profile), 20)
        for bad in ({"events": []}, {"events": [1], "profile": [1.0]}):
            with self.assertRaises(ValueError):
                self.m.parse_request(json.dumps(bad))

    def test_incident_a_tiers_and_heads(self):
        short, long, too_long = list(range(300)), list(range(800)), list(range(1100))
        self.assertEqual(self.m.plan(short, 0), (short, ("ctr", "cvr", "dwell")))
        self.assertEqual(self.m.plan(long, 0)[0], long)  # 512–1024: accepted at level 0
        kept, heads = self.m.plan(long, 1)
        self.assertEqual((len(kept), kept[-1], heads), (512, 799, ("ctr",)))  # newest 512 events, secondary heads off
        with self.assertRaises(RequestRejected) as e:
            self.m.plan(long, 2)
        self.assertEqual(e.exception.status, 413)
        with self.assertRaises(RequestRejected):
            self.m.plan(too_long, 0)  # > 1024: rejected and logged at every level


if __name__ == "__main__":
    unittest.main()

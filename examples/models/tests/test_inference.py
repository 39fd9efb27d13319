"""The examples' inference code without frameworks: parsing, tiers, heads, rejections as the toolkits
answer them. (test_serving.py runs the same code with real torch and scikit-learn over HTTP.)"""
import json
import os
import random
import sys
import tracemalloc
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from harness import Context, load_example  # noqa: E402
from resilient_endpoint_runtime import Rejection, RequestRejected  # noqa: E402


def recorded(test, name, m):
    """The example's committed memory profile records the unit and selectors its module declares: what
    `npm run profile:examples` writes from them, so a new profile keeps the drift monitor's RequestSize."""
    with open(os.path.join(HERE, "..", name, "memory-profile.json")) as f:
        profile = json.load(f)
    fields = ("sizeUnit", "sizeSelector", "csvSizeSelector")
    declared = (m.PROFILE_SIZE_UNIT, getattr(m, "PROFILE_SIZE_SELECTOR", None), getattr(m, "PROFILE_CSV_SIZE_SELECTOR", None))
    test.assertEqual(tuple(profile.get(k) for k in fields), declared)
    test.assertIsNotNone(declared[1])  # without one, drift compares no request size with the profile
    # Measured on a quiet machine: the planner and the simulator size the example's fleet on its latencies (the profiles
    # before read 10-40x high, measured at load 12, and gave the clustering example 7 instances where 2 serve).
    test.assertIsNotNone(profile.get("cpuWaitShare"), "profile again with npm run profile:examples")
    test.assertLessEqual(profile["cpuWaitShare"], 0.10, "measured on a busy machine: profile again with nothing else running")


class ClusteringInferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load_example("clustering")

    def test_json_and_csv_requests(self):
        self.assertEqual(self.m.parse_rows(b'{"instances": [[2, 2], [8, 3]]}', "application/json"), [[2.0, 2.0], [8.0, 3.0]])
        self.assertEqual(self.m.parse_rows("2,2\n8,3\n", "text/csv"), [[2.0, 2.0], [8.0, 3.0]])
        # input_fn counts the rows without parsing them: the guard admits the parsing too
        r = self.m.input_fn(b'{"instances": [[2, 2], [8, 3], [5, 8]]}', "application/json")
        self.assertEqual((type(r).__name__, r.rows), ("Request", 3))
        self.assertEqual(self.m.input_fn("2,2\n8,3\n\n", "text/csv").rows, 2)

    def test_csv_rows_are_its_non_blank_lines_counted_without_copying_a_line(self):
        # The definition: the lines ``bytes.strip`` leaves something of. Bodies of short random runs of the bytes that
        # matter (newlines, the ASCII blanks strip removes, a no-break space's UTF-8 bytes, which it keeps, a cell).
        defined = lambda body: sum(1 for line in body.split(b"\n") if line.strip())  # noqa: E731
        rng = random.Random(7)
        alphabet = [b"\n", b" ", b"\t", b"\r", b"\x0b", b"\x0c", b"\xc2\xa0", b"1,2"]
        for _ in range(20000):
            body = b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 10)))
            self.assertEqual(self.m.count_rows(body, "text/csv"), defined(body), body)
        # A 200,000-row body is counted in its bytes: splitting it into lines took ~10 MiB before the guard admitted it.
        big = b"\n".join(b"%d.125,%d.5" % (i, i) for i in range(200000)) + b"\n"
        tracemalloc.start()
        try:
            self.assertEqual(self.m.count_rows(big, "text/csv"), 200000)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        self.assertLess(peak, 64 * 1024)

    def test_only_the_rows_kept_are_parsed(self):
        body = json.dumps({"instances": [[i, i] for i in range(10)]}).encode()
        self.assertEqual(self.m.parse_rows(body, "application/json", limit=3), [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
        self.assertEqual(self.m.parse_rows("1,1\n2,2\n3,3\n", "text/csv", limit=2), [[1.0, 1.0], [2.0, 2.0]])
        spaced = b'{"instances": [ [1, 2] , [3, 4], [5, 6] ], "id": 7}'  # not the plain shape: parsed whole, then cut
        self.assertEqual(self.m.parse_rows(spaced, "application/json", limit=2), [[1.0, 2.0], [3.0, 4.0]])

    def test_bad_requests_are_rejections_not_exceptions(self):
        cases = [("x", "application/x-npy", 415), ("{nope", "application/json", 400), ('{"rows": []}', "application/json", 400),
                 ('{"instances": [[1]]}', "application/json", 400), ("a,b\n", "text/csv", 400), ('{"instances": []}', "application/json", 400)]
        for body, ctype, status in cases:
            r = self.m.predict_fn(self.m.input_fn(body, ctype), None)
            self.assertIsInstance(r, Rejection, body)
            self.assertEqual(r.status, status, body)

    def test_no_memory_to_parse_is_a_413_not_a_500(self):
        class Exhausted(bytes):
            def decode(self, *a):
                raise MemoryError()

        r = self.m.parse_rows(Exhausted(b"1,2\n"), "text/csv")
        self.assertEqual((r.status, r.reason), (413, "memory"))

    def test_a_rejection_is_answered_as_a_json_response_with_its_status(self):
        response = self.m.output_fn(Rejection(413, "degraded", "too many rows"), "application/json")
        self.assertEqual((response.status, response.mimetype), (413, "application/json"))
        self.assertEqual(json.loads(response.body), {"error": "too many rows", "reason": "degraded", "status": 413})
        body, ctype = self.m.output_fn({"clusters": [1]}, "application/json")
        self.assertEqual((json.loads(body), ctype), ({"clusters": [1]}, "application/json"))

    def test_profiler_hooks(self):
        body, ctype = self.m.profile_request(30)
        self.assertEqual(self.m.request_size(self.m.input_fn(body, ctype)), 30)
        self.assertEqual(self.m.request_size(self.m.parse_rows(body, ctype)), 30)
        recorded(self, "clustering", self.m)


class RecommenderInferenceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = load_example("recommender")

    def test_parse_request(self):
        events, profile = self.m.parse_request(json.dumps({"events": [1, 2, 50003], "profile": [0.5] * 20}))
        self.assertEqual(events, [1, 2, 3])
        self.assertEqual(len(profile), 20)
        for bad, status in (({"events": []}, 400), ({"events": [1], "profile": [1.0]}, 400)):
            self.assertEqual(self.m.parse_request(json.dumps(bad)).status, status)
        self.assertEqual(self.m.parse_request("{", "application/json").status, 400)
        self.assertEqual(self.m.parse_request("1,2", "text/csv").status, 415)

    def test_the_profile_records_the_modules_unit_and_selector(self):
        recorded(self, "recommender", self.m)

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
            self.m.plan(too_long, 0)  # > 1024: rejected at every level

    def test_a_rejection_sets_the_status_on_the_toolkits_context_and_answers_json(self):
        context = Context({})
        body, ctype = self.m.output_fn(Rejection(413, "too_long", "1100 events"), "application/json", context)
        self.assertEqual((context.status[0], ctype, json.loads(body)["reason"]), (413, "application/json", "too_long"))


if __name__ == "__main__":
    unittest.main()

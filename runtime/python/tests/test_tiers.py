import unittest

from resilient_endpoint_runtime import LengthTiers, RequestRejected


class LengthTiersTest(unittest.TestCase):
    def setUp(self):
        self.t = LengthTiers(max_len=1024, degraded_len=512)

    def test_level_0_full_length_up_to_the_maximum(self):
        seq = list(range(1000))
        self.assertEqual(self.t.apply(seq, 0), seq)
        exactly = list(range(1024))  # MAX_SEQ_LEN itself is accepted (incident A: "> 1024 rejected")
        self.assertEqual(self.t.apply(exactly, 0), exactly)

    def test_over_the_maximum_is_rejected_at_every_level_as_a_4xx(self):
        for level in (0, 1, 2):
            with self.assertRaises(RequestRejected) as e:
                self.t.apply(list(range(1025)), level)
            self.assertEqual(e.exception.status, 413)
            self.assertEqual(e.exception.reason, "too_long")
            self.assertTrue(400 <= e.exception.status < 500)

    def test_level_1_truncates_to_the_newest_events(self):
        seq = list(range(800))
        out = self.t.apply(seq, 1)
        self.assertEqual(len(out), 512)
        self.assertEqual(out[-1], 799)
        self.assertEqual(out[0], 288)
        self.assertEqual(self.t.apply(list(range(300)), 1), list(range(300)))

    def test_level_2_rejects_over_the_degraded_length(self):
        with self.assertRaises(RequestRejected) as e:
            self.t.apply(list(range(513)), 2)
        self.assertEqual(e.exception.reason, "degraded")
        self.assertEqual(e.exception.body()["status"], 413)
        self.assertEqual(len(self.t.apply(list(range(512)), 2)), 512)

    def test_batch_caps(self):
        self.assertEqual([LengthTiers.batch_cap(32, level) for level in (0, 1, 2)], [32, 16, 8])
        self.assertEqual(LengthTiers.batch_cap(1, 2), 1)
        with self.assertRaises(ValueError):
            LengthTiers.batch_cap(0, 0)

    def test_defaults_from_the_environment(self):
        import os
        os.environ["MAX_SEQ_LEN"], os.environ["DEGRADED_MAX_SEQ_LEN"] = "100", "10"
        try:
            t = LengthTiers()
            self.assertEqual((t.max_len, t.degraded_len), (100, 10))
        finally:
            del os.environ["MAX_SEQ_LEN"], os.environ["DEGRADED_MAX_SEQ_LEN"]

    def test_inconsistent_settings(self):
        with self.assertRaises(ValueError):
            LengthTiers(max_len=100, degraded_len=200)
        with self.assertRaises(ValueError):
            LengthTiers(max_len=0, degraded_len=0)
        with self.assertRaises(ValueError):
            LengthTiers(max_len=100, degraded_len=101)
        self.assertEqual(LengthTiers(max_len=100, degraded_len=100).degraded_len, 100)


if __name__ == "__main__":
    unittest.main()

import unittest

from stats import mean, median


class CoreTest(unittest.TestCase):
    def test_mean(self) -> None:
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_median_odd(self) -> None:
        self.assertEqual(median([3, 1, 2]), 2)

    def test_median_even(self) -> None:
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

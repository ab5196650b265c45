from tabulate import tabulate

from stats.core import mean, median

rows = [[str(v), mean(v), median(v)] for v in ([1, 2, 3], [4, 1, 3, 2], [10])]
print(tabulate(rows, headers=["values", "mean", "median"]))

from .core import mean, median

__all__ = ["mean", "median"]

"""A small statistics package."""

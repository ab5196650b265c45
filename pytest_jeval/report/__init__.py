"""Self-contained HTML reports of result files."""

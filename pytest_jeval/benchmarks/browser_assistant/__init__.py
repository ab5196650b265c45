"""The offline page bundle of ``browser_assistant``: HTML to text, the page store and its tools."""

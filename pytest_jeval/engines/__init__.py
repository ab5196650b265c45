"""Model engines: the OpenAI-compatible client and the bundled local model server."""

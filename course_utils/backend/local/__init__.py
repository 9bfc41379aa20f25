"""The offline backend: a Gemini-compatible app served in-process on local models."""

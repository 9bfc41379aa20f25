"""The backend: `make_client()` and what answers its requests (Gemini, or the in-process local app). Every lesson
that asks a model starts with `client.make_client` and `backend_of`; lesson 00 checks `provision.models.status`.

The lowest layer: it imports nothing else from course_utils.
"""

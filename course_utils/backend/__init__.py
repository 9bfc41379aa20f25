"""The backend: `make_client()` and what answers its requests (Gemini, or the in-process local app).

The lowest layer: it imports nothing else from course_utils.
"""

"""The course's offline sentence encoders (``embed``: USE and E5 on the CPU), and the Gemini embedding methods they
serve (``api``), for the local backend and for an OpenAI-compatible server's client alike."""

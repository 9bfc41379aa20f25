"""Local model files: the published models and how they are fetched and verified (``models``), and what a GGUF
file's header says about itself (``gguf``). ``python -m course_utils models fetch`` runs ``models.fetch_model``."""

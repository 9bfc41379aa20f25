"""The command-line tools: `python -m course_utils COMMAND …`. Nothing in the lessons or the backend imports them."""

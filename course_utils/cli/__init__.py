"""The learner's command line: `python -m course_utils COMMAND …`. Nothing in the lessons or the backend imports it;
the development commands are the lab's (`scripts.lab`)."""

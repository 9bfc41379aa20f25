"""pyproject.toml and environment.yml install the same pinned versions of what the course needs."""
import tomllib

import yaml

from course_utils.skills.paths import REPO_ROOT

COURSE_EXTRAS = ("local", "course")
"""What `make course` installs besides the dependencies; `make test` adds the other extras (dev, fuzz)."""
ALSO_IN_ENVIRONMENT = ("ruff", "jsonschema")
"""Test tooling environment.yml installs as well, at the `dev` extra's pin: the linter, so that a contributor's
`ruff check .` finds what CI finds, and jsonschema, so that `audit --format sarif` can be checked against the
SARIF schema offline (tests/fixtures/sarif/)."""


def test_every_dependency_is_pinned_exactly():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    pinned = set(project["dependencies"]).union(*project["optional-dependencies"].values())
    assert all("==" in requirement for requirement in pinned), "every dependency is pinned exactly"


def test_environment_yml_pins_what_the_course_needs_as_pyproject_does():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    course = set(project["dependencies"]).union(*(extras[name] for name in COURSE_EXTRAS))
    course |= {pin for pin in extras["dev"] if pin.split("==")[0] in ALSO_IN_ENVIRONMENT}
    assert len(course & set(extras["dev"])) == len(ALSO_IN_ENVIRONMENT), "each tool named is pinned in `dev`"
    environment = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert set(pip_section) - {"-e ."} == course
    assert "-e ." in pip_section
    assert "python=3.11" in environment["dependencies"]
    assert set(extras) - set(COURSE_EXTRAS) == {"dev", "fuzz"}, "a new extra: say here whether the course needs it"

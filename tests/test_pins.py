"""pyproject.toml and environment.yml install the same pinned versions."""
import tomllib

import yaml

from course_utils.paths import REPO_ROOT


def test_environment_yml_pins_match_pyproject():
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    pinned = set(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        pinned |= set(extra)
    assert all("==" in requirement for requirement in pinned), "every dependency is pinned exactly"
    environment = yaml.safe_load((REPO_ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict))
    assert set(pip_section) - {"-e ."} == pinned
    assert "-e ." in pip_section
    assert "python=3.11" in environment["dependencies"]

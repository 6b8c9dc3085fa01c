"""pyproject.toml against the repository: console scripts, modules, packages, extensions, requirements."""

import ast
import glob
import os
import tomllib

from options import console_scripts

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Directories with Python code that `pip install .` leaves out: nothing at run time imports them.
NOT_INSTALLED = {"benchmarks", "tests", "tools"}
SKIP_DIRS = {".venv", ".git", "__pycache__", "build", "demo_output", "benchmark_output"}


def _pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


def _module_ast(path):
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def _runs_as_main(tree):
    """Whether the module has a top-level `if __name__ == "__main__":` block."""
    return any(isinstance(node, ast.If) and ast.unparse(node.test).replace("'", '"') == '__name__ == "__main__"'
               for node in tree.body)


def _entry_points():
    """Top-level files that run as scripts (not tests): their module names."""
    names = []
    for path in sorted(glob.glob(os.path.join(ROOT, "*.py"))):
        name = os.path.basename(path)[:-3]
        if not name.endswith("_test") and name != "conftest" and _runs_as_main(_module_ast(path)):
            names.append(name)
    return names


def test_console_scripts_are_exactly_the_entry_points_under_their_file_names():
    scripts = _pyproject()["project"]["scripts"]
    entry_points = _entry_points()
    assert len(entry_points) >= 10
    assert sorted(scripts) == [name + ".py" for name in entry_points]
    for name in entry_points:
        assert scripts[name + ".py"] == "options.console_scripts:" + name
        assert callable(getattr(console_scripts, name))


def test_each_entry_point_defines_main():
    for name in _entry_points():
        tree = _module_ast(os.path.join(ROOT, name + ".py"))
        assert any(isinstance(node, ast.FunctionDef) and node.name == "main" for node in tree.body), name


def test_the_entry_points_are_installed_as_top_level_modules():
    assert _pyproject()["tool"]["setuptools"]["py-modules"] == _entry_points()


def _top_level_code_directories():
    found = set()
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = [d for d in subdirs if d not in SKIP_DIRS and not d.startswith(".")]
        if directory != ROOT and any(name.endswith(".py") for name in files):
            found.add(os.path.relpath(directory, ROOT).split(os.sep)[0])
    return found


def test_every_library_directory_is_installed_with_its_subpackages():
    find = _pyproject()["tool"]["setuptools"]["packages"]["find"]
    included = {pattern for pattern in find["include"] if "*" not in pattern}
    assert sorted(find["include"]) == sorted(included | {name + ".*" for name in included})
    assert included == _top_level_code_directories() - NOT_INSTALLED
    assert find["namespaces"]  # demo/ has no __init__.py.


def test_every_cython_module_is_an_optional_extension():
    extensions = _pyproject()["tool"]["setuptools"]["ext-modules"]
    sources = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "pretraining_data", "*.pyx")))
    assert sorted(source for ext in extensions for source in ext["sources"]) == sources
    for ext in extensions:
        assert ext["sources"] == [ext["name"].replace(".", "/") + ".pyx"]
        assert ext["optional"] is True
    assert "Cython>=3.0" in _pyproject()["build-system"]["requires"]


def test_dependencies_are_requirements_txt():
    pyproject = _pyproject()
    assert pyproject["project"]["dynamic"] == ["dependencies"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["dependencies"] == {"file": ["requirements.txt"]}

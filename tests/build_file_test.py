"""BUILD names every Python and Cython file (.py, .pyx, .pxd), and nothing that does not exist."""

import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_DIRS = {".venv", ".git", "__pycache__", "build", "demo_output", "benchmark_output"}


def _python_files():
    found = set()
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = [d for d in subdirs if d not in SKIP_DIRS and not d.startswith(".")]
        for name in files:
            if name.endswith((".py", ".pyx", ".pxd")):
                found.add(os.path.relpath(os.path.join(directory, name), ROOT))
    return found


def _build_text():
    with open(os.path.join(ROOT, "BUILD")) as f:
        return f.read()


def _named_files(text):
    return set(re.findall(r'"([\w./-]+\.(?:py|pyx|pxd))"', text))


def test_every_python_file_is_in_build():
    missing = sorted(_python_files() - _named_files(_build_text()))
    assert not missing, "Python files not named in BUILD: %s" % missing


def test_build_names_only_existing_files():
    stale = sorted(f for f in _named_files(_build_text()) if not os.path.exists(os.path.join(ROOT, f)))
    assert not stale, "BUILD names files that do not exist: %s" % stale


def test_every_test_file_is_a_py_test():
    text = _build_text()
    tests = sorted(f for f in _python_files() if f.endswith("_test.py"))
    for test in tests:
        pattern = r'py_test\(\s*name = "[\w-]+",\s*srcs = \["%s"\]' % re.escape(test)
        assert re.search(pattern, text), "%s is not the srcs of a py_test in BUILD" % test

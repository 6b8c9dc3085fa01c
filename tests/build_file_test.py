"""BUILD: what tools/build_file.py writes from the code's imports, naming every Python and Cython file.

The generator's rules are checked on a small tree of their own; the committed BUILD must equal its output.
"""

import importlib.util
import os
import re
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SPEC = importlib.util.spec_from_file_location("build_file", os.path.join(ROOT, "tools", "build_file.py"))
build_file = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(build_file)
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


def write(root, files):
    for path, text in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_text(textwrap.dedent(text))


def target(text, name):
    """The block of the target named `name` in a generated BUILD."""
    start = text.index('    name = "%s",' % name)
    return text[text.rindex("\n", 0, start - 1) + 1:text.index("\n)\n", start) + 3]


@pytest.fixture
def tree(tmp_path):
    write(tmp_path, {
        "shapes/__init__.py": "from shapes import area\n",
        "shapes/area.py": "import math\n\nimport numpy as np\n\ndef f():\n    from shapes import _fast  # optional\n",
        "shapes/_fast.pyx": "",
        "shapes/testing.py": "import shapes\n",
        "shapes/area_test.py": "import pytest\n\nfrom shapes import area, testing\n",
        "shapes/draw.py": "from absl import app\n\nif __name__ == '__main__':\n    app.run(None)\n",
        "conftest.py": "import pytest\n",
        "run_shapes.py": "import shapes\nfrom tensorflow import keras\n\nif __name__ == \"__main__\":\n    pass\n",
        "run_shapes_test.py": ('"""Runs run_shapes.py."""\nimport subprocess\n\n'
                               'def test_it():\n    subprocess.run(["python", "run_shapes.py"])\n'
                               '    open("requirements.txt")\n'),
        "requirements.txt": "numpy\n",
        "docs_only.py": '"""Mentions run_shapes.py only in its docstring."""\n\nif __name__ == "__main__":\n    pass\n',
    })
    return tmp_path


def test_each_rule_gives_the_target_the_docstring_says(tree):
    text = build_file.generate(str(tree))
    # The folder's library: its modules, the extension it imports (inside a function), the third-party package.
    assert target(text, "shapes") == textwrap.dedent('''\
        py_library(
            name = "shapes",
            srcs = [
                "shapes/__init__.py",
                "shapes/area.py",
            ],
            deps = [
                ":shapes_extensions",
                "@pypi//numpy",
            ],
        )
        ''')
    assert 'pyx_library(\n    name = "shapes_extensions",\n    srcs = ["shapes/_fast.pyx"],\n)' in text
    assert "testonly = True" in target(text, "shapes_testing") and '":shapes"' in target(text, "shapes_testing")
    # A test depends on what it imports and on the conftest.py above it; a script in a folder is a binary.
    test = target(text, "shapes_area_test")
    assert test.startswith("py_test(") and all(dep in test for dep in (
        '":conftest"', '":shapes"', '":shapes_testing"', '"@pypi//pytest"'))
    draw = target(text, "shapes_draw")
    assert 'main = "shapes/draw.py"' in draw and '"@pypi//absl_py"' in draw
    # A program named in a string is data of the test that runs it, and so is a top-level file it reads;
    # a docstring naming a program is not.
    assert 'data = [\n        ":run_shapes",\n        "requirements.txt",\n    ],' in target(text, "run_shapes_test")
    assert "data" not in target(text, "docs_only")
    assert '"@pypi//tensorflow"' in target(text, "run_shapes")


def test_an_unknown_third_party_import_names_the_file(tree):
    write(tree, {"shapes/plot.py": "import seaborn\n"})
    with pytest.raises(build_file.BuildFileError, match=r"shapes/plot.py imports 'seaborn': .* THIRD_PARTY"):
        build_file.generate(str(tree))


def test_a_cycle_between_targets_is_named(tree):
    write(tree, {"colours/__init__.py": "import shapes\n", "shapes/area.py": "import colours\n"})
    with pytest.raises(build_file.BuildFileError, match=r"A dependency cycle between targets: (colours -> shapes -> "
                                                        r"colours|shapes -> colours -> shapes)"):
        build_file.generate(str(tree))


def test_two_targets_of_one_name_are_named(tree):
    write(tree, {"shapes_draw.py": "if __name__ == '__main__':\n    pass\n"})
    with pytest.raises(build_file.BuildFileError, match=r"Two targets would be named 'shapes_draw': one for "
                                                        r"(shapes/draw.py, one for shapes_draw.py|shapes_draw.py, "
                                                        r"one for shapes/draw.py)"):
        build_file.generate(str(tree))


def test_check_reports_a_difference_and_writing_makes_it_pass(tree, capsys):
    assert build_file.main(["--root", str(tree)]) == 0
    assert build_file.main(["--root", str(tree), "--check"]) == 0
    write(tree, {"shapes/extra.py": "import scipy\n"})
    assert build_file.main(["--root", str(tree), "--check"]) == 1
    captured = capsys.readouterr()
    assert '+        "shapes/extra.py",' in captured.out and "run `make build-file`" in captured.err


def test_the_committed_build_is_what_the_tool_writes():
    with open(os.path.join(ROOT, "BUILD"), encoding="utf-8") as f:
        assert f.read() == build_file.generate(ROOT), "BUILD is stale: run `make build-file`."

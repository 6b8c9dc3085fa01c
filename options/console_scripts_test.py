"""console_scripts: an entry point runs as `python <root>/<name>.py` would, not as bin/'s namesake."""

import inspect
import json
import sys

import pytest

from options import console_scripts

# Writes what it saw to argv[1]: its __name__, argv, sys.path[0].
_ENTRY = '''
import json, sys
if __name__ == "__main__":
    with open(sys.argv[1], "w") as f:
        json.dump({"name": __name__, "argv": sys.argv, "path0": sys.path[0]}, f)
'''


def test_the_entry_point_runs_as_main_with_the_command_line(tmp_path, monkeypatch):
    root, bin_dir = tmp_path / "site-packages", tmp_path / "bin"
    root.mkdir()
    bin_dir.mkdir()
    (root / "hello.py").write_text(_ENTRY)
    # The console script: same name, in bin/, which Python put first on sys.path.
    (bin_dir / "hello.py").write_text("raise AssertionError('the console script ran itself')\n")
    out = tmp_path / "seen.json"
    argv = [str(bin_dir / "hello.py"), str(out), "--flag=1"]
    monkeypatch.setattr(sys, "argv", list(argv))
    monkeypatch.setattr(sys, "path", [str(bin_dir)] + sys.path[1:])

    console_scripts.run_entry_point("hello", root=str(root))

    seen = json.loads(out.read_text())
    assert seen == {"name": "__main__", "argv": [str(root / "hello.py"), str(out), "--flag=1"],
                    "path0": str(root)}
    assert sys.argv == argv  # Restored after the run.


def test_a_missing_entry_point_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.py is not installed beside the packages: no .*nothing.py"):
        console_scripts.run_entry_point("nothing", root=str(tmp_path))


def test_each_console_script_runs_the_entry_point_of_its_name(monkeypatch):
    launched = []
    monkeypatch.setattr(console_scripts, "run_entry_point", launched.append)
    names = [name for name, value in vars(console_scripts).items()
             if inspect.isfunction(value) and value.__module__ == console_scripts.__name__
             and name != "run_entry_point"]
    for name in names:
        getattr(console_scripts, name)()
    assert launched == names and len(names) >= 10

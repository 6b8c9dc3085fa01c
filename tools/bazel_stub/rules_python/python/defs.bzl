"""Offline stand-in for @rules_python//python:defs.bzl, used by tools/bazel_check.sh.

py_library and py_binary are Bazel's native rules as they are. py_test runs its
one source file under pytest (the project's tests are pytest modules with no
`__main__` block: run as a plain script they would pass without running a
single test function).
"""

_RUNNER = "@rules_python//python:pytest_runner.py"

def py_library(**kwargs):
    native.py_library(**kwargs)

def py_binary(**kwargs):
    native.py_binary(**kwargs)

def _label(src):
    if src.startswith((":", "//", "@")):
        return src
    return ":" + src

def py_test(name, srcs = [], main = None, args = [], **kwargs):
    if main != None or len(srcs) != 1:
        native.py_test(name = name, srcs = srcs, main = main, args = args, **kwargs)
        return
    native.py_test(
        name = name,
        srcs = srcs + [_RUNNER],
        main = _RUNNER,
        args = ["$(rootpath %s)" % _label(srcs[0])] + args,
        **kwargs
    )

"""Offline stand-in for @cython//Tools:rules.bzl, used by tools/bazel_check.sh.

pyx_library compiles nothing here: its .pyx/.pxd sources become the data of a
py_library (any .py sources stay srcs), so Bazel still checks that every named
file exists and that every dep resolves. The extension modules that
`make setup` builds in place next to the .pyx sources (ignored by git) join the
data when they are there, so that tests of code needing them can run.
"""

def _built_in_place(pyx):
    stem = pyx[:-len(".pyx")]
    return native.glob([stem + ".so", stem + ".*.so"])

def pyx_library(name, srcs = [], deps = [], py_deps = [], data = [], **kwargs):
    extensions = []
    for src in srcs:
        if src.endswith(".pyx"):
            extensions += _built_in_place(src)
    native.py_library(
        name = name,
        srcs = [src for src in srcs if src.endswith(".py")],
        data = [src for src in srcs if not src.endswith(".py")] + extensions + data,
        deps = deps + py_deps,
        **kwargs
    )

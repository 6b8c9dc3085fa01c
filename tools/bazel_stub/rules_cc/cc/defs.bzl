"""Offline stand-in for @rules_cc//cc:defs.bzl, used by tools/bazel_check.sh.

Bazel 4's own @bazel_tools//tools/cpp (the C++ toolchain that py_binary and
py_test resolve) loads these names from @rules_cc, which Bazel would download
(Debian's bazel-rules-cc is a later release that Bazel 4 cannot load). They are
Bazel's native rules as they are.
"""

def cc_binary(**kwargs):
    native.cc_binary(**kwargs)

def cc_import(**kwargs):
    native.cc_import(**kwargs)

def cc_library(**kwargs):
    native.cc_library(**kwargs)

def cc_proto_library(**kwargs):
    native.cc_proto_library(**kwargs)

def cc_test(**kwargs):
    native.cc_test(**kwargs)

def cc_toolchain(**kwargs):
    native.cc_toolchain(**kwargs)

def cc_toolchain_suite(**kwargs):
    native.cc_toolchain_suite(**kwargs)

def objc_import(**kwargs):
    native.objc_import(**kwargs)

def objc_library(**kwargs):
    native.objc_library(**kwargs)

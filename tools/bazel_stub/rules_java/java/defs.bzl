"""Offline stand-in for @rules_java//java:defs.bzl, used by tools/bazel_check.sh.

Bazel 4 loads @bazel_tools//tools/jdk (its registered Java toolchains, seen by
every toolchain resolution) and that package loads these names from
@rules_java, which Bazel would download. They are Bazel's native rules as they
are; nothing of this project builds Java.
"""

def java_binary(**kwargs):
    native.java_binary(**kwargs)

def java_import(**kwargs):
    native.java_import(**kwargs)

def java_library(**kwargs):
    native.java_library(**kwargs)

def java_plugin(**kwargs):
    native.java_plugin(**kwargs)

def java_proto_library(**kwargs):
    native.java_proto_library(**kwargs)

def java_runtime(**kwargs):
    native.java_runtime(**kwargs)

def java_test(**kwargs):
    native.java_test(**kwargs)

def java_toolchain(**kwargs):
    native.java_toolchain(**kwargs)

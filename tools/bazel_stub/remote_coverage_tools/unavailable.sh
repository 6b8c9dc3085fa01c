#!/bin/sh
# Stand-in coverage tool (tools/bazel_stub/remote_coverage_tools).
echo "remote_coverage_tools is an offline stand-in: bazel coverage is not available" >&2
exit 1

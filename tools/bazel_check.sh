#!/usr/bin/env bash
# Checks BUILD with Bazel, offline: every target loads, every dep (":name",
# "@pypi//pkg") resolves, every named file exists. With --test, also runs
# py_test targets under pytest with the project's .venv interpreter.
#
#   tools/bazel_check.sh                  bazel query + bazel build //...
#   tools/bazel_check.sh --test [LABEL..] also bazel test LABEL.. (default:
#                                         DEFAULT_TESTS, two quick tests)
#
# Needs Debian's Bazel 4 (apt-get install -y bazel-bootstrap); downloads
# nothing. The stand-ins in tools/bazel_stub/ serve @rules_python, @cython and
# what Bazel 4 itself would download (@rules_cc, @rules_java,
# @remote_coverage_tools); @pypi has one empty py_library per package of
# requirements.txt and of the interpreter's site-packages. Bazel runs in a
# mirror workspace of symlinks: no WORKSPACE goes into the tree, and .venv's
# own BUILD files stay out of //... . Everything is written under
# $BAZEL_CHECK_DIR, by default build/bazel_check/ (ignored; `make clean`
# removes it). Exits 1 when the check fails, 2 when it cannot run.
#
# Environment: BAZEL (default: bazel), BAZEL_CHECK_DIR, BAZEL_CHECK_PYTHON
# (interpreter of the tests, default: .venv/bin/python).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STUB_SRC="$ROOT/tools/bazel_stub"
WORK="${BAZEL_CHECK_DIR:-$ROOT/build/bazel_check}"
BAZEL="${BAZEL:-bazel}"
PYTHON_BIN="${BAZEL_CHECK_PYTHON:-$ROOT/.venv/bin/python}"
DEFAULT_TESTS=(//:pretraining_data_progress_test //:classifier_data_submission_test)

run_tests=0
tests=()
for arg in "$@"; do
  case "$arg" in
    --test) run_tests=1 ;;
    -h|--help) sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "bazel_check: unknown option $arg" >&2; exit 2 ;;
    *) tests+=("$arg") ;;
  esac
done
if ((${#tests[@]})) && ((!run_tests)); then
  echo "bazel_check: test labels given without --test" >&2
  exit 2
fi
((${#tests[@]})) || tests=("${DEFAULT_TESTS[@]}")

if ! command -v "$BAZEL" >/dev/null 2>&1; then
  echo "bazel_check: '$BAZEL' not found; install Debian's Bazel: apt-get install -y bazel-bootstrap" >&2
  exit 2
fi
if ((run_tests)) && [[ ! -x "$PYTHON_BIN" ]]; then
  echo "bazel_check: $PYTHON_BIN not found; run 'make setup' first" >&2
  exit 2
fi
case "$WORK" in
  /*) ;;
  *) WORK="$PWD/$WORK" ;;
esac
mkdir -p "$WORK"

# ---------------------------------------------------- stand-in repositories
STUBS="$WORK/repos"
rm -rf "$STUBS"
mkdir -p "$STUBS"
for repo in rules_python cython rules_cc rules_java remote_coverage_tools; do
  cp -R "$STUB_SRC/$repo" "$STUBS/$repo"
done
# Kept as *.stub in the tree so that neither Bazel nor pytest nor
# tests/build_file_test.py takes them for the project's own.
find "$STUBS" -name '*.stub' | while read -r file; do
  target="${file%.stub}"
  [[ "${target##*/}" == BUILD ]] && target="$target.bazel"
  mv "$file" "$target"
done

# @pypi//NAME for every requirement and, when the interpreter is there, every
# distribution installed in it (what a lock file compiled from requirements.txt
# pins, e.g. numpy through tensorflow). NAME as rules_python's pip hub spells
# it: lower case, runs of "-", "_", "." as one "_".
normalize() { tr '[:upper:]' '[:lower:]' | sed -E 's/[-_.]+/_/g' | sort -u; }
sed -e 's/#.*//' -e 's/[[:space:]]//g' -e 's/[][<>=!~;@,].*//' "$ROOT/requirements.txt" |
  { grep -v -e '^$' -e '^-' || true; } | normalize >"$WORK/requirements.names"
if [[ -x "$PYTHON_BIN" ]]; then
  "$PYTHON_BIN" -c 'import importlib.metadata as m
for d in m.distributions():
    print(d.metadata["Name"])' | normalize >"$WORK/installed.names"
else
  echo "bazel_check: note: no $PYTHON_BIN ('make setup'): @pypi has only requirements.txt's packages" >&2
  : >"$WORK/installed.names"
fi
sort -u "$WORK/requirements.names" "$WORK/installed.names" |
  while read -r pkg; do
    mkdir -p "$STUBS/pypi/$pkg"
    cat >"$STUBS/pypi/$pkg/BUILD.bazel" <<EOF
# Stand-in for the pip package $pkg (tools/bazel_check.sh): tests import the
# real one from the interpreter's site-packages.
package(default_visibility = ["//visibility:public"])

py_library(name = "$pkg")

alias(name = "pkg", actual = ":$pkg")
EOF
  done

# The tests' interpreter as the Python toolchain.
mkdir -p "$STUBS/venv_python"
cat >"$STUBS/venv_python/BUILD.bazel" <<EOF
load("@bazel_tools//tools/python:toolchain.bzl", "py_runtime_pair")

py_runtime(
    name = "py3",
    interpreter_path = "$PYTHON_BIN",
    python_version = "PY3",
)

py_runtime_pair(name = "runtimes", py3_runtime = ":py3")

toolchain(
    name = "toolchain",
    toolchain = ":runtimes",
    toolchain_type = "@bazel_tools//tools/python:toolchain_type",
)
EOF

for repo in "$STUBS"/*; do
  : >"$repo/WORKSPACE"
  [[ -e "$repo/BUILD.bazel" ]] || : >"$repo/BUILD.bazel"
done

# -------------------------------------------------------- mirror workspace
# One symlink per top-level entry of the tree, less .git, what git ignores
# (.venv, build/, ...) and Bazel's own files.
MIRROR="$WORK/workspace"
rm -rf "$MIRROR"
mkdir -p "$MIRROR"
shopt -s dotglob nullglob
for entry in "$ROOT"/*; do
  name="${entry##*/}"
  case "$name" in
    .git|.venv|venv|build|WORKSPACE|WORKSPACE.bazel|MODULE.bazel|MODULE.bazel.lock|.bazelrc|.bazelversion|.bazelignore|bazel-*) continue ;;
  esac
  if git -C "$ROOT" check-ignore -q -- "$name" 2>/dev/null; then
    continue
  fi
  ln -s "$entry" "$MIRROR/$name"
done
shopt -u dotglob nullglob

cat >"$MIRROR/WORKSPACE" <<EOF
# Written by tools/bazel_check.sh: offline stand-ins, nothing downloaded.
local_repository(name = "rules_python", path = "$STUBS/rules_python")
local_repository(name = "cython", path = "$STUBS/cython")
local_repository(name = "pypi", path = "$STUBS/pypi")
local_repository(name = "venv_python", path = "$STUBS/venv_python")
local_repository(name = "rules_cc", path = "$STUBS/rules_cc")
local_repository(name = "rules_java", path = "$STUBS/rules_java")
register_toolchains("@venv_python//:toolchain")
EOF

OVERRIDE="--override_repository=remote_coverage_tools=$STUBS/remote_coverage_tools"
cat >"$WORK/bazelrc" <<EOF
query $OVERRIDE
build $OVERRIDE
build --symlink_prefix=/
build --jobs=2 --local_cpu_resources=2
build --spawn_strategy=local
build --show_result=0
test --test_output=errors --local_test_jobs=1
# The interpreter's site-packages are outside what Bazel tracks: always run.
test --nocache_test_results
EOF

# -------------------------------------------------------------------- bazel
STARTUP=(
  --nohome_rc --noworkspace_rc "--bazelrc=$WORK/bazelrc"
  "--output_user_root=$WORK/out" --max_idle_secs=300
  --host_jvm_args=-Xmx2g --host_jvm_args=-XX:-UsePerfData
)
bazel_run() {
  (cd "$MIRROR" && "$BAZEL" "${STARTUP[@]}" "$@")
}
cleanup() {
  bazel_run shutdown >/dev/null 2>&1 || true
}
trap cleanup EXIT

# One line per kind of BUILD error, each name once.
summarize() {
  local kind pattern found
  for kind in "missing files:missing input file '[^']*'" \
    "missing targets:no such target '[^']*'" \
    "missing targets:rule '[^']*' does not exist" \
    "missing packages:no such package '[^']*'"; do
    pattern="${kind#*:}"
    found="$({ grep -oE "$pattern" "$1" || true; } | sed -E "s/^[^']*'([^']*)'.*/\1/" | sort -u | tr '\n' ' ')"
    if [[ -n "$found" ]]; then
      echo "bazel_check: BUILD names ${kind%%:*} $found" >&2
    fi
  done
}

step() {
  local name="$1"
  shift
  echo "bazel_check: $name" >&2
  local start=$SECONDS rc=0
  # Bazel's messages to the terminal and to step.log; stdout stays stdout.
  { bazel_run "$@" 2>&1 1>&3 3>&- | tee "$WORK/step.log" >&2; } 3>&1 || rc=$?
  if ((rc)); then
    summarize "$WORK/step.log"
    echo "bazel_check: FAILED: $name (bazel exit $rc); see Bazel's ERROR/FAIL lines above" >&2
    exit 1
  fi
  echo "bazel_check: ok: $name ($((SECONDS - start)) s)" >&2
}

# Direct deps and data only: deps(//...) would also load every implicit
# dependency of Bazel's rules (Windows launcher, Java tools, ...), which Bazel
# downloads; `bazel build` below resolves the ones really used.
step "query: BUILD loads, every @pypi package resolves" \
  query --keep_going --output=label '//... + labels(deps, //...) + labels(data, //...)' >"$WORK/deps.txt"
# @pypi labels that resolve only because the package is installed as a
# dependency of another, not because requirements.txt names it.
sed -n 's#^@pypi//\([^:]*\).*#\1#p' "$WORK/deps.txt" | sort -u >"$WORK/used.names"
echo "bazel_check: @pypi packages used: $(tr '\n' ' ' <"$WORK/used.names")" >&2
undeclared="$(comm -23 "$WORK/used.names" "$WORK/requirements.names" | tr '\n' ' ')"
if [[ -n "$undeclared" ]]; then
  echo "bazel_check: note: requirements.txt does not name ${undeclared}(installed only as a dependency of other packages)" >&2
fi

step "build //...: every dep is a target, every named file exists" build --keep_going //...
if ((run_tests)); then
  step "test ${tests[*]}" test "${tests[@]}"
fi
echo "bazel_check: passed" >&2

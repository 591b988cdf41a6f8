#!/usr/bin/env bash
# Install test: `cmake --install` the build into a temp prefix, then build examples/simple.c
# against it two ways -- (a) plain cc with pkg-config, (b) the standalone CMake project in
# examples/ through find_package(mla_var3) -- and run both. Exit 0 only if both built and ran;
# 77 (skipped) when pkg-config is missing.
# Args: $1 CLI path (unused but given to every shell test), $2 source dir, $3 build dir/tests.
set -u
SRC=${2:?source dir}
BUILD=$(cd "${3:?build dir}/.." && pwd)
if ! command -v pkg-config >/dev/null 2>&1; then
  echo "skipped: pkg-config is not installed (add it to scripts/setup_deps.sh)"
  exit 77
fi
CC=${CC:-cc}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mla_var3_install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
PREFIX=$TMP/prefix
fail=0

echo "== cmake --install $BUILD --prefix $PREFIX"
if ! cmake --install "$BUILD" --prefix "$PREFIX" >"$TMP/install.log" 2>&1; then
  cat "$TMP/install.log"
  echo "FAIL: cmake --install"
  exit 1
fi
for f in include/mla_var3.h bin/mla_var3; do
  if [ -e "$PREFIX/$f" ]; then echo "ok   $f"; else echo "FAIL missing $f"; fail=1; fi
done
LIBDIR=$(dirname "$(find "$PREFIX" -name 'libmla_var3.so' | head -n1)")
PCDIR=$(dirname "$(find "$PREFIX" -name 'mla_var3.pc' | head -n1)")
for f in "$LIBDIR/libmla_var3.so" "$LIBDIR/libmla_var3.a" "$PCDIR/mla_var3.pc" \
         "$PREFIX/share/mla_var3/devices.json"; do
  if [ -e "$f" ]; then echo "ok   ${f#$PREFIX/}"; else echo "FAIL missing ${f#$PREFIX/}"; fail=1; fi
done
if [ -z "$(find "$PREFIX" -name 'mla_var3Config.cmake')" ]; then echo "FAIL missing mla_var3Config.cmake"; fail=1; fi

# (a) pkg-config + cc, run with LD_LIBRARY_PATH
echo "== (a) cc simple.c \$(pkg-config --cflags --libs mla_var3)"
PCFLAGS=$(PKG_CONFIG_PATH="$PCDIR" pkg-config --cflags --libs mla_var3 2>&1)
echo "pkg-config: $PCFLAGS"
if $CC -std=c11 -Wall -Wextra -o "$TMP/simple_pc" "$SRC/examples/simple.c" $PCFLAGS >"$TMP/cc.log" 2>&1; then
  echo "ok   built with pkg-config"
  if LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$TMP/simple_pc"; then
    echo "ok   ran (pkg-config build)"
  else
    echo "FAIL pkg-config build exited $?"; fail=1
  fi
else
  cat "$TMP/cc.log"; echo "FAIL: cc with pkg-config"; fail=1
fi

# (b) the standalone CMake project through find_package(mla_var3)
echo "== (b) cmake examples/ -DCMAKE_PREFIX_PATH=$PREFIX"
if cmake -S "$SRC/examples" -B "$TMP/example-build" -DCMAKE_PREFIX_PATH="$PREFIX" \
         -DCMAKE_BUILD_TYPE=Release >"$TMP/cmake.log" 2>&1 &&
   cmake --build "$TMP/example-build" >>"$TMP/cmake.log" 2>&1; then
  echo "ok   built with find_package(mla_var3)"
  if "$TMP/example-build/simple"; then
    echo "ok   ran (CMake build)"
  else
    echo "FAIL CMake build exited $?"; fail=1
  fi
else
  cat "$TMP/cmake.log"; echo "FAIL: CMake example"; fail=1
fi

echo "== (c) the installed CLI finds the installed devices.json, relative to itself"
want="$PREFIX/bin/../share/mla_var3/devices.json"
got=$(env -u MLA_VAR3_DEVICES "$PREFIX/bin/mla_var3" devices 2>&1 | head -n1)
if [ "$got" = "device table: $want" ]; then
  echo "ok   $got"
else
  echo "FAIL expected 'device table: $want', got '$got'"; fail=1
fi

if [ $fail -eq 0 ]; then echo "install test: PASS"; else echo "install test: FAIL"; fi
exit $fail

#!/usr/bin/env bash
# Builds the cargo-fuzz targets (fuzz/, see docs/fuzzing.md) and runs each over its
# committed corpus for SECONDS (default 20), one after another. Prints one line per
# target, `fuzz target=T runs=N seconds=S crashes=C`, and exits non-zero if any
# target crashed (panic, sanitizer report, slow input, out of memory): the failing
# input is kept under fuzz/artifacts/T/ and the command to replay it is printed.
#
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
# FUZZ_ARGS adds libFuzzer flags to every run (e.g. FUZZ_ARGS="-max_len=65536").
set -euo pipefail
# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
SECONDS_PER_TARGET=${1:-20}
shift || true
TARGETS=("$@")
if [ ${#TARGETS[@]} -eq 0 ]; then
  TARGETS=(coopr_import macros environment_file admin_form_fields)
fi

# libFuzzer's instrumentation flags (-Zsanitizer, …) are nightly-only; the stable
# toolchain accepts them with RUSTC_BOOTSTRAP, so no nightly is needed.
export RUSTC_BOOTSTRAP=1
# Instrumented builds keep to a directory of their own (beside the workspace's
# builds, so CI's kept cache serves them too): sharing the workspace's would rebuild
# both every time.
FUZZ_TARGET_DIR=$CARGO_TARGET_DIR/fuzz
cd "$ROOT/fuzz"
cargo fuzz build --target-dir "$FUZZ_TARGET_DIR"

# New inputs go to a scratch corpus, so a run never changes the committed one
# (grow that on purpose: docs/fuzzing.md).
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
for target in "${TARGETS[@]}"; do
  log=$scratch/$target.log
  artifacts=$ROOT/fuzz/artifacts/$target
  mkdir -p "$scratch/$target" "$artifacts"
  before=$(find "$artifacts" -type f | wc -l)
  status=0
  # -timeout: an input that takes 10 s is a finding (a denial of service), not a
  # reason to wait; libFuzzer's own default is 20 minutes.
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of libFuzzer flags, split on purpose
  cargo fuzz run --target-dir "$FUZZ_TARGET_DIR" "$target" \
    "$scratch/$target" "$ROOT/fuzz/corpus/$target" -- \
    -max_total_time="$SECONDS_PER_TARGET" -timeout=10 -print_final_stats=1 ${FUZZ_ARGS:-} \
    >"$log" 2>&1 || status=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(( $(find "$artifacts" -type f | wc -l) - before ))
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  echo "fuzz target=$target runs=${runs:-0} seconds=$SECONDS_PER_TARGET crashes=$crashes"
  if [ "$crashes" -ne 0 ]; then
    failed=1
    # The report: the panic or sanitizer message, the input and how to replay it
    # (or, if it failed some other way, the end of its log).
    report=$(grep -E -A12 "panicked|==ERROR|ERROR: libFuzzer|deadly signal|timeout after" "$log" | head -40 || true)
    replay=$(sed -n '/Failing input:/,$p' "$log")
    if [ -n "$report$replay" ]; then printf '%s\n%s\n' "$report" "$replay"; else tail -20 "$log"; fi
  fi
done
exit "$failed"

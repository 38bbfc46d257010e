#!/bin/sh
# The demo's implementer: edits the worktree like a real agent would, then answers.
prompt=$(cat)
case "$prompt" in
*"This is a revision"*)
    # The maintainer's review asked for `wave NAME`: added, with its test.
    cat >> lib.sh <<'SH'

# wave NAME: prints a wave to NAME.
wave() {
    echo "o/ $1"
}
SH
    cat > tests/wave_test.sh <<'SH'
[ "$(wave Ada)" = "o/ Ada" ] || { echo "wave Ada gave: $(wave Ada)"; exit 1; }
SH
    echo '{"summary": "Added wave to lib.sh with a test in tests/wave_test.sh, as the review asked", "checkboxes_completed": ["feedback_1"]}'
    exit 0;;
esac
if [ "$RALPH_ROUND" = 1 ]; then
    # Round 1: the winning plan, implemented with a bug (no comma, no default name).
    cat >> lib.sh <<'SH'

# greet [NAME]: prints a greeting.
greet() {
    echo "Hello $1!"
}
SH
else
    cat >> lib.sh <<'SH'

# greet [NAME]: prints a greeting; NAME defaults to "world".
greet() {
    echo "Hello, ${1:-world}!"
}
SH
fi
cat > tests/greet_test.sh <<'SH'
[ "$(greet Ada)" = "Hello, Ada!" ] || { echo "greet Ada gave: $(greet Ada)"; exit 1; }
[ "$(greet)" = "Hello, world!" ] || { echo "greet gave: $(greet)"; exit 1; }
SH
echo '{"summary": "Added greet to lib.sh with a test in tests/greet_test.sh", "checkboxes_completed": ["req_1", "req_2"]}'

#!/bin/sh
# The demo's implementer: edits the worktree like a real agent would, then answers.
cat > /dev/null
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

[ "$(add 1 2)" = 3 ] || { echo "add 1 2 gave $(add 1 2)"; exit 1; }
[ "$(add -4 4)" = 0 ] || { echo "add -4 4 gave $(add -4 4)"; exit 1; }

#!/bin/sh
# Runs every test in tests/ against lib.sh; exits non-zero when one fails.
. ./lib.sh
status=0
for t in tests/*_test.sh; do
    if (. "$t"); then
        echo "ok   $t"
    else
        echo "FAIL $t"
        status=1
    fi
done
exit $status

#!/bin/sh
# A stand-in for the `corral` binary in the served crate's tests: it logs its command
# line on standard error and behaves as FAKE_CORRAL says.
echo "args: $*" >&2
case "$FAKE_CORRAL" in
    serve)
        echo "First start: sign in as admin with password secret-1  (shown only now; change it after signing in)"
        echo "Loaded the demo catalog"
        echo "Corral is running at http://127.0.0.1:9/"
        echo "printed once running"
        exec sleep 60
        ;;
    worker)
        echo "Corral worker running 2 task slot(s) for every tenant on host"
        exec sleep 60
        ;;
    exit)
        echo "error: no database here" >&2
        exit 3
        ;;
    *)
        exec sleep 60
        ;;
esac

# shellcheck shell=bash
# lib-data.sh -- the locking and stamp that make test and benchmark data safe to
# make from several runs at once; source it, do not run it.
#   data_begin NAME OUT VERSION   takes OUT.lock (waits for another maker), exits 0 when
#   OUT/.stamp already holds VERSION, else makes an empty TMP (removed on exit), cd's
#   there and sets T0; the caller fills TMP and moves it into place.
data_begin() {
    local name=$1
    exec 9>"$2.lock"
    flock 9
    if [ -f "$2/.stamp" ] && [ "$(cat "$2/.stamp")" = "$3" ]; then
        echo "$name: $2 is up to date ($3)"
        exit 0
    fi
    TMP=$(mktemp -d "$2.tmp.XXXXXX")
    # shellcheck disable=SC2064 # TMP is fixed now
    trap "rm -rf '$TMP'" EXIT
    chmod 755 "$TMP"
    cd "$TMP"
    T0=$SECONDS
}

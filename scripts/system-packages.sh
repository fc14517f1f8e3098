#!/usr/bin/env bash
# Install the Debian packages the tests use (scripts/system-packages.txt), or name the ones
# that cannot be had.  Idempotent: with everything present it asks apt nothing.  Never fails:
# a test whose package is missing skips with its name (tests/support/system_packages.py).
set -uo pipefail
cd "$(dirname "$0")/.."
LIST=scripts/system-packages.txt

present() {  # present CHECK: is what CHECK names there?
    case "$1" in
        command:*) command -v "${1#command:}" >/dev/null 2>&1 ;;
        file:*) [ -e "${1#file:}" ] ;;
        *) echo "system-packages: unknown check '$1' in $LIST" >&2; return 1 ;;
    esac
}

missing() {  # the packages whose check fails, one a line
    while read -r package check _; do
        case "$package" in ""|\#*) continue ;; esac
        present "$check" || echo "$package"
    done < "$LIST"
}

wanted=$(missing)
[ -z "$wanted" ] && exit 0

# apt-get as root, else through sudo when it asks no password; anything else only names them.
if [ "$(id -u)" = 0 ]; then
    APT=(apt-get)
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    APT=(sudo -n apt-get)
else
    APT=()
fi
if [ ${#APT[@]} -gt 0 ] && command -v apt-get >/dev/null 2>&1; then
    LOG=$(mktemp)
    updated=""
    for package in $wanted; do  # one at a time: a package apt cannot find must not stop the rest
        echo "system-packages: installing $package"
        until DEBIAN_FRONTEND=noninteractive "${APT[@]}" install -y -q --no-install-recommends "$package" >>"$LOG" 2>&1; do
            # A fresh machine may have no package lists yet: fetch them once, then try again.
            if [ -n "$updated" ]; then
                tail -n 3 "$LOG"
                break
            fi
            updated=yes
            DEBIAN_FRONTEND=noninteractive "${APT[@]}" update -q >>"$LOG" 2>&1
        done
    done
    rm -f "$LOG"
fi

still=$(missing)
if [ -n "$still" ]; then
    echo "system-packages: not installed (their tests will skip, naming them):" $still
    echo "system-packages: as root: apt-get install" $still
fi
exit 0

#!/usr/bin/env bash
# Make sure Debian's Chromium is at /usr/bin/chromium for the browser tests (tests/lessons/test_browser.py).
# Playwright drives this browser; its own browser download (`playwright install`) is never used.
# Never fails: without root or sudo it says how to install Chromium, and the browser tests skip
# (except in CI, where a missing browser fails them).
set -u
CHROMIUM=${COURSE_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
else
    SUDO=none
fi

if [ "$SUDO" != none ] && command -v apt-get >/dev/null 2>&1; then
    echo "Installing Debian's chromium for the browser tests (apt-get)..."
    if $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q \
        && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium; then
        [ -x "$CHROMIUM" ] && exit 0
    fi
    echo "ensure_chromium: installing chromium with apt-get failed." >&2
fi

cat >&2 <<MSG
ensure_chromium: Chromium is not at $CHROMIUM, and it could not be installed here.
  On Debian or Ubuntu:  sudo apt-get update && sudo apt-get install -y chromium
  Elsewhere, install Chromium and set COURSE_CHROMIUM=/path/to/chromium for the tests.
  Until then the browser tests (pytest -m browser, tests/lessons/test_browser.py) are skipped.
MSG
exit 0

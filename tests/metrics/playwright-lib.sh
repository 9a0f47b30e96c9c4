# tests/metrics/playwright-lib.sh — headless Chromium for shell tests
# (sourced after tests/lib.sh).
#
#   pw_require    make sure Debian's chromium (/usr/bin/chromium, scripts/setup
#                 installs it), node and playwright-core are there; installs
#                 playwright-core with npm into a cache outside the tree
#                 ($KAAS_NPM_CACHE, default ~/.cache/kaas/npm) the first
#                 time, under a lock, never a browser (npx playwright install
#                 cannot download one here: Debian's chromium is driven
#                 through executablePath).  Sets PW_DIR.  A missing piece is
#                 a skip (exit 77), which CI=true / KAAS_NO_SKIP=1 turn into
#                 a failure giving the reason.
PW_VERSION=1.65.2

pw_require() {
	PW_DIR=${KAAS_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kaas/npm}
	[ -x /usr/bin/chromium ] || kaas_skip "no /usr/bin/chromium (Debian's chromium package; scripts/setup installs it)"
	command -v node >/dev/null 2>&1 || kaas_skip "node is not installed (Debian's nodejs)"
	if [ ! -f "$PW_DIR/node_modules/playwright-core/package.json" ]; then
		command -v npm >/dev/null 2>&1 || kaas_skip "npm is not installed, and playwright-core is not in $PW_DIR"
		mkdir -p "$PW_DIR" || kaas_skip "cannot make $PW_DIR"
		(
			flock -w 300 9 || exit 1
			[ -f "$PW_DIR/node_modules/playwright-core/package.json" ] && exit 0
			echo "installing playwright-core $PW_VERSION into $PW_DIR (npm, once)" >&2
			PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 timeout 300 npm install --prefix "$PW_DIR" \
				--no-audit --no-fund --loglevel=error "playwright-core@$PW_VERSION" >&2
		) 9>"$PW_DIR/.lock" ||
			kaas_skip "npm install playwright-core@$PW_VERSION into $PW_DIR failed (offline?)"
	fi
	[ -f "$PW_DIR/node_modules/playwright-core/package.json" ] ||
		kaas_skip "playwright-core is not in $PW_DIR"
}

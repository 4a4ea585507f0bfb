# The two commands of the README:  make serve   (build and serve the course on 127.0.0.1)
#                                  make test    (the whole test suite, all layers)
# Both create .venv inside the repo and install what they need on first use.
# Deployment (README 部署):  SPECDEC_SITE_URL=https://HOST/PATH/ make site   -> build/site/
# A classroom on the LAN:    make serve HOST=0.0.0.0   (127.0.0.1 by default)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# npm puppeteer-core, which drives firefox-esr in the Firefox tests (git-ignored node_modules)
PUPPETEER := tests/support/node_modules/.package-lock.json

.PHONY: serve site site-url test test-fast bench quiz-export browser-deps clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

serve: $(STAMP)
	$(BIN)/python site/serve.py $(if $(HOST),--host $(HOST)) $(if $(PORT),--port $(PORT))

# the whole site for upload, built for SPECDEC_SITE_URL (the public URL, with its subpath): the
# 404 page's assets and the canonical links are absolute under it, so it cannot be left out
site: site-url $(STAMP)
	$(BIN)/python site/build.py

site-url:
	@case "$$SPECDEC_SITE_URL" in http://?*|https://?*) ;; \
	  *) echo "make site 組建要上傳的網站，先告訴它讀者打開的網址（含子路徑），例如" \
	          "SPECDEC_SITE_URL=https://你的帳號.github.io/specdec-lab/ make site（README 的「部署」）；" \
	          "現在是「$$SPECDEC_SITE_URL」" >&2; exit 2;; esac

test: $(STAMP) browser-deps $(PUPPETEER)
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m fast

# every lesson's quiz for Canvas (QTI 1.2 .zip) and Moodle (Moodle XML) -> build/quiz-export/
quiz-export: $(STAMP)
	$(BIN)/python site/quiz_export.py

bench: $(STAMP)
	$(BIN)/python benchmarks/monte_carlo.py

# Debian's Chromium, Firefox ESR and WebKitGTK (WebKitWebDriver + MiniBrowser, under Xvfb), CJK and emoji fonts, and Node.js with npm for the browser
# layer (never `playwright install`, no downloaded browser build)
browser-deps:
	@if command -v chromium >/dev/null && command -v firefox-esr >/dev/null && command -v npm >/dev/null \
	    && command -v WebKitWebDriver >/dev/null && command -v Xvfb >/dev/null \
	    && fc-list 2>/dev/null | grep -q "Noto Sans CJK" && fc-list 2>/dev/null | grep -q "Noto Color Emoji"; then :; \
	elif [ "$$(id -u)" = 0 ]; then \
	  DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium firefox-esr webkit2gtk-driver xvfb fonts-noto-cjk fonts-noto-color-emoji \
	    $$(command -v npm >/dev/null || echo nodejs npm); \
	else echo "瀏覽器測試需要 Debian 的 chromium、firefox-esr、webkit2gtk-driver、xvfb、fonts-noto-cjk、fonts-noto-color-emoji 與 Node.js（npm）：sudo apt-get install chromium firefox-esr webkit2gtk-driver xvfb fonts-noto-cjk fonts-noto-color-emoji nodejs npm" >&2; exit 1; fi

$(PUPPETEER): tests/support/package.json tests/support/package-lock.json
	cd tests/support && npm ci --no-audit --no-fund --loglevel=error

clean:
	rm -rf build .pytest_cache .hypothesis
